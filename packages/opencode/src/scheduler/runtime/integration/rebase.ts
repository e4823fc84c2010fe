import { existsSync } from "node:fs"
import path from "node:path"
import { git, gitTry } from "../git/git.ts"
import { IndexLocked, MergeError } from "./merge-errors.ts"
import { indexLockOf } from "./merge-git.ts"

/** Rebasing a task branch in its worktree: a conflict aborts and says where, so the branch is as it was. */

/**
 * Rebases `branch` onto `onto` in the worktree (switching the worktree to the branch if its HEAD wandered);
 * on conflict aborts, so the branch is as before, and says where.
 */
export async function rebase(
  taskId: string,
  worktree: string,
  onto: string,
  branch: string,
  identity: string[],
): Promise<{ files: string[]; detail: string } | undefined> {
  const config = [...identity, "rebase.autoStash=false", "rebase.updateRefs=false", "rebase.autoSquash=false"]
  const result = await gitTry(worktree, ["rebase", onto, branch], { config })
  if (result.code === 0) return undefined
  if (!(await rebaseInProgress(worktree))) {
    const locked = indexLockOf(result.stderr)
    if (locked) throw new IndexLocked(taskId, locked)
    throw new MergeError(
      taskId,
      `the rebase of ${branch} onto ${onto.slice(0, 12)} could not start in ${worktree}: ` +
        `${(result.stderr || result.stdout).trim()}\nNothing was merged and the branch is unchanged.`,
    )
  }
  const files = (await git(worktree, ["diff", "--name-only", "--diff-filter=U", "-z"]))
    .split("\0")
    .filter((file) => file.length > 0)
  const detail = `${result.stdout}\n${result.stderr}`
    .split("\n")
    .filter((line) => /^CONFLICT|^error:|^Could not apply/.test(line))
    .slice(0, 8)
    .join("\n")
  await git(worktree, ["rebase", "--abort"])
  return { files, detail }
}

async function rebaseInProgress(worktree: string): Promise<boolean> {
  const out = await git(worktree, ["rev-parse", "--git-path", "rebase-merge", "--git-path", "rebase-apply"])
  for (const dir of out.split("\n").filter((line) => line.trim().length > 0)) {
    if (existsSync(path.resolve(worktree, dir.trim()))) return true
  }
  return false
}

export async function abortLeftoverRebase(worktree: string): Promise<void> {
  if (await rebaseInProgress(worktree)) await git(worktree, ["rebase", "--abort"])
}
