import { appendFileSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { gitTry } from "../../scheduler/git"
import type { GitLayout } from "./git-layout"

/**
 * The task branch, kept by the Scheduler's code while the worker's commands run in the sandbox.
 *
 * Inside the sandbox the shared repository is read-only: no ref, tag, config or hook can change. So that
 * a worker can still commit, its worktree's HEAD is detached for the duration of a command (HEAD lives in
 * the worktree's own admin dir, which is writable) and its new objects go to a private object dir. After
 * the command, this code — outside the sandbox — points the task branch at wherever HEAD went and attaches
 * HEAD to the branch again. The only ref a worker can move is therefore its own branch.
 *
 * Parallel commands of one session share one detach: the first one detaches, the last one settles.
 */
export namespace GitSync {
  type Held = { branch: string | undefined; count: number }
  const held = new Map<string, Held>()

  /** The private object dir exists and the shared repository reads it (its alternates list it). */
  export function ensureObjectDir(layout: GitLayout.Layout): void {
    mkdirSync(join(layout.objectDir, "info"), { recursive: true })
    mkdirSync(join(layout.objectDir, "pack"), { recursive: true })
    const alternates = join(layout.commonDir, "objects", "info", "alternates")
    let current = ""
    try {
      current = readFileSync(alternates, "utf8")
    } catch {
      mkdirSync(join(layout.commonDir, "objects", "info"), { recursive: true })
    }
    if (!current.split("\n").includes(layout.objectDir)) appendFileSync(alternates, (current && !current.endsWith("\n") ? "\n" : "") + layout.objectDir + "\n")
  }

  /** Before a sandboxed command: HEAD detached at the branch tip (remembering the branch). */
  export async function detach(worktree: string, layout: GitLayout.Layout): Promise<void> {
    ensureObjectDir(layout)
    const h = held.get(layout.gitDir)
    if (h) {
      h.count++
      return
    }
    const entry: Held = { branch: undefined, count: 1 }
    held.set(layout.gitDir, entry)
    const r = await gitTry(worktree, ["rev-parse", "--symbolic-full-name", "HEAD", "HEAD"])
    const [name, sha] = r.stdout.trim().split("\n")
    if (r.code !== 0 || !sha || !name?.startsWith("refs/heads/")) return
    entry.branch = name
    await gitTry(worktree, ["update-ref", "--no-deref", "HEAD", sha])
  }

  export type Settled = { branch?: string; from?: string; to?: string }

  /** After a sandboxed command: the branch moved to HEAD, HEAD attached to the branch again. */
  export async function settle(worktree: string, layout: GitLayout.Layout): Promise<Settled> {
    const h = held.get(layout.gitDir)
    if (!h) return {}
    if (--h.count > 0) return {}
    held.delete(layout.gitDir)
    if (!h.branch) return {}
    const head = (await gitTry(worktree, ["rev-parse", "--verify", "-q", "HEAD^{commit}"])).stdout.trim()
    const tip = (await gitTry(worktree, ["rev-parse", "--verify", "-q", h.branch])).stdout.trim()
    if (head && head !== tip) await gitTry(worktree, ["update-ref", "-m", "aircoding: worker commit", h.branch, head])
    await gitTry(worktree, ["symbolic-ref", "HEAD", h.branch])
    return { branch: h.branch, from: tip, to: head || tip }
  }
}
