import path from "node:path"
import { Worktrees } from "../git/worktree.ts"
import { git, gitTry, identityConfig, revParse } from "../git/git.ts"
import { createTag, findByTrailer } from "./landing.ts"
import { MergeError } from "./merge-errors.ts"
import { namesBetween, requireRef } from "./merge-git.ts"
import { REVERT_TRAILER, type RevertInput, type RevertResult } from "./merge-types.ts"
import { finishCheckout, publish } from "./publish.ts"

/** Undoing a landed task by its air/done tag, in a scratch worktree; idempotent through its tag and its Air-Reverts trailer. */

export async function revertLocked(top: string, input: RevertInput): Promise<RevertResult> {
  const { taskId, integration } = input
  const round = input.round ?? 1
  const tag = Worktrees.revertedTag(taskId, round)
  const name = Worktrees.landing(taskId, round)
  const identity = await identityConfig(top)
  const done = await revParse(top, `refs/tags/${tag}^{commit}`)
  if (done) return { status: "already-reverted", commit: done, tag }
  const doneTag = Worktrees.doneTag(taskId, round)
  const merged = await revParse(top, `refs/tags/${doneTag}^{commit}`)
  if (!merged) throw new MergeError(taskId, `cannot revert: it was never merged (no tag ${doneTag})`)
  await requireRef(top, `refs/heads/${integration}`, taskId, `the integration branch ${integration} does not exist`)
  const landed = await findByTrailer(top, integration, REVERT_TRAILER, name)
  if (landed) {
    await finishCheckout(top, integration, landed, taskId)
    await createTag(top, tag, landed, `revert of ${taskId}`, identity)
    return { status: "already-reverted", commit: landed, tag }
  }
  const subject = (await git(top, ["log", "-1", "--format=%s", merged])).trim()

  for (let tries = 0; tries < 5; tries++) {
    const base = await requireRef(top, `refs/heads/${integration}`, taskId, `${integration} disappeared`)
    const scratch = path.join(Worktrees.worktreesDir(top), `_revert-${taskId}`)
    await Worktrees.dropDetached(top, scratch)
    await git(top, ["worktree", "add", "--detach", scratch, base])
    let commit: string
    try {
      const applied = await gitTry(scratch, ["revert", "--no-commit", merged], { config: identity })
      if (applied.code !== 0) {
        const files = (await git(scratch, ["diff", "--name-only", "--diff-filter=U", "-z"]))
          .split("\0")
          .filter((file) => file.length > 0)
        if (files.length === 0) throw new MergeError(taskId, `git revert failed: ${(applied.stderr || applied.stdout).trim()}`)
        return {
          status: "conflict",
          files,
          message:
            `task ${taskId}: reverting ${merged.slice(0, 12)} ("${subject}") conflicts with later work on ` +
            `${integration} in ${files.join(", ")}. Nothing changed; revert it by hand or with a fix task.`,
        }
      }
      await git(
        scratch,
        [
          "commit",
          "--quiet",
          "--allow-empty",
          "--no-verify",
          "-m",
          `Revert "${subject}"`,
          "-m",
          `This reverts commit ${merged} (task ${taskId}).`,
          "-m",
          `${REVERT_TRAILER}: ${name}`,
        ],
        { config: identity },
      )
      commit = (await git(scratch, ["rev-parse", "HEAD"])).trim()
    } finally {
      await Worktrees.dropDetached(top, scratch)
    }
    const touched = await namesBetween(top, base, commit)
    if (!(await publish(top, integration, base, commit, touched, taskId, `air: revert ${taskId}`))) continue
    await createTag(top, tag, commit, `revert of ${taskId}`, identity)
    return { status: "reverted", commit, tag }
  }
  throw new MergeError(taskId, `${integration} kept moving while reverting; try again`)
}
