/**
 * Where a bench run's execution time goes, read from its event log and evidence (orchestration.figures.ts):
 * each task's phases (dispatch → report → gates → review → merge), the wait for a slot's next dispatch,
 * and the merge builds the merge queue ran. Not a *.figures.ts file: it registers nothing.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { median } from "./figures"
import { StepTimes } from "../src/scheduler/runtime/gates/step-times"

export type LoggedEvent = { type: string; at: string; taskId?: string }

export function readEvents(dir: string): LoggedEvent[] {
  const file = join(dir, ".air", "local", "state", "events.jsonl")
  const events: LoggedEvent[] = []
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue
    try {
      const parsed = JSON.parse(line)
      if (typeof parsed?.type === "string" && typeof parsed?.at === "string") events.push(parsed)
    } catch {
      // a torn last line would be the store's business; the bench only reads what is whole
    }
  }
  return events
}

/** For each `from` event of a task, the time to the first later `to` event of the same task. */
export function latencies(events: readonly LoggedEvent[], from: string, to: string): number[] {
  const out: number[] = []
  events.forEach((event, i) => {
    if (event.type !== from || !event.taskId) return
    const next = events.slice(i + 1).find((e) => e.type === to && e.taskId === event.taskId)
    if (next) out.push(Date.parse(next.at) - Date.parse(event.at))
  })
  return out
}

/** A task's first pass, in ms from graph.accepted (the bench's tasks pass every step once). */
export interface TaskTimeline {
  id: string
  /** The slot it took became free (graph.accepted, or another task's review.reported) → task.dispatched. */
  slotWait: number
  dispatched: number
  reported: number
  gated: number
  reviewed: number
  mergeStarted: number
  merged: number
}

/** The phases whose medians the bench prints; `slotWait` is where the Scheduler leaves a slot idle. */
export const PHASES = {
  slotWait: (t: TaskTimeline) => t.slotWait,
  executor: (t: TaskTimeline) => t.reported - t.dispatched,
  gates: (t: TaskTimeline) => t.gated - t.reported,
  review: (t: TaskTimeline) => t.reviewed - t.gated,
  mergeWait: (t: TaskTimeline) => t.mergeStarted - t.reviewed,
  merge: (t: TaskTimeline) => t.merged - t.mergeStarted,
} as const

/**
 * Every task's timeline. A task gives its slot back at review.reported (core/draft.ts `workingCount`: a task
 * queued for its merge no longer counts), so the k-th dispatch could have happened at the k-th slot to come free.
 */
export function timelines(events: readonly LoggedEvent[], concurrency: number): TaskTimeline[] {
  const accepted = events.find((e) => e.type === "graph.accepted")
  if (!accepted) return []
  const t0 = Date.parse(accepted.at)
  const first = (type: string, id: string) => {
    const e = events.find((x) => x.type === type && x.taskId === id)
    return e ? Date.parse(e.at) - t0 : NaN
  }
  const ids = events.filter((e) => e.type === "task.dispatched" && e.taskId).map((e) => e.taskId!)
  const tasks = [...new Set(ids)].map((id) => ({
    id,
    slotWait: 0,
    dispatched: first("task.dispatched", id),
    reported: first("worker.reported", id),
    gated: first("gates.passed", id),
    reviewed: first("review.reported", id),
    mergeStarted: first("merge.started", id),
    merged: first("merge.succeeded", id),
  }))
  const freed = [...Array<number>(concurrency).fill(0), ...tasks.map((t) => t.reviewed).filter((x) => !Number.isNaN(x))].sort((a, b) => a - b)
  const byDispatch = [...tasks].sort((a, b) => a.dispatched - b.dispatched)
  byDispatch.forEach((t, k) => (t.slotWait = t.dispatched - (freed[k] ?? t.dispatched)))
  return byDispatch
}

/** "phase median (max)" for each phase, in ms. */
export function phaseSummary(tasks: readonly TaskTimeline[]): string {
  if (!tasks.length) return "no tasks"
  return Object.entries(PHASES)
    .map(([name, of]) => {
      const xs = tasks.map(of).filter((x) => !Number.isNaN(x))
      return `${name} ${Math.round(median(xs))} (max ${Math.round(Math.max(...xs))})`
    })
    .join(", ")
}

/** One line a task, times in seconds from graph.accepted. */
export function timelineTable(tasks: readonly TaskTimeline[]): string[] {
  const s = (ms: number) => (Number.isNaN(ms) ? "    -" : (ms / 1000).toFixed(2).padStart(5))
  const head = "task   slot-wait dispatched reported  gated reviewed merge> merged"
  return [head, ...tasks.map((t) => `${t.id.padEnd(6)} ${s(t.slotWait)}     ${s(t.dispatched)}      ${s(t.reported)}  ${s(t.gated)}    ${s(t.reviewed)}  ${s(t.mergeStarted)}  ${s(t.merged)}`)]
}

export interface MergeBuilds {
  /** Merge builds that ran (a candidate whose tree the gates built is not built again: no result.json). */
  count: number
  /** Their total `ms` (the build and test commands on the candidate). */
  totalMs: number
  failed: number
}

/** The merge builds a run made, from `.air/local/evidence/<task>/merge-<n>/result.json`. */
export function mergeBuilds(dir: string): MergeBuilds {
  const evidence = join(dir, ".air", "local", "evidence")
  const out: MergeBuilds = { count: 0, totalMs: 0, failed: 0 }
  if (!existsSync(evidence)) return out
  for (const task of readdirSync(evidence, { withFileTypes: true })) {
    if (!task.isDirectory()) continue
    const taskDir = join(evidence, task.name)
    for (const entry of readdirSync(taskDir)) {
      const file = join(taskDir, entry, "result.json")
      if (!entry.startsWith("merge-") || !existsSync(file)) continue
      const result = JSON.parse(readFileSync(file, "utf8")) as { ms?: number; passed?: boolean }
      out.count++
      out.totalMs += typeof result.ms === "number" ? result.ms : 0
      if (result.passed === false) out.failed++
    }
  }
  return out
}

/**
 * Where a gate's time went over a run's tasks (each task's first attempt, `<gate>-steps.json`, gates/step-times.ts):
 * per step the median of its time and of the part spent before its commands' processes started (job budget,
 * sandbox start), one "step median (wait median)" each, in ms.
 */
export function gateSteps(dir: string, gate: string): string {
  const evidence = join(dir, ".air", "local", "evidence")
  if (!existsSync(evidence)) return "no evidence"
  const byStep = new Map<string, { ms: number[]; wait: number[] }>()
  const totals: number[] = []
  for (const task of readdirSync(evidence)) {
    const file = join(evidence, task, "attempt-1", StepTimes.fileName(gate))
    if (!existsSync(file)) continue
    const parsed = StepTimes.File.safeParse(JSON.parse(readFileSync(file, "utf8")))
    if (!parsed.success) continue
    totals.push(parsed.data.ms)
    const sums = new Map<string, { ms: number; wait: number }>()
    for (const s of parsed.data.steps) {
      const sum = sums.get(s.step) ?? { ms: 0, wait: 0 }
      sum.ms += s.ms
      sum.wait += s.commands.reduce((w, c) => w + Math.max(0, c.ms - c.runMs), 0)
      sums.set(s.step, sum)
    }
    for (const [step, sum] of sums) {
      const all = byStep.get(step) ?? { ms: [], wait: [] }
      all.ms.push(sum.ms)
      all.wait.push(sum.wait)
      byStep.set(step, all)
    }
  }
  if (!totals.length) return "no step times"
  const parts = [...byStep].map(([step, all]) => `${step} ${Math.round(median(all.ms))} (wait ${Math.round(median(all.wait))})`)
  return `${gate} gate ${Math.round(median(totals))} ms over ${totals.length} task(s): ${parts.join(", ")}`
}

/**
 * What the builds of a run did (Ninja's lines in each build.log): per task's first gate run the median compiles and
 * links and the median run time of its configure and build commands, then the merge builds' (a task's `merge-<n>/`
 * and a batch's `_merge/<ids>.<n>/`). A slot's build of a one-file change still links every test binary that links
 * the library it changed: this line says how much of a build that is.
 */
export function buildWork(dir: string): string {
  const evidence = join(dir, ".air", "local", "evidence")
  if (!existsSync(evidence)) return "no evidence"
  const read = (log: string) => {
    const text = readFileSync(log, "utf8")
    const runs = [...text.matchAll(/# exit \d+ after ([\d.]+) s/g)].map((m) => Number(m[1]))
    return { compiles: (text.match(/Building \w+ object/g) ?? []).length, links: (text.match(/Linking \w+ (executable|shared|static)/g) ?? []).length, runs }
  }
  const tasks: ReturnType<typeof read>[] = []
  const merges: (ReturnType<typeof read> & { ms: number })[] = []
  for (const task of readdirSync(evidence, { withFileTypes: true })) {
    if (!task.isDirectory()) continue
    const first = join(evidence, task.name, "attempt-1", "build.log")
    if (existsSync(first)) tasks.push(read(first))
    for (const entry of readdirSync(join(evidence, task.name))) {
      const at = join(evidence, task.name, entry)
      if (!(entry.startsWith("merge-") || task.name === "_merge") || !existsSync(join(at, "result.json")) || !existsSync(join(at, "build.log"))) continue
      const result = JSON.parse(readFileSync(join(at, "result.json"), "utf8")) as { ms?: number }
      merges.push({ ...read(join(at, "build.log")), ms: result.ms ?? Number.NaN })
    }
  }
  const m = (xs: number[]) => median(xs.filter((x) => !Number.isNaN(x)))
  const line = (rows: ReturnType<typeof read>[]) =>
    `median ${m(rows.map((r) => r.compiles))} compiles, ${m(rows.map((r) => r.links))} links; configure ${m(rows.map((r) => r.runs[0] ?? Number.NaN)).toFixed(1)} s, build ${m(rows.map((r) => r.runs[1] ?? Number.NaN)).toFixed(1)} s (their processes' own time)`
  return `build gates of ${tasks.length} task(s): ${line(tasks)}; ${merges.length} merge build(s): ${line(merges)}, ${(m(merges.map((r) => r.ms)) / 1000).toFixed(1)} s with their tests`
}
