import { createHash, type Hash } from "node:crypto"
import * as fs from "node:fs"
import { join } from "node:path"
import { readWithBackup, removeStaleTemps, writeFileAtomicSync } from "./atomic"
import type { Command } from "../../core/command"
import { Event } from "../../core/event.schema"
import { acquireLock, type HeldLock } from "./lock"
import { Folder, transition } from "../../core/machine"
import { initialState, SchedulerState } from "../../core/state"
import { SCHEMA_VERSION } from "../../core/task.schema"
import { formatPath } from "../../core/validate"
import { Strict } from "../../core/strict"
import { RulesFingerprint } from "./rules-fingerprint"
import { JsonLines } from "./jsonl"
import { RunHolder } from "./run-holder"
import { AirPaths } from "../../core/air-paths"

type AppendResult = { state: SchedulerState; commands: Command[]; seq: number } | { refused: string }

interface StoreOptions {
  /** Write a snapshot after this many events (and on close). */
  snapshotEvery?: number
  lockTimeoutMs?: number
  /** How much of each logged event a replay checks: "envelope" (default) or "full" (the whole schema). */
  verify?: Verify
  /**
   * Set by the process that carries the run (not a reader opening the log for a moment): its lock names the
   * command that resumes the run, and holder.json keeps them for the views once the lock is gone (RunHolder).
   */
  runHolder?: { restart?: string }
}

/**
 * scheduler-state.json: the state after event `seq`, with two SHA-1 digests — `log`, of events.jsonl up to
 * and including that event, and `digest`, of the state's JSON. Opening checks the snapshot against the log
 * through them: same log prefix and an intact state text mean the snapshot is the fold of those events,
 * without serialising the fold again (megabytes for a large run). `verify: "full"` compares states too.
 */
interface Snapshot {
  schemaVersion: number
  seq: number
  log: string
  digest: string
  state: SchedulerState
}

/**
 * The Scheduler's durable state under <air>/local/state: events.jsonl is the truth (append-only, one event
 * per line, fsync'd before anyone acts on it); scheduler-state.json is a snapshot for readers; a lock file
 * keeps a second process out. Opening rebuilds state = fold(events) and checks the snapshot against it.
 */
export class Store {
  readonly warnings: string[]
  private fd: number | null
  private size: number
  private sinceSnapshot = 0
  private current: SchedulerState
  private lastSeq: number
  /** SHA-1 of events.jsonl as it stands, kept up to date line by line for the snapshot's `log` digest. */
  private readonly logHash: Hash

  private constructor(
    readonly dir: string,
    private readonly lock: HeldLock,
    private readonly options: Required<Omit<StoreOptions, "runHolder">>,
    opened: { state: SchedulerState; seq: number; size: number; warnings: string[]; logHash: Hash },
  ) {
    this.logHash = opened.logHash
    this.current = opened.state
    this.lastSeq = opened.seq
    this.size = opened.size
    this.warnings = [...lock.warnings, ...opened.warnings]
    this.fd = fs.openSync(this.eventsPath, "a")
  }

  static async open(airRoot: string, options: StoreOptions = {}): Promise<Store> {
    const dir = AirPaths.stateIn(airRoot)
    fs.mkdirSync(dir, { recursive: true })
    ignoreLocal(AirPaths.localIn(airRoot))
    const settings: Required<Omit<StoreOptions, "runHolder">> = { snapshotEvery: options.snapshotEvery ?? 200, lockTimeoutMs: options.lockTimeoutMs ?? 5_000, verify: options.verify ?? "envelope" }
    const lock = await acquireLock(RunHolder.lockPath(dir), {
      timeoutMs: settings.lockTimeoutMs,
      ...(options.runHolder?.restart ? { restart: options.runHolder.restart } : {}),
    })
    if (options.runHolder) recordHolder(dir, lock.info)
    try {
      const opened = load(dir, settings.verify)
      const store = new Store(dir, lock, settings, opened)
      // A damaged snapshot, or one the log does not back, must not live on as the backup: start afresh
      // from the log (the backup only ever spares a reader without the log a fold).
      if (opened.snapshot !== "good") fs.rmSync(store.snapshotPath, { force: true })
      if (opened.snapshot === "unusable") fs.rmSync(`${store.snapshotPath}.bak`, { force: true })
      if (opened.snapshotSeq !== opened.seq) store.snapshot()
      return store
    } catch (error) {
      lock.release()
      throw error
    }
  }

  get state(): SchedulerState {
    return this.current
  }

  /** The seq of the last event on disk. */
  get seq(): number {
    return this.lastSeq
  }

  get eventsPath(): string {
    return join(this.dir, "events.jsonl")
  }

  get snapshotPath(): string {
    return join(this.dir, "scheduler-state.json")
  }

  /**
   * Applies an event: a malformed or refused event is not written; an accepted one is on disk (fsync'd)
   * before its commands are returned, so no side effect ever runs for an event a crash could lose.
   */
  append(input: Event): AppendResult {
    if (this.fd === null) throw new Error("the store is closed")
    const parsed = Event.safeParse(input)
    if (!parsed.success)
      return { refused: Strict.visible(`malformed event: ${parsed.error.issues.map((i) => `${formatPath(i.path) || "(event)"}: ${i.message}`).join("; ")}`) }
    const result = transition(this.current, parsed.data)
    // A refusal quotes what it was sent: nothing in it may hide (a BOM in an id, a zero-width space).
    if ("refused" in result) return { refused: Strict.visible(result.refused) }
    const seq = this.lastSeq + 1
    let line: Buffer
    try {
      line = JsonLines.append(this.fd, { seq, ...parsed.data }, { fsync: true })
    } catch (error) {
      // Never leave half a line behind for the next event to be glued to.
      try {
        fs.ftruncateSync(this.fd, this.size)
      } catch {}
      throw error
    }
    this.size += line.length
    this.logHash.update(line)
    this.current = result.state
    this.lastSeq = seq
    if (++this.sinceSnapshot >= this.options.snapshotEvery) this.snapshot()
    return { state: result.state, commands: result.commands, seq }
  }

  snapshot(): void {
    writeFileAtomicSync(this.snapshotPath, snapshotText(this.lastSeq, this.logHash.copy().digest("hex"), this.current, this.size))
    this.sinceSnapshot = 0
  }

  close(): void {
    if (this.fd === null) return
    try {
      if (this.sinceSnapshot > 0) this.snapshot()
    } finally {
      fs.closeSync(this.fd)
      this.fd = null
      this.lock.release()
    }
  }
}

/** holder.json: the run's process as its lock names it, kept past the lock's release (RunHolder). */
function recordHolder(dir: string, info: HeldLock["info"]): void {
  try {
    writeFileAtomicSync(RunHolder.recordPath(dir), JSON.stringify(RunHolder.recordOf(info)) + "\n", { backup: false })
  } catch {
    // For the views only: the run goes on without it (they fall back to the lock and the log).
  }
}

/** Reads the log (repairing a torn tail), folds it, and compares the snapshot with the fold. */
/** good: the main snapshot is whole and backed by the log; main-damaged: the backup was used and is; unusable: neither. */
type SnapshotVerdict = "good" | "main-damaged" | "unusable"
type Loaded = { state: SchedulerState; seq: number; size: number; snapshotSeq: number; snapshot: SnapshotVerdict; warnings: string[]; logHash: Hash }

function load(dir: string, verify: Verify): Loaded {
  // The fast fold writes its arrays in place; if the log holds an event the rules refuse, fold again safely.
  return loadWith(dir, true, verify) ?? loadWith(dir, false, verify)!
}

/**
 * Every event was checked against the Event schema when it was appended, so a replay checks only the
 * envelope (a known type, a time); a line that fails JSON.parse, the envelope, or a rule is reported.
 * "full" runs the whole schema on every line again, at several times the cost.
 */
type Verify = "envelope" | "full"

const EVENT_TYPES: ReadonlySet<string> = new Set(Event.options.map((option) => option.shape.type.value))

function checkEventShape(record: unknown): Event {
  const value = record as { type?: unknown; at?: unknown } | null
  if (typeof value !== "object" || value === null) throw new Error("the line is not an object")
  if (typeof value.type !== "string" || !EVENT_TYPES.has(value.type)) throw new Error(`unknown event type ${JSON.stringify(value.type)}`)
  if (typeof value.at !== "string") throw new Error("the event has no time (at)")
  return value as Event
}

function parseEvent(record: unknown): Event {
  const parsed = Event.safeParse(record)
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join("; "))
  return parsed.data
}

function loadWith(dir: string, fast: boolean, verify: Verify): Loaded | null {
  const warnings: string[] = []
  const eventsPath = join(dir, "events.jsonl")
  const snapshotPath = join(dir, "scheduler-state.json")
  removeStaleTemps(snapshotPath)

  const snap = readWithBackup(snapshotPath, (text) => ({ ...peekSnapshot(text), text }))
  warnings.push(...snap.warnings)
  const snapshot = snap.value

  let buffer: Buffer
  try {
    buffer = fs.readFileSync(eventsPath)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    buffer = Buffer.alloc(0)
  }

  // A snapshot this version's rules wrote, of exactly this log's first bytes (same digest), is that prefix's
  // fold: every event in it was checked when it was appended and again when the snapshot was made. The replay
  // starts there and folds only the events after it; anything else folds the whole log.
  const start = fast ? resumeFrom(snapshot, buffer, verify) : undefined
  const folder = fast ? new Folder(start?.state ?? initialState()) : null
  let state = start?.state ?? initialState()
  let seq = start?.seq ?? 0
  let matched = (start ? true : null) as boolean | null
  let offset = start?.bytes ?? 0
  let goodEnd = offset
  const checkSnapshot = () => {
    if (!snapshot || matched !== null || seq !== snapshot.seq) return
    matched = snapshot.log === null || sha1(buffer.subarray(0, offset)) === snapshot.log
    if (matched && (snapshot.log === null || verify === "full")) matched = sameState(state, upgraded(parseSnapshot(snapshot.text).state))
  }
  checkSnapshot()
  for (const line of JsonLines.lines(buffer, offset)) {
    const { text, end, complete } = line
    const lineStart = line.start
    offset = end + 1
    if (text.trim() === "") {
      if (complete) goodEnd = offset
      continue
    }
    let record: { seq?: unknown } & Record<string, unknown>
    let event: Event
    try {
      if (!complete) throw new Error("the line has no end")
      record = JSON.parse(text)
      event = verify === "full" ? parseEvent(record) : checkEventShape(record)
    } catch (error) {
      if (!complete || offset >= buffer.length) {
        warnings.push(`events.jsonl: the last line (${end - lineStart} bytes after seq ${seq}) was cut off by a crash and is dropped: ${describe(error)}`)
        break
      }
      warnings.push(`events.jsonl: line at byte ${lineStart} (after seq ${seq}) is damaged and skipped: ${describe(error)}`)
      goodEnd = offset
      continue
    }
    if (typeof record.seq === "number" && record.seq !== seq + 1)
      warnings.push(`events.jsonl: seq ${record.seq} follows seq ${seq}; ${record.seq > seq + 1 ? "events are missing" : "an event is repeated"}`)
    if (folder) {
      // A refusal, or a malformed event that makes a rule throw, sends the whole load to the careful path.
      try {
        if (folder.apply(event) !== null) return null
      } catch {
        return null
      }
      state = folder.state
    } else {
      let result: ReturnType<typeof transition>
      try {
        result = transition(state, event)
      } catch (error) {
        result = { refused: `it is malformed (${describe(error)})` }
      }
      if ("refused" in result) warnings.push(`events.jsonl: seq ${String(record.seq)} (${event.type}) is refused by the rules and skipped: ${result.refused}`)
      else state = result.state
    }
    seq = typeof record.seq === "number" ? Math.max(seq + 1, record.seq) : seq + 1
    goodEnd = offset
    checkSnapshot()
  }

  if (goodEnd < buffer.length) {
    // Cut the torn tail off, so the next event starts on a line of its own.
    fs.truncateSync(eventsPath, goodEnd)
  }
  const logHash = start ? start.hash.update(buffer.subarray(start.bytes, goodEnd)) : createHash("sha1").update(buffer.subarray(0, goodEnd))

  if (snapshot) {
    if (snapshot.seq > seq)
      warnings.push(`scheduler-state.json reflects seq ${snapshot.seq} but the log ends at seq ${seq}; the log is the truth, the snapshot is rewritten`)
    else if (matched === false)
      warnings.push(`scheduler-state.json at seq ${snapshot.seq} does not match the log (it was made from other events, or its state differs from the fold); the log is the truth, the snapshot is rewritten`)
  }
  const verdict: SnapshotVerdict =
    snapshot === null ? (snap.warnings.length > 0 ? "unusable" : "good") : matched !== true ? "unusable" : snap.from === "backup" ? "main-damaged" : "good"
  return { state, seq, size: goodEnd, snapshotSeq: snapshot && matched && verdict === "good" ? snapshot.seq : -1, snapshot: verdict, warnings, logHash }
}

/**
 * The snapshot file's text, built around the state's JSON so that it is serialised once. `bytes` (the log's
 * length at `seq`) and `rules` (which rules folded it) let this version start a replay from it.
 */
function snapshotText(seq: number, log: string, state: SchedulerState, bytes: number): string {
  const stateText = asciiJson(JSON.stringify(state))
  const rules = RulesFingerprint.get()
  const resumable = rules ? `"bytes":${bytes},"rules":"${rules}",` : ""
  return `{"schemaVersion":${SCHEMA_VERSION},"seq":${seq},"log":"${log}",${resumable}"digest":"${sha1(stateText)}","state":${stateText}}`
}

/**
 * JSON text with every non-ASCII character as its `\u` escape: the same value, and a file that the reader
 * decodes, hashes and parses on the one-byte string paths. One "↔" or one Chinese requirement anywhere in the
 * state made the whole text two-byte: reopening a 10,000-task run's 18 MB snapshot spent 215 ms decoding it
 * and 280 ms parsing it, against 43 ms and 100 ms for the escaped text (measured; escaping costs 32 ms).
 */
function asciiJson(text: string): string {
  let out = ""
  let from = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    out += text.slice(from, i) + "\\u" + code.toString(16).padStart(4, "0")
    from = i + 1
  }
  return from === 0 ? text : out + text.slice(from)
}

const SNAPSHOT_HEAD = /^\{"schemaVersion":(\d+),"seq":(\d+),"log":"([0-9a-f]{40})",(?:"bytes":(\d+),"rules":"([0-9a-f]{40})",)?"digest":"([0-9a-f]{40})","state":/

/**
 * Reads a snapshot's envelope and checks its state against its digest, without parsing the state. A plain
 * `{ schemaVersion, seq, state }` (written by hand or by a tool) is accepted too, and compared in full.
 */
function peekSnapshot(text: string): { seq: number; log: string | null; resume?: { bytes: number; rules: string; stateAt: number } } {
  const head = SNAPSHOT_HEAD.exec(text)
  if (!head) {
    const plain = parseSnapshot(text)
    return { seq: plain.seq, log: null }
  }
  if (!text.endsWith("}")) throw new Error("it is cut short")
  if (Number(head[1]) !== SCHEMA_VERSION) throw new Error(`schemaVersion ${head[1]} is not ${SCHEMA_VERSION}`)
  if (sha1(text.slice(head[0].length, -1)) !== head[6]) throw new Error("its state does not match its digest")
  return { seq: Number(head[2]), log: head[3]!, ...(head[4] && head[5] ? { resume: { bytes: Number(head[4]), rules: head[5], stateAt: head[0].length } } : {}) }
}

function sha1(data: string | Uint8Array): string {
  return createHash("sha1").update(data).digest("hex")
}

function parseSnapshot(text: string): Snapshot {
  const value = JSON.parse(text) as Snapshot
  if (value.schemaVersion !== SCHEMA_VERSION) throw new Error(`schemaVersion ${String(value.schemaVersion)} is not ${SCHEMA_VERSION}`)
  if (typeof value.seq !== "number" || !value.state || typeof value.state !== "object") throw new Error("it lacks seq or state")
  return value
}

/**
 * A snapshot as this version reads it: one written before a field existed (or in an older shape, such as
 * one merge in flight rather than a batch) gets its defaults, so it still equals the fold of its log.
 */
function upgraded(state: SchedulerState): SchedulerState {
  const parsed = SchedulerState.safeParse(state)
  return parsed.success ? parsed.data : state
}

/** Both come from the same code, so their keys are in the same order and JSON text is a fair comparison. */
export function sameState(a: SchedulerState, b: SchedulerState): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * `.air/local/` (the log, evidence, worktrees) is never the user's to commit: a `.gitignore` inside it that
 * ignores everything, itself included, hides it from `git status` and `git add -A` from the first run,
 * in every clone and worktree, whatever `.git/info/exclude` holds.
 */
function ignoreLocal(local: string): void {
  const file = join(local, ".gitignore")
  if (fs.existsSync(file)) return
  try {
    writeFileAtomicSync(file, "# AirCoding's run state: never committed\n*\n")
  } catch {
    // Only a convenience for `git status`: the exclude entries still hide it (worktree.ts).
  }
}

/**
 * The snapshot's state and position, when a replay may start from it: it records where it stands in the log
 * (`bytes`), the log's first `bytes` are the ones it was made from (their SHA-1 is its `log`), and it was
 * folded by these very rules (`rules`). Undefined otherwise: the whole log is folded.
 */
function resumeFrom(
  snapshot: { seq: number; log: string | null; resume?: { bytes: number; rules: string; stateAt: number }; text: string } | null,
  buffer: Buffer,
  verify: Verify,
): { state: SchedulerState; seq: number; bytes: number; hash: Hash } | undefined {
  const resume = snapshot?.resume
  if (!snapshot || !resume || verify === "full" || snapshot.log === null) return undefined
  if (resume.rules !== RulesFingerprint.get() || resume.bytes > buffer.length) return undefined
  if (resume.bytes > 0 && buffer[resume.bytes - 1] !== 10) return undefined
  const hash = createHash("sha1").update(buffer.subarray(0, resume.bytes))
  if (hash.copy().digest("hex") !== snapshot.log) return undefined
  try {
    return { state: JSON.parse(snapshot.text.slice(resume.stateAt, -1)) as SchedulerState, seq: snapshot.seq, bytes: resume.bytes, hash }
  } catch {
    return undefined
  }
}

