import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { Sandbox } from "./sandbox"

/**
 * The sandboxes still at work in a task's worktree when a new session is about to start there: a killed attempt's
 * command (an edit, a commit) that outlived its engine. Before the worktree is set straight for the next attempt
 * they are ended, so nothing of the killed attempt lands after the reset (issue 44). Only bubblewrap processes whose
 * working directory is the worktree or below it are touched — never a person's shell that happens to be there.
 */
export namespace SandboxLeftovers {
  /** The pids of sandboxes working in `worktree` now (Linux; none where /proc is absent). */
  export function find(worktree: string): number[] {
    let entries: string[]
    try {
      entries = readdirSync("/proc")
    } catch {
      return []
    }
    const found: number[] = []
    for (const entry of entries) {
      const pid = Number(entry)
      if (!Number.isInteger(pid) || pid === process.pid) continue
      try {
        if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== Sandbox.BINARY) continue
        const cwd = readlinkSync(`/proc/${pid}/cwd`)
        if (cwd === worktree || cwd.startsWith(`${worktree}/`)) found.push(pid)
      } catch {
        // gone meanwhile, or not ours to read
      }
    }
    return found
  }

  /** Ends them (SIGKILL: bwrap's own pid namespace takes every process inside with it); the pids ended. */
  export function end(worktree: string): number[] {
    const pids = find(worktree)
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {}
    }
    return pids
  }
}
