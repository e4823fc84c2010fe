/**
 * Kills a process that writes the store with SIGKILL at random moments, again and again, and checks after
 * every kill that the store opens, says what it repaired, and holds exactly the fold of the surviving events.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bunBinary } from "../support/sandbox"
import { Event } from "../../src/scheduler/core/event.schema"
import { foldEvents } from "../../src/scheduler/core/fold"
import { sameState, Store } from "../../src/scheduler/runtime/store/store"

/** bun on PATH, else the one this workspace installs for development. */
export function findBun(): string | null {
  // The checkout's own bun (.tools, installed by ./start.sh) when none is on PATH.
  const candidates = [process.env.BUN_BIN, "bun", bunBinary(), join(process.env.HOME ?? "", ".bun/bin/bun")]
  for (const candidate of candidates) {
    if (!candidate) continue
    const probe = spawnSync(candidate, ["--version"], { encoding: "utf8" })
    if (probe.status === 0) return candidate
  }
  return null
}

export interface CrashReport {
  kills: number
  runsFinished: number
  eventsSurvived: number
  /** Kills after which the last line was also cut short, as a write that reached the disk only in part. */
  tornTails: number
  /** Kills after which the snapshot was also overwritten with garbage. */
  damagedSnapshots: number
  staleLocks: number
  /** Children that died by a signal or exit code of their own (not our SIGKILL): verified like a kill. */
  unplannedDeaths?: number
  failures: string[]
}

const EXPECTED_WARNINGS = [/cut off by a crash/, /took over a stale lock/]

type Damage = "torn" | "snapshot"

/**
 * A SIGKILL cannot split one write() in the page cache, but a power cut can leave part of the last line on
 * disk, and disks rot: now and then the harness does that damage itself, on top of the kill.
 */
function injectDamage(root: string): Damage | null {
  const dir = join(root, "local", "state")
  const r = Math.random()
  if (r < 0.3) {
    const path = join(dir, "events.jsonl")
    if (!fs.existsSync(path)) return null
    const text = fs.readFileSync(path)
    const lastStart = text.lastIndexOf(10, text.length - 2) + 1
    const lineLength = text.length - lastStart
    if (lineLength < 3) return null
    fs.truncateSync(path, lastStart + 1 + Math.floor(Math.random() * (lineLength - 2)))
    return "torn"
  }
  if (r < 0.4) {
    const path = join(dir, "scheduler-state.json")
    if (!fs.existsSync(path)) return null
    fs.writeFileSync(path, '{"schemaVersion":1,"seq":4,"state":{"stage":')
    return "snapshot"
  }
  return null
}

/** What survived on disk, read independently of the store: whole, valid lines only. */
function survivingEvents(eventsPath: string): Event[] {
  let text = ""
  try {
    text = fs.readFileSync(eventsPath, "utf8")
  } catch {
    return []
  }
  const lines = text.split("\n")
  if (!text.endsWith("\n")) lines.pop() // a torn tail
  const events: Event[] = []
  for (const line of lines) {
    if (line.trim() === "") continue
    const parsed = Event.safeParse(JSON.parse(line))
    if (!parsed.success) throw new Error(`a whole line of the log is invalid: ${line.slice(0, 200)}`)
    events.push(parsed.data)
  }
  return events
}

export interface CrashOptions {
  kills: number
  bun: string
  /** Longest wait between the store opening in the child and the kill. */
  maxDelayMs?: number
  /** Children killed side by side, each on its own store: most of a child's life is start-up, not CPU. */
  lanes?: number
  log?: (line: string) => void
}

export async function runCrashLoop(options: CrashOptions): Promise<CrashReport> {
  const report: CrashReport = { kills: 0, runsFinished: 0, eventsSurvived: 0, tornTails: 0, damagedSnapshots: 0, staleLocks: 0, failures: [] }
  const { child, cleanup } = bundleChild(options.bun)
  try {
    const lanes = Array.from({ length: options.lanes ?? 4 }, (_, i) => lane(i, child, options, report))
    await Promise.all(lanes)
  } finally {
    cleanup()
  }
  return report
}

/** One bundled file starts faster than a tree of TypeScript modules, and the child is started hundreds of times. */
function bundleChild(bun: string): { child: string; cleanup: () => void } {
  const source = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "crash-child.ts")
  const dir = fs.mkdtempSync(join(tmpdir(), "air-crash-child-"))
  const out = join(dir, "crash-child.js")
  const built = spawnSync(bun, ["build", source, "--target=bun", `--outfile=${out}`], { encoding: "utf8" })
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true })
  if (built.status === 0 && fs.existsSync(out)) return { child: out, cleanup }
  return { child: source, cleanup }
}

async function lane(index: number, child: string, options: CrashOptions, report: CrashReport): Promise<void> {
  let seed = 1 + index * 100_000
  let root = fs.mkdtempSync(join(tmpdir(), "air-crash-"))
  const maxDelay = options.maxDelayMs ?? 120
  let attempts = 0
  try {
    while (report.kills < options.kills && report.failures.length === 0 && attempts++ < options.kills * 3) {
      const delay = Math.floor(Math.random() * maxDelay)
      const outcome = await new Promise<{ killed: boolean; death: string | null; output: string }>((resolve) => {
        const proc = spawn(options.bun, [child, root, String(seed)], { stdio: ["ignore", "pipe", "pipe"] })
        let output = ""
        let timer: NodeJS.Timeout | undefined
        proc.stdout.on("data", (chunk) => {
          output += chunk
          // Kill at a random moment after the store opened: mid-append, mid-fsync, mid-snapshot.
          if (!timer && output.includes("ready")) timer = setTimeout(() => proc.kill("SIGKILL"), delay)
        })
        proc.stderr.on("data", (chunk) => (output += chunk))
        // "close", not "exit": the child's last output may still be in the pipe when it exits (a busy machine
        // read it late, and a run that finished looked like one that stopped without a word).
        proc.on("close", (code, signal) => {
          if (timer) clearTimeout(timer)
          resolve({ killed: signal === "SIGKILL", death: signal ?? (code ? `exit code ${code}` : null), output })
        })
      })
      if (outcome.killed) report.kills++
      else if (/finished/.test(outcome.output)) report.runsFinished++
      else if (outcome.death) {
        // The runtime itself died (a signal we did not send, e.g. on a machine out of memory): that is a
        // crash too, and the store must survive it like any other; it is counted, not a failure.
        report.unplannedDeaths = (report.unplannedDeaths ?? 0) + 1
        options.log?.(`lane ${index}: the child died by itself (${outcome.death}): ${outcome.output.slice(-500)}`)
      } else {
        report.failures.push(`the child stopped without being killed and without finishing: ${outcome.output.slice(-2000)}`)
        return
      }
      const injected = outcome.killed ? injectDamage(root) : null
      if (injected === "torn") report.tornTails++
      if (injected === "snapshot") report.damagedSnapshots++
      const stage = await verify(root, report, outcome.killed || Boolean(outcome.death), injected)
      if (stage === null) return
      options.log?.(`lane ${index} kill ${report.kills}: stage ${stage}`)
      if (!outcome.killed || stage === "finished") {
        // This run is over: start a fresh one, so the log stays small and every part of a run gets killed.
        fs.rmSync(root, { recursive: true, force: true })
        root = fs.mkdtempSync(join(tmpdir(), "air-crash-"))
        seed++
      }
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

/** Opens the store the child left and compares it with an independent fold of the surviving log. */
async function verify(root: string, report: CrashReport, killed: boolean, injected: Damage | null): Promise<string | null> {
  const at = `kill ${report.kills}${killed ? "" : " (run finished)"}`
  const eventsPath = join(root, "local", "state", "events.jsonl")
  const raw = fs.existsSync(eventsPath) ? fs.readFileSync(eventsPath, "utf8") : ""
  let expected
  let survived: Event[]
  try {
    survived = survivingEvents(eventsPath)
    const fold = foldEvents(survived)
    if (fold.refused.length > 0) throw new Error(`the log holds an event the rules refuse: ${fold.refused[0]!.reason}`)
    expected = fold.state
    report.eventsSurvived += survived.length
  } catch (error) {
    report.failures.push(`${at}: ${String(error)}`)
    return null
  }
  let store: Store
  try {
    store = await Store.open(root, { lockTimeoutMs: 2_000 })
  } catch (error) {
    report.failures.push(`${at}: the store did not open: ${String(error)}`)
    return null
  }
  try {
    const torn = raw.length > 0 && !raw.endsWith("\n")
    const allowed =
      injected === "snapshot"
        ? [...EXPECTED_WARNINGS, /scheduler-state.json is damaged/, /using its backup/]
        : injected === "torn"
          ? [...EXPECTED_WARNINGS, /the log ends at seq/] // the lost half-line may have been in the snapshot already
          : EXPECTED_WARNINGS
    for (const warning of store.warnings) {
      if (/stale lock/.test(warning)) report.staleLocks++
      if (!allowed.some((pattern) => pattern.test(warning))) report.failures.push(`${at}: unexpected warning: ${warning}`)
    }
    if (injected === "snapshot" && !store.warnings.some((w) => /scheduler-state.json is damaged/.test(w))) report.failures.push(`${at}: a damaged snapshot went unmentioned`)
    if (torn && !store.warnings.some((w) => /cut off by a crash/.test(w))) report.failures.push(`${at}: a torn tail was repaired silently`)
    if (!sameState(store.state, expected)) report.failures.push(`${at}: the store's state differs from the fold of the surviving events`)
    if (store.seq !== survived.length) report.failures.push(`${at}: store seq ${store.seq} but ${survived.length} events survived`)
  } finally {
    store.close()
  }
  return report.failures.length === 0 ? expected.stage : null
}
