import { existsSync } from "node:fs"
import { mkdir, readFile, readdir, realpath, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { Serial } from "../store/serial.ts"
import { git, gitTry, gitYes, revParse } from "./git.ts"
import { idProblem } from "../../core/names.ts"
import { Submodules } from "./submodules.ts"
import { GitSync } from "./git-sync.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * Task worktrees: one git worktree per executor task, at `<root>/.air/local/worktrees/<task-id>` on branch
 * `air/<task-id>`, created from the integration branch. Parallel executors never share a working tree, and
 * a branch is deleted only once its merge is confirmed (ARCHITECTURE.md §5.3).
 */
export namespace Worktrees {
  /** Paths the Scheduler writes inside a repository, hidden through `.git/info/exclude` (never .gitignore). */
  export const EXCLUDES = [`${AirPaths.LOCAL}/`, ".air-build/"] as const

  export interface Worktree {
    taskId: string
    /** Absolute path of the task's working tree. */
    path: string
    /** `air/<task-id>` */
    branch: string
    /** The commit the branch grew from: its merge-base with the integration branch. */
    baseCommit: string
    /** What `create` had to repair first, said for a person (a `git worktree add` killed half-way). */
    recovered?: string
    /** Submodules that could not be checked out offline from the user's checkout, said for a person. */
    submodules?: string[]
  }

  export interface Listed {
    taskId: string
    path: string
    branch: string
    head: string
    /** git lists the worktree but its directory is gone. */
    missing: boolean
  }

  export type ChangeStatus = "added" | "modified" | "deleted" | "type-changed"
  export interface Change {
    path: string
    status: ChangeStatus
  }

  /** A task id that cannot be used in a path or a ref. Nothing was touched. */
  export class InvalidTaskId extends Error {
    readonly _tag = "InvalidTaskId"
    constructor(
      readonly taskId: string,
      readonly problem: string,
    ) {
      super(`task id ${JSON.stringify(taskId)} is not usable as a branch or directory name: ${problem}`)
      this.name = "InvalidTaskId"
    }
  }

  /** `remove` was asked to delete a branch whose work is not on the integration branch. Nothing was touched. */
  export class NotMerged extends Error {
    readonly _tag = "WorktreeNotMerged"
    constructor(
      readonly taskId: string,
      readonly branch: string,
      readonly tip: string,
      detail: string,
    ) {
      super(
        `task ${taskId}: refusing to remove ${branch} (tip ${tip.slice(0, 12)}): ${detail}. ` +
          `A task branch is deleted only after its merge is confirmed; merge it first (MergeQueue.merge).`,
      )
      this.name = "WorktreeNotMerged"
    }
  }

  /** The worktree cannot be created or used as it is on disk; the message says what to do. */
  export class WorktreeError extends Error {
    readonly _tag = "WorktreeError"
    constructor(
      readonly taskId: string,
      message: string,
    ) {
      super(`task ${taskId}: ${message}`)
      this.name = "WorktreeError"
    }
  }

  export function assertTaskId(taskId: string): void {
    const problem = idProblem(taskId)
    if (problem) throw new InvalidTaskId(taskId, problem)
  }

  export function branchName(taskId: string): string {
    assertTaskId(taskId)
    return `air/${taskId}`
  }

  /**
   * The name of one landing of a task: its id, or `<id>+<round>` from the second round on (a task reverted
   * by a plan delta and done again). "+" is never part of a task id, so the names cannot collide.
   */
  export function landing(taskId: string, round = 1): string {
    assertTaskId(taskId)
    if (!Number.isInteger(round) || round < 1) throw new InvalidTaskId(taskId, `round ${round} is not a positive whole number`)
    return round === 1 ? taskId : `${taskId}+${round}`
  }

  export function doneTag(taskId: string, round = 1): string {
    return `air/done/${landing(taskId, round)}`
  }

  export function revertedTag(taskId: string, round = 1): string {
    return `air/reverted/${landing(taskId, round)}`
  }

  export function worktreesDir(root: string): string {
    return AirPaths.worktrees(root)
  }

  export function pathFor(root: string, taskId: string): string {
    assertTaskId(taskId)
    return path.join(worktreesDir(root), taskId)
  }

  /**
   * Creates the task's worktree and branch from the tip of `base`, or returns the existing ones (a resume
   * after a crash reuses the task's work instead of starting over).
   */
  export async function create(root: string, taskId: string, base: string): Promise<Worktree> {
    assertTaskId(taskId)
    const top = await repoRoot(root)
    return serialise(top, async () => {
      await ensureExcluded(top)
      const branch = branchName(taskId)
      const target = pathFor(top, taskId)
      const baseCommit = await resolveCommit(top, base, taskId)
      const recovered = await recoverInterruptedAdd(top, taskId, target)
      const branchExists = await refExists(top, `refs/heads/${branch}`)
      let registered = (await worktreeEntries(top)).find((entry) => samePath(entry.path, target))
      const made = (wt: Worktree): Worktree => (recovered ? { ...wt, recovered } : wt)

      if (registered && !registered.missing && registered.branch === undefined && branchExists) {
        // A sandboxed command detaches HEAD while it runs (git-sync.ts); a process killed meanwhile
        // leaves it so. Settle it as the command's end would have: the branch takes the worker's commits.
        await GitSync.heal(target)
        registered = (await worktreeEntries(top)).find((entry) => samePath(entry.path, target))
      }
      if (registered && !registered.missing) {
        if (registered.branch !== `refs/heads/${branch}`) {
          throw new WorktreeError(
            taskId,
            `${target} is a worktree on ${registered.branch ?? "a detached HEAD"}, not on ${branch}. ` +
              `Remove it (git worktree remove ${target}) or check out ${branch} there.`,
          )
        }
        return made({ taskId, path: target, branch, baseCommit: await mergeBase(top, branch, baseCommit) })
      }
      if (registered?.missing) await git(top, ["worktree", "prune"])
      await clearLeftoverDir(target, taskId)
      await mkdir(path.dirname(target), { recursive: true })

      if (branchExists) {
        const checkedOut = (await worktreeEntries(top)).find((entry) => entry.branch === `refs/heads/${branch}`)
        if (checkedOut) {
          throw new WorktreeError(
            taskId,
            `${branch} is already checked out at ${checkedOut.path}; a task branch lives only in ${target}.`,
          )
        }
        await git(top, ["worktree", "add", target, branch])
        return made({ taskId, path: target, branch, baseCommit: await mergeBase(top, branch, baseCommit), ...(await submodulesIn(top, target)) })
      }
      await git(top, ["worktree", "add", "-b", branch, target, baseCommit])
      return made({ taskId, path: target, branch, baseCommit, ...(await submodulesIn(top, target)) })
    })
  }

  export interface RemoveOptions {
    /** The integration branch: a tip it contains counts as merged (besides the `air/done/<id>` tag). */
    integration?: string
    /** Which landing of the task the tag names (see `landing`); 1 by default. */
    round?: number
  }

  /**
   * Removes the task's worktree and branch once its merge is confirmed: the branch tip must be contained in
   * the integration branch, or the task must be tagged `air/done/<task-id>` on a commit with the same tree
   * as the tip (a squash merge of exactly this work). Otherwise `NotMerged`, and nothing is removed.
   * Removing what is already gone is not an error (`removed: false`).
   */
  export async function remove(
    root: string,
    taskId: string,
    options: RemoveOptions = {},
  ): Promise<{ removed: boolean }> {
    assertTaskId(taskId)
    const top = await repoRoot(root)
    return serialise(top, async () => {
      const branch = branchName(taskId)
      const target = pathFor(top, taskId)
      const tip = await revParse(top, `refs/heads/${branch}`)
      if (tip) await assertMerged(top, taskId, branch, tip, options.integration, options.round)

      const registered = (await worktreeEntries(top)).find((entry) => samePath(entry.path, target))
      if (registered && !registered.missing) {
        const dirty = await uncommittedFiles(target, { untracked: false })
        if (dirty.length > 0) {
          throw new WorktreeError(
            taskId,
            `${target} has uncommitted changes to ${dirty.slice(0, 5).join(", ")}` +
              `${dirty.length > 5 ? ` and ${dirty.length - 5} more` : ""}; they are not part of the merge. ` +
              `Commit or discard them, then remove the worktree again.`,
          )
        }
        await git(top, ["worktree", "remove", "--force", target])
      } else if (registered?.missing) {
        await git(top, ["worktree", "prune"])
      }
      if (tip) await git(top, ["branch", "-D", branch])
      return { removed: Boolean(tip || registered) }
    })
  }

  /** The task worktrees git knows about under `.air/local/worktrees/`. */
  export async function list(root: string): Promise<Listed[]> {
    const top = await repoRoot(root)
    const dir = worktreesDir(top)
    const result: Listed[] = []
    for (const entry of await worktreeEntries(top)) {
      const taskId = path.basename(entry.path)
      if (!samePath(path.dirname(entry.path), dir)) continue
      if (entry.branch !== `refs/heads/air/${taskId}`) continue
      result.push({ taskId, path: entry.path, branch: `air/${taskId}`, head: entry.head, missing: entry.missing })
    }
    return result.sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0))
  }

  /** The worktree registered at the task's path, whatever it has checked out (a branch, or `head` if detached). */
  export async function find(root: string, taskId: string): Promise<{ path: string; branch?: string; head: string } | undefined> {
    const top = await repoRoot(root)
    const target = pathFor(top, taskId)
    const entry = (await worktreeEntries(top)).find((e) => samePath(e.path, target) && !e.missing)
    if (!entry) return undefined
    return { path: entry.path, head: entry.head, ...(entry.branch ? { branch: entry.branch.replace(/^refs\/heads\//, "") } : {}) }
  }

  /** Files changed on the task branch since its merge-base with `base`, with how they changed. */
  export async function changes(root: string, taskId: string, base: string): Promise<Change[]> {
    const range = await taskRange(root, taskId, base)
    const out = await git(root, ["diff", "--name-status", "--no-renames", "-z", range.from, range.to])
    const parts = out.split("\0").filter((part) => part.length > 0)
    const result: Change[] = []
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const code = parts[i]!.charAt(0)
      const status: ChangeStatus =
        code === "A" ? "added" : code === "D" ? "deleted" : code === "T" ? "type-changed" : "modified"
      result.push({ path: parts[i + 1]!, status })
    }
    return result
  }

  /** Paths changed on the task branch since its merge-base with `base` (deleted files included). */
  export async function changedFiles(root: string, taskId: string, base: string): Promise<string[]> {
    return (await changes(root, taskId, base)).map((change) => change.path)
  }

  /** The task's diff since its merge-base with `base`, as a patch. */
  export async function diff(root: string, taskId: string, base: string): Promise<string> {
    const range = await taskRange(root, taskId, base)
    return git(root, ["diff", "--no-color", "--no-ext-diff", "--binary", range.from, range.to])
  }

  export async function branchExists(root: string, taskId: string): Promise<boolean> {
    return refExists(root, `refs/heads/${branchName(taskId)}`)
  }

  /** How many commits the task branch has that `base` does not. */
  export async function commitsAhead(root: string, taskId: string, base: string): Promise<number> {
    const branch = branchName(taskId)
    await resolveCommit(root, base, taskId)
    await resolveCommit(root, `refs/heads/${branch}`, taskId)
    const out = await git(root, ["rev-list", "--count", `${base}..refs/heads/${branch}`])
    return Number.parseInt(out.trim(), 10)
  }

  /** True when tracked files in the working tree at `dir` differ from its HEAD (staged or not). */
  export async function hasUncommittedChanges(dir: string): Promise<boolean> {
    return (await uncommittedFiles(dir, { untracked: false })).length > 0
  }

  /**
   * Paths in the working tree at `dir` that differ from its HEAD: modified, staged, deleted, and with
   * `untracked: true` also untracked files that are not ignored.
   */
  export async function uncommittedFiles(dir: string, options: { untracked: boolean }): Promise<string[]> {
    const out = await git(dir, [
      "status",
      "--porcelain=v1",
      "-z",
      options.untracked ? "--untracked-files=all" : "--untracked-files=no",
    ])
    const files: string[] = []
    const parts = out.split("\0")
    for (let i = 0; i < parts.length; i++) {
      const entry = parts[i]!
      if (entry.length < 4) continue
      files.push(entry.slice(3))
      // A rename or copy is followed by its source path.
      if (entry[0] === "R" || entry[0] === "C") i++
    }
    return files
  }

  /** What `setAside` found and did: the files a dead session left uncommitted, the patch that holds them, the commit kept. */
  export interface SetAside {
    files: string[]
    patch: string
    commit: string
  }

  /**
   * A session killed between two edits leaves its changes uncommitted in the worktree; the next session would
   * build on them (an edit applied twice). Before a new session starts there, every uncommitted change
   * (tracked, staged, or untracked and not ignored) is saved as a binary patch at `patchFile` and the
   * worktree is reset to its branch's last commit. Ignored files (build directories) stay. Undefined when
   * the worktree was clean: nothing is written.
   */
  export async function setAside(dir: string, patchFile: string): Promise<SetAside | undefined> {
    const files = await uncommittedFiles(dir, { untracked: true })
    if (files.length === 0) return undefined
    // Staged as a whole, the patch holds new files too; the index is reset with the working tree below.
    await git(dir, ["add", "-A"])
    const patch = await git(dir, ["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "HEAD"])
    await mkdir(path.dirname(patchFile), { recursive: true })
    await writeFile(patchFile, patch)
    await git(dir, ["reset", "--hard", "--quiet", "HEAD"])
    await git(dir, ["clean", "-fd", "--quiet"])
    return { files, patch: patchFile, commit: (await git(dir, ["rev-parse", "HEAD"])).trim() }
  }

  /** The branch checked out in the working tree at `dir` (`air/T-1`), or undefined on a detached HEAD. */
  export async function headBranch(dir: string): Promise<string | undefined> {
    const result = await gitTry(dir, ["symbolic-ref", "--quiet", "--short", "HEAD"])
    return result.code === 0 ? result.stdout.trim() : undefined
  }

  /** Untracked files in the working tree at `dir` that no ignore rule hides, one path each (directories expanded). */
  export async function untrackedFiles(dir: string): Promise<string[]> {
    const out = await git(dir, ["ls-files", "--others", "--exclude-standard", "-z"])
    return out.split("\0").filter((file) => file.length > 0)
  }

  /** Appends the Scheduler's private paths to the repository's `info/exclude` (shared by all worktrees). */
  export async function ensureExcluded(root: string): Promise<void> {
    const common = (await git(root, ["rev-parse", "--git-common-dir"])).trim()
    const file = path.join(path.resolve(root, common), "info", "exclude")
    let text = ""
    try {
      text = await readFile(file, "utf8")
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    }
    const present = new Set(text.split(/\r?\n/).map((line) => line.trim()))
    const missing = EXCLUDES.filter((entry) => !present.has(entry))
    if (missing.length === 0) return
    await mkdir(path.dirname(file), { recursive: true })
    const prefix = text.length > 0 && !text.endsWith("\n") ? "\n" : ""
    await writeFile(file, `${text}${prefix}# AirCoding (scheduler state, task worktrees, build dirs)\n${missing.join("\n")}\n`)
  }

  /** The working tree (the user's checkout or a worktree) that has `branch` checked out, if any. */
  export async function checkoutOf(root: string, branch: string): Promise<string | undefined> {
    const entry = (await worktreeEntries(root)).find((e) => e.branch === `refs/heads/${branch}` && !e.missing)
    return entry?.path
  }

  /** The top level of the repository containing `dir`, as git spells it (symlinks resolved). */
  export async function repoRoot(dir: string): Promise<string> {
    const result = await gitTry(dir, ["rev-parse", "--show-toplevel"]).catch((error: unknown) => {
      throw new Error(`${dir} is not usable as a project root: ${(error as Error).message}`)
    })
    if (result.code !== 0) throw new Error(`${dir} is not inside a git repository: ${result.stderr.trim()}`)
    return realpath(result.stdout.trim())
  }

  /**
   * Removes one of AirCoding's detached helper worktrees (the merge build's, the base tree, a baseline's, a
   * revert's scratch): unregistered from git and gone from disk, whatever state it was left in.
   */
  export async function dropDetached(top: string, dir: string): Promise<void> {
    await gitTry(top, ["worktree", "remove", "--force", dir])
    await rm(dir, { recursive: true, force: true })
    await gitTry(top, ["worktree", "prune"])
  }

  /**
   * Checks out the submodules of a fresh worktree at `dir` (a task's or a baseline's) at their recorded commits,
   * offline, from the user's checkout `root`. Returns what could not be done, for people.
   */
  export async function checkoutSubmodules(root: string, dir: string): Promise<string[]> {
    return Submodules.checkout(await repoRoot(root), dir)
  }

  // ---- internals ----

  async function submodulesIn(top: string, target: string): Promise<{ submodules?: string[] }> {
    const notes = await Submodules.checkout(top, target)
    return notes.length > 0 ? { submodules: notes } : {}
  }

  interface Entry {
    path: string
    head: string
    branch?: string
    missing: boolean
  }

  async function worktreeEntries(top: string): Promise<Entry[]> {
    const out = await git(top, ["worktree", "list", "--porcelain", "-z"])
    const entries: Entry[] = []
    let current: Entry | undefined
    for (const line of out.split("\0")) {
      if (line.startsWith("worktree ")) {
        current = { path: line.slice("worktree ".length), head: "", missing: false }
        entries.push(current)
      } else if (current && line.startsWith("HEAD ")) current.head = line.slice(5)
      else if (current && line.startsWith("branch ")) current.branch = line.slice(7)
      else if (current && line.startsWith("prunable")) current.missing = true
    }
    for (const entry of entries) if (!entry.missing && !existsSync(entry.path)) entry.missing = true
    return entries
  }

  /** The work of `air/<id>` is safe to delete only when the integration branch holds it. */
  async function assertMerged(top: string, taskId: string, branch: string, tip: string, integration?: string, round = 1) {
    if (integration) {
      const integrationTip = await revParse(top, `refs/heads/${integration}`)
      if (integrationTip && (await gitYes(top, ["merge-base", "--is-ancestor", tip, integrationTip]))) return
    }
    const tagged = await revParse(top, `refs/tags/${doneTag(taskId, round)}^{commit}`)
    if (!tagged) {
      throw new NotMerged(
        taskId,
        branch,
        tip,
        `there is no tag ${doneTag(taskId, round)}${integration ? ` and ${integration} does not contain the tip` : ""}`,
      )
    }
    const [tipTree, tagTree] = await Promise.all([revParse(top, `${tip}^{tree}`), revParse(top, `${tagged}^{tree}`)])
    if (tipTree !== tagTree) {
      throw new NotMerged(
        taskId,
        branch,
        tip,
        `the branch has changed since it was merged as ${tagged.slice(0, 12)} (its files differ from the merged commit)`,
      )
    }
  }

  async function taskRange(root: string, taskId: string, base: string): Promise<{ from: string; to: string }> {
    const branch = branchName(taskId)
    const baseCommit = await resolveCommit(root, base, taskId)
    const tip = await resolveCommit(root, `refs/heads/${branch}`, taskId)
    return { from: await mergeBase(root, tip, baseCommit), to: tip }
  }

  async function resolveCommit(root: string, rev: string, taskId: string): Promise<string> {
    const sha = await revParse(root, `${rev}^{commit}`)
    if (!sha) throw new WorktreeError(taskId, `${rev} does not name a commit in ${root}`)
    return sha
  }

  async function mergeBase(root: string, a: string, b: string): Promise<string> {
    return (await git(root, ["merge-base", a, b])).trim()
  }

  async function refExists(root: string, ref: string): Promise<boolean> {
    return (await revParse(root, ref)) !== undefined
  }

  /**
   * `git worktree add` marks the new worktree locked "initializing" until its checkout is done. Found at
   * `create` (one AirCoding process per project, worktree operations one at a time), that mark means an add
   * was killed half-way. If the checkout never finished (the worktree's index is locked or missing) nothing
   * can have been committed there and no git command works in it: it is removed, to be made again.
   * Otherwise only the mark goes, and whatever was done in the worktree stays.
   */
  async function recoverInterruptedAdd(top: string, taskId: string, target: string): Promise<string | undefined> {
    const admin = path.join(path.resolve(top, (await git(top, ["rev-parse", "--git-common-dir"])).trim()), "worktrees", taskId)
    const lock = await readFile(path.join(admin, "locked"), "utf8").catch(() => "")
    if (lock.trim() !== "initializing") return undefined
    await gitTry(top, ["worktree", "unlock", target])
    const halfMade = existsSync(path.join(admin, "index.lock")) || !existsSync(path.join(admin, "index"))
    if (!halfMade) return `the worktree of ${taskId} was still marked as being created by a process that died; the mark was cleared and its work kept`
    await gitTry(top, ["worktree", "remove", "--force", "--force", target])
    await rm(target, { recursive: true, force: true })
    await git(top, ["worktree", "prune"])
    return `the worktree of ${taskId} was left half-created by a process that died (its checkout never finished, so nothing was committed in it); it was made again`
  }

  /** A directory left by a crash in the middle of `git worktree add` is removed if empty, never if not. */
  async function clearLeftoverDir(target: string, taskId: string): Promise<void> {
    if (!existsSync(target)) return
    const entries = await readdir(target)
    if (entries.length === 0) {
      await rm(target, { recursive: true })
      return
    }
    throw new WorktreeError(
      taskId,
      `${target} exists and is not a git worktree; it may hold someone's files. Move it away and try again.`,
    )
  }

  function samePath(a: string, b: string): boolean {
    return path.resolve(a) === path.resolve(b)
  }

  const serial = new Serial()

  /** One worktree operation at a time per repository in this process: git's admin files are shared. */
  function serialise<T>(top: string, work: () => Promise<T>): Promise<T> {
    return serial.run(top, work)
  }
}
