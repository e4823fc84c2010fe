import { Worktrees } from "../git/worktree.ts"
import { MergeBuild } from "./merge-build.ts"
import { git, gitTry, gitYes, identityConfig, revParse } from "../git/git.ts"
import { createTag, findByTrailer } from "./landing.ts"
import { LocalChangesInTheWay, MergeError } from "./merge-errors.ts"
import { namesBetween, oneLine, requireRef } from "./merge-git.ts"
import { BATCH_TRAILER, type BatchInput, type BatchOutcome, type BatchResult, type BatchTask, TASK_TRAILER } from "./merge-types.ts"
import { finishCheckout, publish } from "./publish.ts"
import { abortLeftoverRebase, rebase } from "./rebase.ts"

/** A batch landing: each task rebased onto the head and squashed onto the chain, the whole built once, then published and tagged. */

/** One task of a batch, prepared: its branch rebased onto the head, its squash commit in the chain. */
export interface Link {
  task: BatchTask
  worktree: string
  tip: string
  rebased: boolean
  /** The squash commit: the task's change on the chain so far (the head, then the tasks before it). */
  commit: string
  /** Files it changes relative to the head. */
  touched: string[]
}

export async function batchLocked(top: string, input: BatchInput): Promise<BatchResult> {
  const { integration } = input
  const identity = await identityConfig(top)
  const outcomes: BatchOutcome[] = []
  const untagged: BatchTask[] = []
  for (const task of input.tasks) {
    const tag = Worktrees.doneTag(task.taskId, task.round ?? 1)
    const tagged = await revParse(top, `refs/tags/${tag}^{commit}`)
    if (tagged) {
      await MergeBuild.forgetGated(top, task.taskId)
      outcomes.push({ taskId: task.taskId, status: "already-merged", commit: tagged, tag })
    } else untagged.push(task)
  }
  if (untagged.length === 0) return { outcomes }
  await requireRef(top, `refs/heads/${integration}`, untagged[0]!.taskId, `the integration branch ${integration} does not exist`)

  // A crash after the integration branch moved but before the tags: recognise the squash commits.
  const unlanded: BatchTask[] = []
  for (const task of untagged) {
    const tag = Worktrees.doneTag(task.taskId, task.round ?? 1)
    // Only what came after the task branched can hold its landing: the search stops there, not at the root.
    const branched = await gitTry(top, ["merge-base", `refs/heads/${integration}`, `refs/heads/${Worktrees.branchName(task.taskId)}`])
    const since = branched.code === 0 ? branched.stdout.trim() || undefined : undefined
    const landed = await findByTrailer(top, integration, TASK_TRAILER, Worktrees.landing(task.taskId, task.round ?? 1), since)
    if (!landed) {
      unlanded.push(task)
      continue
    }
    const head = await requireRef(top, `refs/heads/${integration}`, task.taskId, `${integration} disappeared`)
    await finishCheckout(top, integration, head, task.taskId)
    await createTag(top, tag, landed, task.title, identity)
    await MergeBuild.forgetGated(top, task.taskId)
    outcomes.push({ taskId: task.taskId, status: "already-merged", commit: landed, tag })
  }
  // What only one task is to blame for (its branch gone, uncommitted work in its worktree) stops that task only.
  let waiting: BatchTask[] = []
  const worktrees = new Map<string, string>()
  for (const task of unlanded) {
    try {
      worktrees.set(task.taskId, await readyToMerge(top, task.taskId, integration))
      waiting.push(task)
    } catch (error) {
      if (!(error instanceof MergeError) || input.tasks.length === 1) throw error
      outcomes.push({ taskId: task.taskId, status: "blocked", error })
    }
  }

  for (let tries = 0; tries < 5 && waiting.length > 0; tries++) {
    const base = await requireRef(top, `refs/heads/${integration}`, waiting[0]!.taskId, `${integration} disappeared`)
    const chain: Link[] = []
    const later: BatchTask[] = []
    for (const task of waiting) {
      const link = await chainLink(top, input, task, worktrees.get(task.taskId)!, base, chain.at(-1)?.commit, identity)
      if (link.status === "linked") chain.push(link.link)
      else if (link.status === "conflict") outcomes.push({ taskId: task.taskId, ...link.conflict })
      // It conflicts only with a task before it in this batch: it merges after them, on their landing.
      else later.push(task)
    }
    waiting = chain.map((link) => link.task)
    for (const task of later) outcomes.push({ taskId: task.taskId, status: "deferred" })
    if (chain.length === 0) return { outcomes }

    const last = chain.at(-1)!
    const single = chain.length === 1
    const built = single
      ? await buildCandidate(top, { ...chain[0]!.task, integration, verify: input.verify }, { base, tip: last.tip, commit: last.commit, rebased: last.rebased, touched: last.touched })
      : await buildBatch(top, input, base, chain)
    if (built && !built.passed) {
      const rejected = { message: built.message, summary: built.summary, evidencePath: built.evidencePath }
      if (single) outcomes.push({ taskId: last.task.taskId, status: "rejected", ...rejected })
      return { outcomes, ...(single ? {} : { rejected: { taskIds: chain.map((link) => link.task.taskId), ...rejected } }) }
    }
    const head = single ? last.commit : await batchCommit(top, base, chain, identity)
    const touched = await namesBetween(top, base, head)
    const published = await publish(top, integration, base, head, touched, chain[0]!.task.taskId, single ? `air: squash-merge ${last.task.taskId}` : `air: merge batch ${waiting.map((t) => t.taskId).join(" ")}`).catch(
      (error: unknown) => {
        // The user's uncommitted work is in the way of one task's files: that task waits for them, not the batch's first.
        if (!(error instanceof LocalChangesInTheWay) || single) throw error
        const owner = chain.find((link) => link.touched.some((file) => error.files.includes(file)))
        throw owner ? new LocalChangesInTheWay(owner.task.taskId, error.checkout, error.files) : error
      },
    )
    if (!published) continue // the integration branch moved meanwhile: rebase onto the new tip
    for (const link of chain) {
      const tag = Worktrees.doneTag(link.task.taskId, link.task.round ?? 1)
      await createTag(top, tag, link.commit, oneLine(link.task.title) || `task ${link.task.taskId}`, identity)
      await MergeBuild.forgetGated(top, link.task.taskId)
      outcomes.push({ taskId: link.task.taskId, status: "merged", commit: link.commit, tag, rebased: link.rebased, built: built !== undefined, ...(single ? {} : { head }) })
    }
    return { outcomes }
  }
  if (waiting.length === 0) return { outcomes }
  throw new MergeError(waiting[0]!.taskId, `${integration} kept moving while merging; try again`)
}

/** The task's worktree, with no rebase left over and nothing uncommitted (that would not be part of the merge). */
async function readyToMerge(top: string, taskId: string, integration: string): Promise<string> {
  const branch = Worktrees.branchName(taskId)
  await requireRef(top, `refs/heads/${branch}`, taskId, `there is no branch ${branch} to merge`)
  const worktree = await taskWorktree(top, taskId, integration)
  await abortLeftoverRebase(worktree)
  const dirty = await Worktrees.uncommittedFiles(worktree, { untracked: false })
  if (dirty.length > 0) {
    throw new MergeError(
      taskId,
      `the worktree ${worktree} has uncommitted changes (${dirty.slice(0, 5).join(", ")}); they would not be ` +
        `part of the merge. Commit them on ${branch} (and pass the gates again) or discard them.`,
    )
  }
  return worktree
}

type LinkResult =
  | { status: "linked"; link: Link }
  | { status: "conflict"; conflict: { status: "conflict"; files: string[]; message: string } }
  /** Its change conflicts with a task before it in the batch, not with the head. */
  | { status: "later" }

/**
 * Rebases the task's branch onto the head (never onto another task's unlanded change: a batch that fails
 * must leave each branch mergeable alone) and makes its squash commit on top of the chain so far, whose
 * tree is the three-way merge of the chain and the branch over the head.
 */
async function chainLink(top: string, input: BatchInput, task: BatchTask, worktree: string, base: string, after: string | undefined, identity: string[]): Promise<LinkResult> {
  const { taskId } = task
  const { integration } = input
  const branch = Worktrees.branchName(taskId)
  const before = await requireRef(top, `refs/heads/${branch}`, taskId, `${branch} disappeared`)
  let rebased = false
  if (!(await gitYes(top, ["merge-base", "--is-ancestor", base, before]))) {
    const conflict = await rebase(taskId, worktree, base, branch, identity)
    if (conflict) {
      return {
        status: "conflict",
        conflict: {
          status: "conflict",
          files: conflict.files,
          message:
            `task ${taskId}: ${branch} does not rebase cleanly onto ${integration} (now at ${base.slice(0, 12)}): ` +
            `conflict in ${conflict.files.join(", ") || "(unknown files)"}.\n${conflict.detail}\n` +
            `Nothing was merged and the branch is unchanged. In ${worktree}: git rebase ${integration}, resolve the ` +
            `conflicts keeping both sides' intent, git rebase --continue, check that it builds and its tests pass, ` +
            `then report again.`,
        },
      }
    }
    rebased = true
  }
  const tip = await requireRef(top, `refs/heads/${branch}`, taskId, `${branch} disappeared`)
  // The squash commit takes the tip's tree whole: it must contain everything on the integration branch.
  if (!(await gitYes(top, ["merge-base", "--is-ancestor", base, tip]))) {
    throw new MergeError(taskId, `${branch} is not on top of ${integration} after the rebase; nothing was merged`)
  }
  let tree = `${tip}^{tree}`
  if (after) {
    // The chain and the branch meet at the head (their merge base): a clean three-way merge, or the task waits.
    const merged = await gitTry(top, ["merge-tree", "--write-tree", "--no-messages", after, tip])
    if (merged.code !== 0) return { status: "later" }
    tree = merged.stdout.split("\n")[0]!.trim()
  }
  const touched = await namesBetween(top, base, tip)
  const subject = oneLine(task.title) || `task ${taskId}`
  const commits = Number((await git(top, ["rev-list", "--count", `${base}..${tip}`])).trim())
  const body = [
    task.message?.trim(),
    `Squash-merged from ${branch} (${commits} commit${commits === 1 ? "" : "s"}).` +
      (touched.length === 0 ? ` Nothing left to change: ${integration} already had all of it.` : ""),
    `${TASK_TRAILER}: ${Worktrees.landing(taskId, task.round ?? 1)}`,
  ].filter((part): part is string => Boolean(part))
  const commit = (await git(top, ["commit-tree", tree, "-p", after ?? base, "-m", subject, ...body.flatMap((p) => ["-m", p])], { config: identity })).trim()
  return { status: "linked", link: { task, worktree, tip, rebased, commit, touched } }
}

/** A batch's tasks were never built together: the chain's last commit is, unless the batch changes nothing. */
async function buildBatch(top: string, input: BatchInput, base: string, chain: Link[]): Promise<MergeBuild.Verdict | undefined> {
  if (!input.verify || chain.every((link) => link.touched.length === 0)) return undefined
  const taskIds = chain.map((link) => link.task.taskId)
  try {
    return await input.verify({ top, taskId: taskIds[0]!, taskIds, integration: input.integration, base, commit: chain.at(-1)!.commit })
  } catch (error) {
    if (error instanceof MergeError) throw error
    throw new MergeError(taskIds[0]!, `the merge build could not run: ${(error as Error).message}; nothing was merged`, "Refused", error)
  }
}

/**
 * What the integration branch moves to when a batch lands: a merge commit of the head and the chain of
 * the tasks' squash commits, with the chain's tree. So the branch's first-parent history holds only trees
 * that were built and tested, while each task keeps its own commit (tagged, revertable on its own).
 */
async function batchCommit(top: string, base: string, chain: Link[], identity: string[]): Promise<string> {
  const ids = chain.map((link) => link.task.taskId)
  const subject = `Merge ${ids.length} tasks, built and tested together: ${ids.join(", ")}`
  const body = chain.map((link) => `${link.task.taskId}: ${oneLine(link.task.title)}`).join("\n")
  const last = chain.at(-1)!.commit
  return (await git(top, ["commit-tree", `${last}^{tree}`, "-p", base, "-p", last, "-m", subject, "-m", body, "-m", `${BATCH_TRAILER}: ${ids.join(" ")}`], { config: identity })).trim()
}

/**
 * Builds and tests the candidate unless its tree is the one the task's gates built: the tree recorded when
 * they passed, or (no record) the branch as it was, not rebased. A change that adds nothing is not built.
 * Undefined when nothing was built.
 */
async function buildCandidate(
  top: string,
  input: { taskId: string; integration: string; verify?: MergeBuild.Verify | undefined },
  c: { base: string; tip: string; commit: string; rebased: boolean; touched: string[] },
): Promise<MergeBuild.Verdict | undefined> {
  if (!input.verify || c.touched.length === 0) return undefined
  const gated = await MergeBuild.gatedTree(top, input.taskId)
  const tree = (await git(top, ["rev-parse", `${c.tip}^{tree}`])).trim()
  if (gated ? gated === tree : !c.rebased) return undefined
  try {
    const verdict = await input.verify({ top, taskId: input.taskId, integration: input.integration, base: c.base, commit: c.commit })
    // This tree is now built: a merge redone on it (a lock timeout, local changes in the way) need not build it again.
    if (verdict.passed) await MergeBuild.recordBuilt(top, input.taskId, c.tip)
    return verdict
  } catch (error) {
    if (error instanceof MergeError) throw error
    throw new MergeError(input.taskId, `the merge build could not run: ${(error as Error).message}; nothing was merged`, "Refused", error)
  }
}

/**
 * The task's worktree (even if its HEAD wandered off the branch: the rebase switches it back), re-created
 * on its branch if it was removed (a rebase needs a working tree).
 */
async function taskWorktree(top: string, taskId: string, integration: string): Promise<string> {
  const found = await Worktrees.find(top, taskId)
  if (found) return found.path
  const elsewhere = await Worktrees.checkoutOf(top, Worktrees.branchName(taskId))
  if (elsewhere) return elsewhere
  return (await Worktrees.create(top, taskId, integration)).path
}
