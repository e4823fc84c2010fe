import { existsSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import path from "node:path"
import { type MergeErrorTag } from "../errors.ts"
import { acquireLock, type HeldLock, LockTimeout as RuntimeLockTimeout } from "../store/lock.ts"
import { Serial } from "../store/serial.ts"
import { git, GitCommandError, gitTry, gitYes, identityConfig, revParse } from "../git/git.ts"
import { Worktrees } from "../git/worktree.ts"
import { MergeBuild } from "./merge-build.ts"

/**
 * The merge queue: one merge at a time per project, each a rebase of the task branch onto the integration
 * tip, then a squash commit on the integration branch and a tag `air/done/<task-id>`.
 *
 * - Serialised twice: an in-process promise chain per project root, and a lock file
 *   (`.air/local/state/merge.lock`) that also keeps other processes out.
 * - Idempotent: a task whose tag exists is `already-merged`; a squash commit that reached the integration
 *   branch before a crash (found by its `Air-Task:` trailer) is recognised, tagged, and not made twice.
 * - Work is never lost: a conflict aborts the rebase and leaves the branch and worktree as they were; the
 *   branch is removed only by `Worktrees.remove`, after `merged`.
 * - The user's checkout of the integration branch is updated in place (index and files, like a fast-forward),
 *   and a merge that would overwrite their uncommitted changes is refused before anything moves.
 * - What lands is what was built: given `verify`, a candidate whose tree the task's gates did not build (the
 *   branch was rebased onto a newer head) is built and tested first (merge-build.ts); a failure is `rejected`
 *   and nothing moves.
 */
export namespace MergeQueue {
  export const LOCK_PATH = ".air/local/state/merge.lock"
  export const TASK_TRAILER = "Air-Task"
  export const REVERT_TRAILER = "Air-Reverts"
  export const BATCH_TRAILER = "Air-Batch"

  export interface MergeInput {
    root: string
    taskId: string
    /** The integration branch (a branch name, not a sha). */
    integration: string
    /** The squash commit's subject and the tag's message. */
    title: string
    /** Which landing of the task this is: 1, or more when a plan delta reverted the earlier ones. */
    round?: number
    /** The squash commit's body. */
    message?: string
    /** How long to wait for another process's merge lock; default 2 minutes. */
    lockTimeoutMs?: number
    /** Builds and tests a candidate the gates did not build (merge-build.ts); absent: nothing is built. */
    verify?: MergeBuild.Verify
  }

  /** One task of a batch. */
  export interface BatchTask {
    taskId: string
    title: string
    round?: number
    message?: string
  }

  export interface BatchInput {
    root: string
    integration: string
    /** In the order they land. */
    tasks: BatchTask[]
    lockTimeoutMs?: number
    verify?: MergeBuild.Verify
  }

  export type BatchOutcome = { taskId: string } & (
    | { status: "merged"; commit: string; tag: string; rebased: boolean; built: boolean; head?: string }
    | { status: "already-merged"; commit: string; tag: string }
    | { status: "conflict"; files: string[]; message: string }
    /** A batch of one that failed its merge build. */
    | { status: "rejected"; message: string; summary: string; evidencePath: string }
    /** Something only this task is to blame for stopped it; the rest of the batch went on. */
    | { status: "blocked"; error: MergeError }
    /** Its change conflicts with a task before it in the batch: it merges after them, alone. */
    | { status: "deferred" }
  )

  export interface BatchResult {
    outcomes: BatchOutcome[]
    /** The tasks built together failed: nothing of them landed, none is blamed yet. */
    rejected?: { taskIds: string[]; message: string; summary: string; evidencePath: string }
  }

  export type MergeResult =
    | {
        status: "merged"
        commit: string
        tag: string
        /** True when the branch was rebased first (its gates ran on a different base; the tree may differ). */
        rebased: boolean
        /** True when the candidate was built and tested before it landed (its tree was not the gated one). */
        built: boolean
      }
    | { status: "conflict"; files: string[]; message: string }
    /** The candidate (the task's change on the current head) failed its build or tests: nothing moved. */
    | { status: "rejected"; message: string; summary: string; evidencePath: string }
    | { status: "already-merged"; commit: string; tag: string }

  export interface RevertInput {
    root: string
    taskId: string
    /** The landing to undo; 1 by default. */
    round?: number
    integration: string
    lockTimeoutMs?: number
  }

  export type RevertResult =
    | { status: "reverted"; commit: string; tag: string }
    | { status: "conflict"; files: string[]; message: string }
    | { status: "already-reverted"; commit: string; tag: string }

  /**
   * The merge cannot start or finish; `tag` tells the interpreter which event it is: `LocalChangesInTheWay`,
   * `LockTimeout`, `IndexLocked`, `GitFailed`, or `Refused` (a reason a person must fix; the message says which).
   * Nothing moved on the integration branch.
   */
  export class MergeError extends Error {
    readonly _tag = "MergeError"
    constructor(
      readonly taskId: string,
      message: string,
      readonly tag: MergeErrorTag = "Refused",
      cause?: unknown,
    ) {
      super(`task ${taskId}: ${message}`, cause === undefined ? undefined : { cause })
      this.name = "MergeError"
    }
  }

  /** The merge would overwrite uncommitted changes in the user's checkout. Nothing moved. */
  export class LocalChangesInTheWay extends MergeError {
    constructor(
      taskId: string,
      readonly checkout: string,
      readonly files: string[],
    ) {
      super(
        taskId,
        `not merged: it changes ${files.join(", ")}, which ${files.length === 1 ? "has" : "have"} ` +
          `uncommitted changes in ${checkout}. Commit or stash them there, then merge again; the task branch is ` +
          `unchanged and waiting.`,
        "LocalChangesInTheWay",
      )
      this.name = "LocalChangesInTheWay"
    }
  }

  /** Another process holds the merge lock past the timeout. */
  export class LockTimeout extends MergeError {
    readonly lockPath: string
    constructor(taskId: string, cause: RuntimeLockTimeout) {
      super(taskId, `not merged: the merge lock ${cause.message}. The task waits; merge again when it is free.`, "LockTimeout", cause)
      this.lockPath = cause.path
      this.name = "MergeLockTimeout"
    }
  }

  /** A checkout's index is locked (`index.lock`): another git is running there, or one crashed. */
  export class IndexLocked extends MergeError {
    constructor(
      taskId: string,
      readonly lockFile: string,
      cause?: unknown,
    ) {
      super(
        taskId,
        `not merged: ${lockFile} exists: another git process is running in that checkout, or one crashed there. ` +
          `If no git is running, delete ${lockFile}, then merge again. Nothing moved.`,
        "IndexLocked",
        cause,
      )
      this.name = "IndexLocked"
    }
  }

  export async function merge(input: MergeInput): Promise<MergeResult> {
    const { outcomes } = await mergeBatch({ ...input, tasks: [input] })
    const outcome = outcomes[0]!
    switch (outcome.status) {
      case "merged":
        return { status: "merged", commit: outcome.commit, tag: outcome.tag, rebased: outcome.rebased, built: outcome.built }
      case "already-merged":
      case "conflict":
      case "rejected":
        const { taskId: _, ...rest } = outcome
        return rest
      case "blocked":
        throw outcome.error
      case "deferred":
        throw new MergeError(input.taskId, "deferred with nothing before it in its batch (a bug)")
    }
  }

  /**
   * Merges a batch: each task's change is put on the head in turn, the whole is built and tested once, and
   * only then does the integration branch move, to a commit holding them all. A batch that fails lands
   * nothing and blames no task (`rejected`; the Scheduler splits it). A MergeError thrown here concerns the
   * whole batch (the lock, the integration branch, the user's checkout): nothing moved.
   */
  export async function mergeBatch(input: BatchInput): Promise<BatchResult> {
    const lead = input.tasks[0]?.taskId ?? "(none)"
    for (const task of input.tasks) Worktrees.assertTaskId(task.taskId)
    assertBranchName(input.integration, lead)
    if (input.tasks.length === 0) return { outcomes: [] }
    const ids = input.tasks.map((task) => task.taskId).join(", ")
    return queued(input.root, async () => {
      const top = await Worktrees.repoRoot(input.root)
      await Worktrees.ensureExcluded(top)
      return withLockFile(top, lead, `merge of ${ids}`, input.lockTimeoutMs, () => classified(lead, () => batchLocked(top, input)))
    })
  }

  export async function revert(input: RevertInput): Promise<RevertResult> {
    Worktrees.assertTaskId(input.taskId)
    assertBranchName(input.integration, input.taskId)
    return queued(input.root, async () => {
      const top = await Worktrees.repoRoot(input.root)
      return withLockFile(top, input.taskId, `revert of ${input.taskId}`, input.lockTimeoutMs, () =>
        classified(input.taskId, () => revertLocked(top, input)),
      )
    })
  }

  // ---- merge ----

  /** One task of a batch, prepared: its branch rebased onto the head, its squash commit in the chain. */
  interface Link {
    task: BatchTask
    worktree: string
    tip: string
    rebased: boolean
    /** The squash commit: the task's change on the chain so far (the head, then the tasks before it). */
    commit: string
    /** Files it changes relative to the head. */
    touched: string[]
  }

  async function batchLocked(top: string, input: BatchInput): Promise<BatchResult> {
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

  /**
   * Rebases `branch` onto `onto` in the worktree (switching the worktree to the branch if its HEAD wandered);
   * on conflict aborts, so the branch is as before, and says where.
   */
  async function rebase(
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

  async function abortLeftoverRebase(worktree: string): Promise<void> {
    if (await rebaseInProgress(worktree)) await git(worktree, ["rebase", "--abort"])
  }

  // ---- revert ----

  async function revertLocked(top: string, input: RevertInput): Promise<RevertResult> {
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


  // ---- moving the integration branch ----

  /**
   * Moves `integration` from `base` to `commit` (compare-and-swap: false when it moved meanwhile) and brings
   * the checkout that has it (the user's working tree) along, as a fast-forward would. Refuses, before
   * moving anything, when that checkout has uncommitted changes to a file the new commit touches.
   */
  async function publish(
    top: string,
    integration: string,
    base: string,
    commit: string,
    touched: string[],
    taskId: string,
    reason: string,
  ): Promise<boolean> {
    const checkout = await Worktrees.checkoutOf(top, integration)
    if (checkout) {
      const dirty = new Set(await Worktrees.uncommittedFiles(checkout, { untracked: true }))
      const inTheWay = touched.filter((file) => dirty.has(file))
      if (inTheWay.length > 0) throw new LocalChangesInTheWay(taskId, checkout, inTheWay)
    }
    const swapped = await gitTry(top, ["update-ref", "-m", reason, `refs/heads/${integration}`, commit, base])
    if (swapped.code !== 0) {
      const now = await revParse(top, `refs/heads/${integration}`)
      if (now !== base) return false
      throw new MergeError(taskId, `could not move ${integration}: ${swapped.stderr.trim()}`)
    }
    if (checkout) {
      const updated = await gitTry(checkout, ["read-tree", "-m", "-u", base, commit])
      if (updated.code !== 0) {
        // Put the branch back: the user's files and index were not touched by the failed read-tree.
        await git(top, ["update-ref", "-m", `${reason} (rolled back)`, `refs/heads/${integration}`, base, commit])
        const detail = (updated.stderr || updated.stdout).trim()
        const locked = indexLockOf(detail)
        if (locked) throw new IndexLocked(taskId, locked)
        const files = [...detail.matchAll(/^\s+(\S.*)$/gm)].map((m) => m[1]!.trim())
        if (files.length > 0) throw new LocalChangesInTheWay(taskId, checkout, files)
        throw new MergeError(taskId, `could not update the checkout ${checkout}: ${detail}; nothing was merged`)
      }
    }
    return true
  }

  /**
   * After a crash between moving the branch and updating the user's checkout, the checkout's index still
   * holds the old tree: bring it to `commit` when (and only when) it is exactly at the parent.
   */
  async function finishCheckout(top: string, integration: string, commit: string, taskId: string): Promise<void> {
    const checkout = await Worktrees.checkoutOf(top, integration)
    if (!checkout) return
    const head = await revParse(checkout, "HEAD")
    if (head !== commit) return
    const parent = await revParse(top, `${commit}^1`)
    if (!parent) return
    const atParent = await gitYes(checkout, ["diff-index", "--cached", "--quiet", parent])
    const atCommit = await gitYes(checkout, ["diff-index", "--cached", "--quiet", commit])
    if (atParent && !atCommit) {
      const updated = await gitTry(checkout, ["read-tree", "-m", "-u", parent, commit])
      if (updated.code !== 0) {
        const locked = indexLockOf(updated.stderr)
        if (locked) throw new IndexLocked(taskId, locked)
        throw new MergeError(
          taskId,
          `${integration} holds the merge, but the checkout ${checkout} could not be brought up to date: ` +
            `${(updated.stderr || updated.stdout).trim()}`,
        )
      }
      await gitTry(checkout, ["update-index", "-q", "--refresh"])
    }
  }

  async function createTag(top: string, tag: string, commit: string, title: string, identity: string[]) {
    await git(top, ["tag", "-a", "-m", oneLine(title) || tag, tag, commit], { config: [...identity, "tag.gpgSign=false"] })
  }

  /**
   * The newest commit on `branch` (after `since`, when given) whose message has the line `<trailer>: <taskId>`:
   * a first-parent one, or a task's squash commit under a batch's merge commit.
   */
  async function findByTrailer(top: string, branch: string, trailer: string, name: string, since?: string) {
    // A basic regular expression: "+" is literal there ("\\+" would be GNU's one-or-more).
    const pattern = `^${trailer}: ${name.replace(/[.[\]*^$\\]/g, "\\$&")}$`
    const out = await git(top, [
      "log",
      "--format=%H",
      "--max-count=1",
      `--grep=${pattern}`,
      since ? `${since}..refs/heads/${branch}` : `refs/heads/${branch}`,
    ])
    return out.trim() || undefined
  }

  async function namesBetween(top: string, from: string, to: string): Promise<string[]> {
    const out = await git(top, ["diff", "--name-only", "--no-renames", "-z", from, to])
    return out.split("\0").filter((file) => file.length > 0)
  }

  async function requireRef(top: string, ref: string, taskId: string, problem: string): Promise<string> {
    const sha = await revParse(top, `${ref}^{commit}`)
    if (!sha) throw new MergeError(taskId, problem)
    return sha
  }

  function assertBranchName(name: string, taskId: string): void {
    if (!/^[A-Za-z0-9._/-]+$/.test(name) || name.startsWith("-") || name.includes("..")) {
      throw new MergeError(taskId, `${JSON.stringify(name)} is not a usable integration branch name`)
    }
  }

  function oneLine(text: string): string {
    return text.replace(/\s+/g, " ").trim()
  }

  // ---- serialisation ----

  /**
   * One merge at a time per project root in this process, in the order they were asked for. Keyed by the
   * root as given (resolved, not yet canonical: that needs git, and the queue must be joined synchronously
   * to keep the order); two spellings of one root still meet at the lock file.
   */
  const serial = new Serial()
  function queued<T>(root: string, work: () => Promise<T>): Promise<T> {
    return serial.run(path.resolve(root), work)
  }

  /** Holds `<root>/.air/local/state/merge.lock` (the one lock, `scheduler/runtime/lock.ts`) around `work`. */
  async function withLockFile<T>(top: string, taskId: string, what: string, timeoutMs = 120_000, work: () => Promise<T>): Promise<T> {
    const file = path.join(top, LOCK_PATH)
    await mkdir(path.dirname(file), { recursive: true })
    let lock: HeldLock
    try {
      lock = await acquireLock(file, { timeoutMs, what })
    } catch (error) {
      if (error instanceof RuntimeLockTimeout) throw new LockTimeout(taskId, error)
      throw error
    }
    try {
      return await work()
    } finally {
      lock.release()
    }
  }

  /** What went wrong in git, tagged: an index.lock left in a checkout is a person's to clear, the rest is GitFailed. */
  async function classified<T>(taskId: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      if (error instanceof MergeError) throw error
      if (error instanceof GitCommandError) {
        const locked = indexLockOf(error.stderr)
        if (locked) throw new IndexLocked(taskId, locked, error)
        throw new MergeError(taskId, `git failed while merging: ${error.message}`, "GitFailed", error)
      }
      throw error
    }
  }

  /** The index.lock path git names when another git process (or a crashed one) holds a checkout's index. */
  function indexLockOf(text: string): string | undefined {
    return /Unable to create '([^']*index\.lock)': File exists/.exec(text)?.[1]
  }
}
