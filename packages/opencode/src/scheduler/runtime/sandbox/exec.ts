import { accessSync, constants } from "node:fs"
import { delimiter, isAbsolute, join } from "node:path"
import type { Exec } from "../exec/exec.ts"
import { Sandbox } from "./sandbox"
import { Settings } from "../settings"

/**
 * The gates' `exec` seam, sandboxed: the build, test and analysis commands run the task's own
 * CMakeLists.txt and tests, so they get the worker's fence (sandbox.ts) — the worktree writable, the
 * rest read-only, secrets hidden, no network unless toolchain.json says `"network": true`. Git needs no
 * write there: the gates commit nothing.
 */
export namespace SandboxExec {
  export type Options = {
    root: string
    worktree: string
    network: boolean
    /** Inside the worktree, yet read-only (the final check runs at the project root: its `.air`). */
    readOnly?: readonly string[]
  }

  /**
   * How the project's commands run by default: "on" (no sandbox, nothing runs), or "fallback" when the
   * user allowed running without one (`sandboxFallback` in the settings). Unreadable settings: "on".
   */
  export function modeOf(root: string): "on" | "fallback" {
    try {
      return Settings.load(root).sandboxFallback ? "fallback" : "on"
    } catch {
      return "on"
    }
  }

  /** Whether `program` can be found (a missing program must still fail as "not installed"). */
  function findable(program: string, env: NodeJS.ProcessEnv): boolean {
    const candidates = program.includes("/") ? [isAbsolute(program) ? program : undefined] : (env.PATH ?? "").split(delimiter).map((d) => join(d, program))
    for (const c of candidates) {
      if (!c) continue
      try {
        accessSync(c, constants.X_OK)
        return true
      } catch {
        // next
      }
    }
    return false
  }

  /** `inner` with every command run inside the task's sandbox. */
  export function wrap(inner: Exec, options: Options): Exec {
    return (command, args, opts) => {
      // A program that is not there runs unwrapped: it fails to start exactly as before (ENOENT → tool missing).
      if (!opts.shell && !findable(command, opts.env)) return inner(command, args, opts)
      const policy = Sandbox.plan({ worktree: options.worktree, project: options.root, env: opts.env, network: options.network, git: false, readOnly: options.readOnly })
      const argv = opts.shell
        ? Sandbox.wrap(["/bin/sh", "-c", [command, ...args].join(" ")], policy)
        : Sandbox.wrap([command, ...args], policy)
      return inner(argv[0]!, argv.slice(1), { ...opts, shell: false })
    }
  }
}
