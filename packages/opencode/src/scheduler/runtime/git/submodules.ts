import { existsSync } from "node:fs"
import path from "node:path"
import { gitTry } from "./git.ts"

/**
 * Submodules in task and baseline worktrees, offline: each is cloned from the user's own checkout (the
 * initialised submodule's directory, else its repository under `.git/modules/<name>`), never from the URL in
 * `.gitmodules`. The URL is overridden for the one command only (`-c submodule.<name>.url=…`), so the user's
 * configuration, shared by every worktree, is never written.
 */
export namespace Submodules {
  export interface Entry {
    name: string
    /** Relative to the repository's top. */
    path: string
    /** Where the worktree's copy comes from: a repository on this machine; undefined if the user never initialised it. */
    source?: string
  }

  export interface Problem {
    name: string
    path: string
    problem: string
    /** The one command that fixes it. */
    fix: string
  }

  /** The submodules `.gitmodules` in `dir` declares, with their local source in the user's checkout `top`. */
  export async function list(top: string, dir: string = top): Promise<Entry[]> {
    if (!existsSync(path.join(dir, ".gitmodules"))) return []
    const out = await gitTry(dir, ["config", "--file", ".gitmodules", "--null", "--get-regexp", "^submodule\\..*\\.path$"])
    if (out.code !== 0) return []
    const common = await gitTry(top, ["rev-parse", "--path-format=absolute", "--git-common-dir"])
    const commonDir = common.code === 0 ? common.stdout.trim() : path.join(top, ".git")
    const entries: Entry[] = []
    for (const record of out.stdout.split("\0")) {
      const newline = record.indexOf("\n")
      if (newline < 0) continue
      const key = record.slice(0, newline)
      const name = key.slice("submodule.".length, -".path".length)
      const sub = record.slice(newline + 1)
      const source = await sourceOf(top, commonDir, name, sub)
      entries.push({ name, path: sub, ...(source ? { source } : {}) })
    }
    return entries
  }

  /** Submodules the user never initialised: said once, before dispatch, with the command that fixes them. */
  export async function problems(top: string): Promise<Problem[]> {
    const missing = (await list(top)).filter((entry) => !entry.source)
    return missing.map((entry) => ({
      name: entry.name,
      path: entry.path,
      problem: `submodule ${entry.path} is not initialised in ${top}, so task worktrees cannot get it offline and builds that need it fail`,
      fix: `git -C ${shellWord(top)} submodule update --init --recursive -- ${shellWord(entry.path)}`,
    }))
  }

  /**
   * Checks out every submodule of the worktree at its recorded commit from the user's checkout, recursively.
   * Returns what could not be done, for people; an already populated submodule is left as it is.
   */
  export async function checkout(top: string, worktree: string): Promise<string[]> {
    const notes: string[] = []
    for (const entry of await list(top, worktree)) {
      if (!entry.source) {
        notes.push(`submodule ${entry.path} left empty: it is not initialised in ${top} (fix: git submodule update --init -- ${entry.path})`)
        continue
      }
      const result = await gitTry(worktree, [
        "-c",
        "protocol.file.allow=always",
        "-c",
        `submodule.${entry.name}.url=${entry.source}`,
        "submodule",
        "update",
        "--init",
        "--no-recommend-shallow",
        "--",
        entry.path,
      ])
      if (result.code !== 0) {
        const detail = result.stderr.trim().split("\n").slice(-2).join(" ")
        notes.push(
          `submodule ${entry.path} could not be checked out from ${entry.source}: ${detail} ` +
            `(the user's checkout may lack the recorded commit: git -C ${top} submodule update --init -- ${entry.path})`,
        )
        continue
      }
      // Nested submodules come from the user's copy of this submodule in turn.
      const nestedTop = path.join(top, entry.path)
      if (existsSync(path.join(worktree, entry.path, ".gitmodules"))) {
        if (existsSync(path.join(nestedTop, ".git"))) notes.push(...(await checkout(nestedTop, path.join(worktree, entry.path))))
        else notes.push(`nested submodules of ${entry.path} left empty: ${entry.path} is not checked out in ${top}`)
      }
    }
    return notes
  }

  async function sourceOf(top: string, commonDir: string, name: string, sub: string): Promise<string | undefined> {
    const checkoutDir = path.join(top, sub)
    if (existsSync(path.join(checkoutDir, ".git"))) {
      const own = await gitTry(checkoutDir, ["rev-parse", "--show-toplevel"])
      if (own.code === 0 && path.resolve(own.stdout.trim()) === path.resolve(checkoutDir)) return checkoutDir
    }
    const module = path.join(commonDir, "modules", name)
    if (existsSync(path.join(module, "HEAD"))) return module
    return undefined
  }

  function shellWord(word: string): string {
    return /^[A-Za-z0-9_./:=+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
  }
}
