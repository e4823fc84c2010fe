import { readFileSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import { writeFileAtomicSync } from "./atomic"
import { readHolder, type LockInfo } from "./lock"

/**
 * Which process carries the run, for the views: the store's lock names its holder while it holds the log
 * (pid, host, start time, and the command that resumes the run should it die); `holder.json` keeps a copy
 * that outlives the lock, so a run whose process closed the log and exited (a TUI quit) still names its
 * last holder and its resume command. Only the run's own process records itself here (the Orchestrator),
 * never a reader that opens the store for a moment (`aircoding run` folding the final state).
 */
export namespace RunHolder {
  export const Schema = z.object({
    pid: z.number().int().positive(),
    host: z.string(),
    at: z.string(),
    started: z.number().int().nonnegative().optional(),
    restart: z.string().optional(),
  })
  export type Data = z.infer<typeof Schema>

  export function lockPath(stateDir: string): string {
    return join(stateDir, "lock")
  }

  export function recordPath(stateDir: string): string {
    return join(stateDir, "holder.json")
  }

  /** The lock's holder now (null: no process holds the log). */
  export function current(stateDir: string): LockInfo | null {
    return readHolder(lockPath(stateDir))
  }

  /** The last process that carried the run, as it recorded itself; undefined when none did (an older run, a test's log). */
  export function last(stateDir: string): Data | undefined {
    try {
      const parsed = Schema.safeParse(JSON.parse(readFileSync(recordPath(stateDir), "utf8")))
      return parsed.success ? parsed.data : undefined
    } catch {
      return undefined
    }
  }

  export function record(stateDir: string, info: LockInfo): void {
    const data: Data = {
      pid: info.pid,
      host: info.host,
      at: info.at,
      ...(info.started !== undefined ? { started: info.started } : {}),
      ...(info.restart ? { restart: info.restart } : {}),
    }
    try {
      writeFileAtomicSync(recordPath(stateDir), JSON.stringify(data) + "\n", { backup: false })
    } catch {
      // For the views only: the run goes on without it (they fall back to the lock and the log).
    }
  }
}
