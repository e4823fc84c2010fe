import { appendFileSync, mkdirSync } from "node:fs"
import { dirname } from "node:path"

export interface LogEntry {
  ts: string
  seq: number
  agent: string
  /** The script's name when it has one, else its index; null when no script was chosen. */
  script: string | number | null
  step: number | null
  stream: boolean
  offered: string[]
  lastUser: string
  /** The pictures in the last user message, by media type (absent: none). */
  images?: string[]
  lastToolResult: string
  reply: { kind: "tool" | "tools" | "text" | "error"; tools?: string[]; text?: string }
  failure?: string
  /** The fault the server injected instead of (or into) the scripted answer. */
  fault?: string
}

const LOG_TEXT_LIMIT = 300

export function truncate(s: string, limit = LOG_TEXT_LIMIT): string {
  return s.length <= limit ? s : `${s.slice(0, limit)}…(+${s.length - limit} chars)`
}

/** Every request, in memory and (if a path is given) as one JSON line each in a file. */
export class RequestLog {
  private readonly entries: LogEntry[] = []

  constructor(private readonly path?: string) {
    // Synchronous appends keep lines whole and in seq order even with parallel requests.
    if (path) mkdirSync(dirname(path), { recursive: true })
  }

  /** Numbers entries in the order they are answered (a delayed reply is logged when it is sent). */
  add(fields: Omit<LogEntry, "seq">): LogEntry {
    const { ts, ...rest } = fields
    const entry: LogEntry = { ts, seq: this.entries.length + 1, ...rest }
    this.entries.push(entry)
    if (this.path) appendFileSync(this.path, `${JSON.stringify(entry)}\n`)
    return entry
  }

  all(): LogEntry[] {
    return [...this.entries]
  }

  failures(): string[] {
    return this.entries.flatMap((e) => (e.failure ? [e.failure] : []))
  }

  countByAgent(): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const e of this.entries) counts[e.agent] = (counts[e.agent] ?? 0) + 1
    return counts
  }
}
