import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs"
import { basename, join } from "node:path"
import { JsonLines } from "./jsonl"
import { Event, type StoredEvent } from "../../core/event.schema"
import { isRefused, transition } from "../../core/machine"
import { initialState, SchedulerState } from "../../core/state"
import { AirPaths } from "../../core/air-paths"

/**
 * Read-only access to a run on disk, for the views (status, events, dashboard). The engine process owns
 * the files; nothing here writes. State is the fold of events.jsonl with the machine's own `transition`,
 * so a view shows exactly what the Scheduler believes; the snapshot is used only when there is no log.
 */
export namespace RunData {
  export function stateDir(root: string): string {
    return AirPaths.state(root)
  }
  export function eventsFile(root: string): string {
    return join(stateDir(root), "events.jsonl")
  }
  export function snapshotFile(root: string): string {
    return join(stateDir(root), "scheduler-state.json")
  }
  export function evidenceRoot(root: string): string {
    return AirPaths.evidence(root)
  }

  /** One line of the log as a view sees it: the event, and whether the machine applied it. */
  export type Entry = { event: StoredEvent; refused?: string; /** the line as written */ raw?: string }

  /** events.jsonl read as it grows, from byte `from` (the views' one way to follow the log, through the store's reader). */
  export function eventTail(root: string, from = 0): JsonLines.Tail {
    return new JsonLines.Tail(eventsFile(root), from)
  }

  /** Parses one line of events.jsonl; a problem is returned as text naming the line. */
  export function parseLine(line: string, lineNo: number, file: string): StoredEvent | string {
    let raw: unknown
    try {
      raw = JSON.parse(line)
    } catch (err) {
      return `${file}:${lineNo}: not valid JSON (${(err as Error).message}); the line is skipped`
    }
    const parsed = Event.safeParse(raw)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      return `${file}:${lineNo}: not an event this version knows (${issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "invalid"}); the line is skipped`
    }
    const seq = typeof (raw as { seq?: unknown }).seq === "number" ? (raw as { seq: number }).seq : lineNo
    return { ...parsed.data, seq } as StoredEvent
  }

  /** Folds the log incrementally: the dashboard keeps one of these and feeds it what is appended. */
  export class Follower {
    state: SchedulerState = initialState()
    readonly entries: Entry[] = []
    readonly warnings: string[] = []
    /** When each question the state holds or held was first asked (the time of the event that asked it): a question's age. */
    readonly askedAt = new Map<string, string>()
    private tail: JsonLines.Tail

    constructor(readonly root: string) {
      this.tail = eventTail(root)
    }

    get file(): string {
      return eventsFile(this.root)
    }

    /** Reads what was appended since the last call. Returns the new entries, or "reset" when the log shrank. */
    poll(): Entry[] | "reset" {
      const lines = this.tail.read()
      if (lines === "reset") return "reset"
      const added: Entry[] = []
      for (const { text: line, lineNo } of lines) {
        const event = parseLine(line, lineNo, this.file)
        if (typeof event === "string") {
          this.warnings.push(event)
          continue
        }
        const result = transition(this.state, event)
        const entry: Entry = isRefused(result) ? { event, refused: result.refused, raw: line } : { event, raw: line }
        if (!isRefused(result)) {
          if (result.state.questions !== this.state.questions)
            for (const q of result.state.questions) if (!this.askedAt.has(q.questionId)) this.askedAt.set(q.questionId, event.at)
          this.state = result.state
        }
        this.entries.push(entry)
        added.push(entry)
      }
      return added
    }

    /** A line without its newline at the end of the file: being written now, or torn by a crash. */
    tornTail(): boolean {
      return this.tail.hasPartialLine()
    }
  }

  export type Loaded = {
    /** "log": folded from events.jsonl; "snapshot": read from scheduler-state.json; "none": no run. */
    source: "log" | "snapshot" | "none"
    state: SchedulerState
    entries: Entry[]
    warnings: string[]
  }

  export function load(root: string): Loaded {
    const follower = new Follower(root)
    if (existsSync(follower.file)) {
      follower.poll()
      return { source: "log", state: follower.state, entries: follower.entries, warnings: follower.warnings }
    }
    const snap = readSnapshot(root)
    if (typeof snap === "string") return { source: "none", state: initialState(), entries: [], warnings: [snap] }
    if (snap) return { source: "snapshot", state: snap, entries: [], warnings: [] }
    return { source: "none", state: initialState(), entries: [], warnings: [] }
  }

  /** The snapshot, plain or wrapped as `{ state }`; undefined when absent, a message when unreadable. */
  export function readSnapshot(root: string): SchedulerState | string | undefined {
    const file = snapshotFile(root)
    if (!existsSync(file)) return undefined
    try {
      const raw = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>
      const candidate = raw && typeof raw === "object" && "state" in raw && !("stage" in raw) ? raw.state : raw
      const parsed = SchedulerState.safeParse(candidate)
      if (!parsed.success) return `${file}: not a scheduler state this version knows (${parsed.error.issues[0]?.message ?? "invalid"})`
      return parsed.data
    } catch (err) {
      return `${file}: not valid JSON (${(err as Error).message})`
    }
  }

  // ── evidence ──────────────────────────────────────────────────────────────────────────────────

  export type GateLine = { gate: string; passed: boolean; ran?: boolean; ms?: number; summary?: string; logPath?: string; reused?: { tests: number; savedMs: number } }
  export type GateReportFile = {
    taskId: string
    attempt: number
    passed: boolean
    failedGate?: string
    message: string
    gates: GateLine[]
    changedFiles?: string[]
    /** `inherited`: the task's base already had it (recorded, not blamed); `tool`: cppcheck when absent. */
    findings?: { file: string; line: number; severity: string; id: string; message: string; tool?: string; inherited?: boolean }[]
    /** Failing tests that failed on the baseline too (the test gate did not blame the task for them). */
    inheritedTests?: string[]
  }
  export type Attempt = {
    attempt: number
    report: GateReportFile | null
    /** Findings the task's base already had (recorded, not blamed): the dashboard shows "3 inherited". */
    inherited: number
    /** The logs of the gates that ran, in their order (see `logsOf`). */
    logs: GateLog[]
  }
  /**
   * One log of a gate run: `key` is its file's name without the extension (build, test, cppcheck, clang-tidy,
   * diff), `gate` the gate that wrote it (null while the run has no report yet), `text` null when it is not on disk.
   */
  export type GateLog = { gate: string | null; key: string; text: string | null }
  export type ReviewFile = {
    taskId: string
    verdict: "pass" | "fail"
    rows: { designRef: string; code: string; status: string; note?: string }[]
    findings?: string[]
  }

  const LOG_LIMIT = 256 * 1024

  /** The first `limit` bytes of a file as text, marked when cut (with how much more, and where); null when absent. */
  export function readHead(file: string, limit = LOG_LIMIT): string | null {
    if (!existsSync(file)) return null
    const size = statSync(file).size
    if (size <= limit) return readFileSync(file, "utf8")
    const buf = Buffer.alloc(limit)
    const fd = openSync(file, "r")
    try {
      readSync(fd, buf, 0, limit, 0)
    } finally {
      closeSync(fd)
    }
    return buf.toString("utf8") + `\n… (${size - limit} more bytes in ${file})`
  }

  function readJson<T>(file: string): T | null {
    const text = readHead(file, 4 * 1024 * 1024)
    if (text === null) return null
    try {
      return JSON.parse(text) as T
    } catch {
      return null
    }
  }

  /** Gate runs of a task, oldest first, found on disk under evidence/<task>/attempt-<n>/. */
  export function attempts(root: string, taskId: string): Attempt[] {
    const dir = join(evidenceRoot(root), taskId)
    if (!safeId(taskId) || !existsSync(dir)) return []
    const numbers = readdirSync(dir)
      .map((name) => /^attempt-(\d+)$/.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b)
    return numbers.map((n) => {
      const at = join(dir, `attempt-${n}`)
      const report = readJson<GateReportFile>(join(at, "report.json"))
      return {
        attempt: n,
        report,
        inherited: (report?.findings ?? []).filter((f) => f.inherited).length,
        logs: logsOf(at, report),
      }
    })
  }

  /**
   * The logs of a gate run as its report names them (each gate's `logPath`, read from this directory): a gate
   * added to the registry shows its log with no list here or in a view. A run still going has no report yet: the
   * logs written so far, by file name.
   */
  function logsOf(at: string, report: GateReportFile | null): GateLog[] {
    const log = (file: string, gate: string | null): GateLog => ({ gate, key: file.replace(/\.[^.]+$/, ""), text: readHead(join(at, file)) })
    if (report) return report.gates.flatMap((g) => (g.logPath ? [log(basename(g.logPath), g.gate)] : []))
    return readdirSync(at)
      .filter((f) => /\.(log|patch)$/.test(f))
      .sort()
      .map((f) => log(f, null))
  }

  /**
   * The report of a task's gate run `run` (the state's gateRuns), without reading its logs; without a
   * run number, the highest one on disk.
   */
  export function lastGateReport(root: string, taskId: string, run?: number): GateReportFile | null {
    const dir = join(evidenceRoot(root), taskId)
    if (!safeId(taskId) || !existsSync(dir)) return null
    const last =
      run ??
      readdirSync(dir)
        .map((name) => /^attempt-(\d+)$/.exec(name))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => Number(m[1]))
        .sort((a, b) => b - a)[0]
    if (last === undefined || last < 1) return null
    return readJson<GateReportFile>(join(dir, `attempt-${last}`, "report.json"))
  }

  export function review(root: string, taskId: string): ReviewFile | null {
    if (!safeId(taskId)) return null
    return readJson<ReviewFile>(join(evidenceRoot(root), taskId, "review.json"))
  }

  /** Task ids become directory names; anything else is never joined to a path. */
  export function safeId(id: string): boolean {
    return /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(id) && !id.includes("..")
  }
}
