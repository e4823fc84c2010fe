import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Paths } from "../../../agent/paths"
import { gitTry } from "./git"
import { GitLayout } from "./git-layout"
import { AirPaths } from "../../core/air-paths"

/**
 * The task branch, kept by the Scheduler's code while the worker's commands run in the sandbox.
 *
 * Inside the sandbox the shared repository is read-only: no ref, tag, config or hook can change. So that
 * a worker can still commit, its worktree's HEAD is detached for the duration of a command (HEAD lives in
 * the worktree's own admin dir, which is writable) and its new objects go to a private object dir. After
 * the command, this code — outside the sandbox — points the task branch at wherever HEAD went and attaches
 * HEAD to the branch again. The only ref a worker can move is therefore its own branch.
 *
 * No call counting: a call the engine aborts never reaches `settle`, and a count would stay stuck. Each
 * command detaches if HEAD is attached, and each settles; a worker's report settles too (`settle` is
 * idempotent). Two commands of one worker running at once: the first to end re-attaches HEAD, and a commit
 * of the other then fails with git's message (the shared ref is read-only) — it can simply run again.
 */
export namespace GitSync {
  /** The branch each worktree's HEAD was on when we detached it, by admin dir. */
  const branches = new Map<string, string>()

  /** The private object dir exists (git inside the sandbox writes there: GIT_OBJECT_DIRECTORY). */
  export function ensureObjectDir(layout: GitLayout.Layout): void {
    mkdirSync(join(layout.objectDir, "info"), { recursive: true })
    mkdirSync(join(layout.objectDir, "pack"), { recursive: true })
  }

  /**
   * The worker's new objects copied into the shared repository before its branch may point at them, so
   * the project never depends on `.air/local` (no alternates entry: deleting the Scheduler's state must
   * not break the user's repository). Objects are immutable and named by content: existing ones are kept.
   */
  export function adoptObjects(layout: GitLayout.Layout): number {
    let copied = 0
    const shared = join(layout.commonDir, "objects")
    let dirs: string[] = []
    try {
      dirs = readdirSync(layout.objectDir).filter((d) => /^[0-9a-f]{2}$/.test(d))
    } catch {
      return 0
    }
    for (const dir of dirs) {
      for (const name of readdirSync(join(layout.objectDir, dir))) {
        if (!/^[0-9a-f]{38}([0-9a-f]{24})?$/.test(name)) continue
        const target = join(shared, dir, name)
        if (existsSync(target)) continue
        mkdirSync(join(shared, dir), { recursive: true })
        const tmp = `${target}.aircoding-${process.pid}`
        copyFileSync(join(layout.objectDir, dir, name), tmp)
        chmodSync(tmp, 0o444)
        renameSync(tmp, target)
        copied++
      }
    }
    return copied
  }

  /**
   * The worktree's HEAD file, read and written directly: a sandboxed command is one shell call of a model,
   * and four git processes around each (rev-parse, update-ref, symbolic-ref…) cost more than the sandbox
   * itself. Only moving the branch — after a commit — goes through git. Written by rename: never half a file.
   */
  function readHead(layout: GitLayout.Layout): string {
    try {
      return readFileSync(join(layout.gitDir, "HEAD"), "utf8").trim()
    } catch {
      return ""
    }
  }

  function writeHead(layout: GitLayout.Layout, content: string): void {
    const tmp = join(layout.gitDir, `HEAD.aircoding-${process.pid}`)
    writeFileSync(tmp, content + "\n")
    renameSync(tmp, join(layout.gitDir, "HEAD"))
  }

  const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/

  /** A branch's tip: its loose ref file, else git (packed refs). */
  async function tipOf(worktree: string, layout: GitLayout.Layout, branch: string): Promise<string | undefined> {
    try {
      const loose = readFileSync(join(layout.commonDir, branch), "utf8").trim()
      if (SHA.test(loose)) return loose
    } catch {
      // packed, or missing
    }
    const r = await gitTry(worktree, ["rev-parse", "-q", "--verify", `${branch}^{commit}`])
    return r.code === 0 ? r.stdout.trim() : undefined
  }

  /** Before a sandboxed command: HEAD detached at the branch tip (remembering the branch). */
  export async function detach(worktree: string, layout: GitLayout.Layout): Promise<void> {
    ensureObjectDir(layout)
    const head = readHead(layout)
    if (!head.startsWith("ref: refs/heads/")) return
    const branch = head.slice(5)
    const tip = await tipOf(worktree, layout, branch)
    if (!tip) return
    branches.set(layout.gitDir, branch)
    writeHead(layout, tip)
  }

  export type Settled = { branch?: string; from?: string; to?: string }

  /**
   * After a sandboxed command (or before a report): the branch moved to HEAD, HEAD attached to it again.
   * `fallbackBranch` names the branch when this process never saw HEAD attached (a restart in between).
   */
  export async function settle(worktree: string, layout: GitLayout.Layout, fallbackBranch?: string): Promise<Settled> {
    const branch = branches.get(layout.gitDir) ?? fallbackBranch
    if (!branch) return {}
    const head = readHead(layout)
    if (head === `ref: ${branch}`) return { branch }
    // Detached (a commit moved it, or not), or attached to another branch the worker checked out.
    const sha = SHA.test(head) ? head : (await gitTry(worktree, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])).stdout.trim()
    const tip = await tipOf(worktree, layout, branch)
    if (sha && SHA.test(sha) && sha !== tip) {
      adoptObjects(layout)
      await gitTry(worktree, ["update-ref", "-m", "aircoding: worker commit", branch, sha])
    }
    writeHead(layout, `ref: ${branch}`)
    return { branch, from: tip, to: sha || tip }
  }

  /** The Scheduler's branch of a task worktree (`<project>/.air/local/worktrees/<task>` → `refs/heads/air/<task>`). */
  export function branchOf(worktree: string): string | undefined {
    const task = Paths.projectOfWorktree(worktree)?.task
    return task ? `refs/heads/air/${task}` : undefined
  }

  /**
   * The task branch settled without a command: before a worker's report (the gates read the branch), in
   * case a command of it was aborted before `SandboxShell.leave`, and when a worktree is made again
   * (git/worktree.ts). Here, beside `settle`, so git/ settles a branch without importing the sandbox.
   */
  export async function heal(worktree: string): Promise<Settled | undefined> {
    const project = Paths.projectOfWorktree(worktree)?.root
    if (!project) return undefined
    const layout = GitLayout.of(worktree, AirPaths.sandbox(project))
    return layout ? await settle(worktree, layout, branchOf(worktree)) : undefined
  }
}
