import { existsSync, readFileSync, statSync } from "node:fs"
import { basename, dirname, isAbsolute, join, resolve } from "node:path"

/**
 * Where git keeps a task worktree's state, read from the files git itself writes (`<wt>/.git` names the
 * worktree's admin dir, whose `commondir` names the shared repository). Inside the sandbox only the
 * admin dir (HEAD, index, logs of HEAD) and a private object directory are writable: a worker commits on
 * a detached HEAD, and the Scheduler's code — outside — copies the new objects in and moves the task
 * branch (git-sync.ts).
 */
export namespace GitLayout {
  export type Layout = {
    /** The worktree's admin dir: `<common>/worktrees/<name>`. */
    gitDir: string
    /** The shared repository (`<project>/.git`). */
    commonDir: string
    /** New objects of the worker go here, never into the shared object store. */
    objectDir: string
  }

  /** The layout of `worktree`, or undefined when it is not a linked worktree (a plain checkout, no git). */
  export function of(worktree: string, stateDir: string): Layout | undefined {
    const dotGit = join(worktree, ".git")
    let text: string
    try {
      if (!statSync(dotGit).isFile()) return undefined
      text = readFileSync(dotGit, "utf8")
    } catch {
      return undefined
    }
    const m = /^gitdir:\s*(.+)$/m.exec(text)
    if (!m) return undefined
    const gitDir = resolve(worktree, m[1]!.trim())
    let commonDir = dirname(dirname(gitDir))
    try {
      const raw = readFileSync(join(gitDir, "commondir"), "utf8").trim()
      commonDir = isAbsolute(raw) ? raw : resolve(gitDir, raw)
    } catch {
      // older layouts: <common>/worktrees/<name>
    }
    if (!existsSync(join(commonDir, "objects"))) return undefined
    return { gitDir, commonDir, objectDir: join(stateDir, "objects", basename(gitDir)) }
  }

  /**
   * Variables that make git inside the sandbox write objects to the private dir, read the shared ones,
   * and never start housekeeping (gc, maintenance) that would try to write the shared repository.
   */
  export function env(layout: Layout): Record<string, string> {
    const config: [string, string][] = [
      ["gc.auto", "0"],
      ["maintenance.auto", "false"],
      ["core.fsmonitor", "false"],
    ]
    const out: Record<string, string> = {
      GIT_OBJECT_DIRECTORY: layout.objectDir,
      GIT_ALTERNATE_OBJECT_DIRECTORIES: join(layout.commonDir, "objects"),
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_COUNT: String(config.length),
    }
    config.forEach(([k, v], i) => {
      out[`GIT_CONFIG_KEY_${i}`] = k
      out[`GIT_CONFIG_VALUE_${i}`] = v
    })
    return out
  }
}
