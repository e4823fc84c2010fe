import { readFileSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"

/** A lock file's content (store/lock.ts): its holder. */
export interface LockInfo {
  pid: number
  host: string
  at: string
  token: string
  /** What the holder is doing ("merge of T-1"), for the message of whoever waits. */
  what?: string
  /** The holder process's start time (`ProcessIdentity.started`): its pid alone may be another process's later. */
  started?: number
  /** The command that takes the holder's work up again if it dies (the run's resume command), for the views. */
  restart?: string
}

/**
 * Which process carries the run, as files say it (readers only: the TUI plugin loads this): the store's lock
 * names its holder while it holds the log (pid, host, start time, and the command that resumes the run should
 * it die); `holder.json` keeps a copy that outlives the lock, so a run whose process closed the log and exited
 * (a TUI quit) still names its last holder and its resume command. Only the run's own process records itself
 * there (Store.open with `runHolder`), never a reader that opens the store for a moment.
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

  /** `aircoding run <root> --resume` (as the user starts AirCoding: AIRCODING_COMMAND), quoted for the shell: what resumes any run when its launcher said nothing. */
  export function defaultResume(root: string): string {
    const word = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)
    return [process.env.AIRCODING_COMMAND || "aircoding", "run", root, "--resume"].map(word).join(" ")
  }

  export function lockPath(stateDir: string): string {
    return join(stateDir, "lock")
  }

  export function recordPath(stateDir: string): string {
    return join(stateDir, "holder.json")
  }

  /** The lock's holder now (null: no process holds the log). */
  export function current(stateDir: string): LockInfo | null {
    return readLockFile(lockPath(stateDir))
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

  /** What holder.json keeps of a lock's holder. */
  export function recordOf(info: LockInfo): Data {
    return {
      pid: info.pid,
      host: info.host,
      at: info.at,
      ...(info.started !== undefined ? { started: info.started } : {}),
      ...(info.restart ? { restart: info.restart } : {}),
    }
  }
}

/** Who holds the lock at `path` as its file says (null when absent, empty or damaged). */
export function readLockFile(path: string): LockInfo | null {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Partial<LockInfo> & { since?: string }
    if (typeof parsed.pid !== "number" || typeof parsed.host !== "string") return null
    // `since` is how the merge lock named the time before it used this lock. A start time that is not a count
    // of ticks judges nothing: the pid alone is judged then.
    const { started, restart, ...rest } = parsed
    return {
      token: "",
      ...rest,
      at: String(parsed.at ?? parsed.since ?? "?"),
      ...(Number.isInteger(started) ? { started } : {}),
      ...(typeof restart === "string" ? { restart } : {}),
    } as LockInfo
  } catch {
    return null
  }
}
