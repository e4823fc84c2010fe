import { readFileSync } from "node:fs"
import { hostname } from "node:os"
import { z } from "zod"

/**
 * A process as a file names it: its pid, its host and the moment it started (Linux's start time in clock
 * ticks since boot, from /proc/<pid>/stat). A pid alone is not a process: once its owner is killed the number
 * is free, and a container that restarts hands the same small pids out again, so "pid 42 is alive" says
 * nothing about the process that wrote the file. The start time does: the same pid with another start time
 * is another process. Where /proc cannot say (another OS), the pid alone is judged.
 */
export namespace ProcessIdentity {
  export const Schema = z.object({
    pid: z.number().int().positive(),
    host: z.string(),
    /** Clock ticks after boot at which the process started; absent where /proc cannot tell. */
    started: z.number().int().nonnegative().optional(),
  })
  export type Data = z.infer<typeof Schema>

  /** "alive": that very process runs; "gone": it ended (or its pid is another process's now); "elsewhere": another host's, which we cannot see. */
  export type Judgement = "alive" | "gone" | "elsewhere"

  let own: Data | undefined

  /** This process. */
  export function self(): Data {
    own ??= { pid: process.pid, host: hostname(), ...optionalStarted(startedOf(process.pid)) }
    return own
  }

  /** /proc/<pid>/stat's state and start time; undefined when the process or /proc is not there. */
  function stat(pid: number): { state: string; started: number } | undefined {
    let text: string
    try {
      text = readFileSync(`/proc/${pid}/stat`, "utf8")
    } catch {
      return undefined
    }
    // The name in parentheses may hold spaces and parentheses: the fields start after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    const started = Number(fields[19])
    if (!fields[0] || !Number.isInteger(started)) return undefined
    return { state: fields[0], started }
  }

  export function startedOf(pid: number): number | undefined {
    return stat(pid)?.started
  }

  function optionalStarted(started: number | undefined): { started?: number } {
    return started === undefined ? {} : { started }
  }

  export function judge(p: Data): Judgement {
    if (p.host !== hostname()) return "elsewhere"
    if (!signalable(p.pid)) return "gone"
    const now = stat(p.pid)
    if (!now) return "alive" // no /proc here: the pid answering is all we can know
    // A killed process whose parent has not reaped it yet is a zombie: it runs nothing.
    if (now.state === "Z" || now.state === "X") return "gone"
    return p.started === undefined || p.started === now.started ? "alive" : "gone"
  }

  /** Whether a signal reaches the pid (EPERM: it exists, owned by someone else). */
  export function signalable(pid: number): boolean {
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM"
    }
  }
}
