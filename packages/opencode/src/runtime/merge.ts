import { mkdir, rm, stat } from "node:fs/promises"
import path from "node:path"
import { type MergeErrorTag } from "./errors.ts"
import { acquireLock, type HeldLock, LockTimeout as RuntimeLockTimeout } from "./lock.ts"
import { Serial } from "./serial.ts"
import { git, GitCommandError, gitTry, gitYes, identityConfig } from "./git.ts"
import { Worktrees } from "./worktree.ts"
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
    Worktrees.assertTaskId(input.taskId)
    assertBranchName(input.integration, input.taskId)
    return queued(input.root, async () => {
      const top = await Worktrees.repoRoot(input.root)
      await Worktrees.ensureExcluded(top)
      return withLockFile(top, input.taskId, `merge of ${input.taskId}`, input.lockTimeoutMs, () =>
        classified(input.taskId, () => mergeLocked(top, input)),
      )
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

  async function mergeLocked(top: string, input: MergeInput): Promise<MergeResult> {
    const { taskId, integration } = input
    const round = input.round ?? 1
    const tag = Worktrees.doneTag(taskId, round)
    const name = Worktrees.landing(taskId, round)
    const branch = Worktrees.branchName(taskId)
    const identity = await identityConfig(top)

    const tagged = await revParse(top, `refs/tags/${tag}^{commit}`)
    if (tagged) {
      await MergeBuild.forgetGated(top, taskId)
      return { status: "already-merged", commit: tagged, tag }
    }

    await requireRef(top, `refs/heads/${integration}`, taskId, `the integration branch ${integration} does not exist`)
    // A crash after the integration branch moved but before the tag: recognise the squash commit.
    const landed = await findByTrailer(top, integration, TASK_TRAILER, name)
    if (landed) {
      await finishCheckout(top, integration, landed, taskId)
      await createTag(top, tag, landed, input.title, identity)
      await MergeBuild.forgetGated(top, taskId)
      return { status: "already-merged", commit: landed, tag }
    }

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

    let rebased = false
    for (let tries = 0; tries < 5; tries++) {
      const base = await requireRef(top, `refs/heads/${integration}`, taskId, `${integration} disappeared`)
      const before = await requireRef(top, `refs/heads/${branch}`, taskId, `${branch} disappeared`)
      if (!(await gitYes(top, ["merge-base", "--is-ancestor", base, before]))) {
        const conflict = await rebase(taskId, worktree, base, branch, identity)
        if (conflict) {
          return {
            status: "conflict",
            files: conflict.files,
            message:
              `task ${taskId}: ${branch} does not rebase cleanly onto ${integration} (now at ${base.slice(0, 12)}): ` +
              `conflict in ${conflict.files.join(", ") || "(unknown files)"}.\n${conflict.detail}\n` +
              `Nothing was merged and the branch is unchanged. In ${worktree}: git rebase ${integration}, resolve the ` +
              `conflicts keeping both sides' intent, git rebase --continue, check that it builds and its tests pass, ` +
              `then report again.`,
          }
        }
        rebased = true
      }
      const tip = await requireRef(top, `refs/heads/${branch}`, taskId, `${branch} disappeared`)
      // The squash commit takes the tip's tree whole: it must contain everything on the integration branch.
      if (!(await gitYes(top, ["merge-base", "--is-ancestor", base, tip]))) {
        throw new MergeError(taskId, `${branch} is not on top of ${integration} after the rebase; nothing was merged`)
      }
      const touched = await namesBetween(top, base, tip)
      const subject = oneLine(input.title) || `task ${taskId}`
      const commits = Number((await git(top, ["rev-list", "--count", `${base}..${tip}`])).trim())
      const body = [
        input.message?.trim(),
        `Squash-merged from ${branch} (${commits} commit${commits === 1 ? "" : "s"}).` +
          (touched.length === 0 ? ` Nothing left to change: ${integration} already had all of it.` : ""),
        `${TASK_TRAILER}: ${name}`,
      ].filter((part): part is string => Boolean(part))
      const commit = (
        await git(top, ["commit-tree", `${tip}^{tree}`, "-p", base, "-m", subject, ...body.flatMap((p) => ["-m", p])], {
          config: identity,
        })
      ).trim()
      const built = await buildCandidate(top, input, { base, tip, commit, rebased, touched })
      if (built && !built.passed) return { status: "rejected", message: built.message, summary: built.summary, evidencePath: built.evidencePath }
      const published = await publish(top, integration, base, commit, touched, taskId, `air: squash-merge ${taskId}`)
      if (!published) continue // the integration branch moved meanwhile: rebase onto the new tip
      await createTag(top, tag, commit, subject, identity)
      await MergeBuild.forgetGated(top, taskId)
      return { status: "merged", commit, tag, rebased, built: built !== undefined }
    }
    throw new MergeError(taskId, `${integration} kept moving while merging; try again`)
  }

  /**
   * Builds and tests the candidate unless its tree is the one the task's gates built: the tree recorded when
   * they passed, or (no record) the branch as it was, not rebased. A change that adds nothing is not built.
   * Undefined when nothing was built.
   */
  async function buildCandidate(
    top: string,
    input: MergeInput,
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
      if (await exists(path.resolve(worktree, dir.trim()))) return true
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
      await dropScratch(top, scratch)
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
        await dropScratch(top, scratch)
      }
      const touched = await namesBetween(top, base, commit)
      if (!(await publish(top, integration, base, commit, touched, taskId, `air: revert ${taskId}`))) continue
      await createTag(top, tag, commit, `revert of ${taskId}`, identity)
      return { status: "reverted", commit, tag }
    }
    throw new MergeError(taskId, `${integration} kept moving while reverting; try again`)
  }

  async function dropScratch(top: string, scratch: string): Promise<void> {
    if (await exists(scratch)) {
      const removed = await gitTry(top, ["worktree", "remove", "--force", scratch])
      if (removed.code !== 0) await rm(scratch, { recursive: true, force: true })
    }
    await gitTry(top, ["worktree", "prune"])
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

  /** The newest first-parent commit on `branch` whose message has the line `<trailer>: <taskId>`. */
  async function findByTrailer(top: string, branch: string, trailer: string, name: string) {
    // A basic regular expression: "+" is literal there ("\\+" would be GNU's one-or-more).
    const pattern = `^${trailer}: ${name.replace(/[.[\]*^$\\]/g, "\\$&")}$`
    const out = await git(top, [
      "log",
      "--first-parent",
      "--format=%H",
      "--max-count=1",
      `--grep=${pattern}`,
      `refs/heads/${branch}`,
    ])
    return out.trim() || undefined
  }

  async function namesBetween(top: string, from: string, to: string): Promise<string[]> {
    const out = await git(top, ["diff", "--name-only", "--no-renames", "-z", from, to])
    return out.split("\0").filter((file) => file.length > 0)
  }

  async function revParse(dir: string, rev: string): Promise<string | undefined> {
    const result = await gitTry(dir, ["rev-parse", "--verify", "--quiet", rev])
    return result.code === 0 ? result.stdout.trim() : undefined
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

  async function exists(file: string): Promise<boolean> {
    try {
      await stat(file)
      return true
    } catch {
      return false
    }
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

  /** Holds `<root>/.air/local/state/merge.lock` (the one lock, `src/runtime/lock.ts`) around `work`. */
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
