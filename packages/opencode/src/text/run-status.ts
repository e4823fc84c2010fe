import { baselineHolds } from "../scheduler/core/baseline"
import { waitsOnlyForPerson } from "../scheduler/core/person-waits"
import type { SchedulerState } from "../scheduler/core/state"

/**
 * The one derivation of a run's status, shared by `aircoding status`, air_status, the dashboard, the
 * TUI and the exit code of a headless run. Pure: the same state gives the same status everywhere.
 *
 * One vocabulary: a run that needs the user (the plan to confirm, a question to answer) is "waiting";
 * the Architect writing its plan or task graph is "planning"; tasks in flight are "running"; a run the
 * user paused is "paused"; a finished run is "done" or "blocked". The Scheduler's stage is kept as a
 * detail for tools, never shown as a second status.
 */
export const RUN_WORDS = ["idle", "planning", "waiting", "running", "paused", "blocked", "done"] as const
export type RunWord = (typeof RUN_WORDS)[number]

/** What a run waits for, most pressing first: what needs the user comes before what needs time. */
export type Waiting =
  | { kind: "nothing" | "idle" | "plan" | "graph" | "paused" | "baseline" }
  | { kind: "confirm"; summary: string }
  | { kind: "question"; questionId: string; taskId: string | null; text: string }
  | { kind: "frozen"; text: string }
  | { kind: "milestone"; phase: number; final?: boolean }
  | { kind: "adr"; adr: string }
  | { kind: "worker"; taskId: string; role: string; sessionId: string | null }
  | { kind: "gates" | "review" | "consult" | "merging"; taskId: string }
  | { kind: "mergeQueue"; taskIds: string[] }
  | { kind: "ready"; taskIds: string[] }
  | { kind: "deploy"; targets: string[] }
  /** The run's process is gone (a kill, a quit): nothing runs until this command resumes it (views only, src/read/run-liveness.ts). */
  | { kind: "interrupted"; resume: string }

type RunStatus = {
  word: RunWord
  runId: string | null
  /** The Scheduler's stage (idle, planning, confirming, …): a detail, not a second status. */
  stage: SchedulerState["stage"]
  /** The user must act (confirm the plan, answer a question) before the run can go on. */
  needsUser: boolean
  waitingFor: Waiting[]
  tasks: { total: number; merged: number; blocked: number; active: number }
}

export function runWord(state: SchedulerState): RunWord {
  // A run that ended blocked stays "blocked" even with its question open: nothing moves until the
  // user answers (its waitingFor names the question), and it exits 2 like a waiting run.
  if (state.finished) return state.finished.status
  if (state.stage === "idle") return "idle"
  if (state.stage === "confirming" || state.questions.length > 0) return "waiting"
  if (state.paused) return "paused"
  if (state.stage === "planning" || state.stage === "confirmed") return "planning"
  return "running"
}

export function runStatus(state: SchedulerState): RunStatus {
  const word = runWord(state)
  return {
    word,
    runId: state.runId,
    stage: state.stage,
    needsUser: word === "waiting" || state.questions.length > 0,
    waitingFor: waitingFor(state),
    tasks: {
      total: state.tasks.length,
      merged: state.tasks.filter((t) => t.status === "merged").length,
      blocked: state.tasks.filter((t) => t.status === "blocked").length,
      active: state.active.length,
    },
  }
}

/**
 * The one exit code of a run — `aircoding run`, `--resume`, the tests; the TUI and the dashboard show the
 * same `runWord` — read from the Scheduler's state, never from the main agent's last turn:
 * - 0: every task merged and the final check passed, even if Main's last request then failed; or no run
 *   was started at all and the engine ended well (Main answered a question about the code);
 * - 2: the run waits for the user (a plan to confirm, a question — a blocked task, a failed baseline —,
 *   a pause) or ended blocked;
 * - 1: anything else — the run stopped before it settled, its final check failed, or the engine failed
 *   before a run started. Usage errors exit 1 too (src/cli/args.ts).
 * `final` stands in for the final check's event when the check was run outside the Scheduler (a resume of
 * a run whose process died before it); `engineFailed` matters only when no run started.
 */
export function exitCodeOf(state: SchedulerState | undefined, opts: { engineFailed?: boolean; final?: { passed: boolean } | null } = {}): 0 | 1 | 2 {
  if (!state || state.stage === "idle") return opts.engineFailed ? 1 : 0
  switch (runWord(state)) {
    case "done": {
      const passed = state.finalCheck ? state.finalCheck.status === "passed" : opts.final?.passed
      return passed ? 0 : 1
    }
    case "waiting":
    case "blocked":
    case "paused":
      return 2
    default:
      return 1
  }
}

/**
 * Where a headless run's process may end, whatever its main agent is doing: "waits" when nothing can move
 * until a person acts (the process prints the questions and exits 2) — a question stops only what waits on
 * it, the rest of the run goes on (issue 39 item 8); with `exitOnQuestion` the first open question is
 * enough, as before —, "ended" once the run finished and its final check is recorded; undefined while the
 * Scheduler still works (or no run has started).
 */
export function headlessEnd(state: SchedulerState, opts: { exitOnQuestion?: boolean } = {}): "waits" | "ended" | undefined {
  if (state.stage === "idle") return undefined
  if (state.finished) return state.finalCheck !== null ? "ended" : undefined
  if (opts.exitOnQuestion && (state.questions.length > 0 || state.paused)) return "waits"
  return waitsOnlyForPerson(state) ? "waits" : undefined
}

export function waitingFor(state: SchedulerState): Waiting[] {
  switch (state.stage) {
    case "idle":
      return [{ kind: "idle" }]
    case "planning":
      return [{ kind: "plan" }]
    case "confirming":
      return [{ kind: "confirm", summary: state.planSummary ?? "" }]
    case "confirmed":
      return [{ kind: "graph" }]
  }
  const out: Waiting[] = state.questions.map((q) => ({ kind: "question", questionId: q.questionId, taskId: q.taskId, text: q.text }))
  if (state.stage === "finished") return out.length ? out : [{ kind: "nothing" }]
  if (state.frozen) out.push({ kind: "frozen", text: state.frozen.text })
  if (state.paused) out.push({ kind: "paused" })
  if (state.milestone) out.push(state.milestone.final ? { kind: "milestone", phase: state.milestone.phase, final: true } : { kind: "milestone", phase: state.milestone.phase })
  for (const edit of state.adrEdits ?? []) out.push({ kind: "adr", adr: edit.adr })
  if (state.baseline?.status === "running") out.push({ kind: "baseline" })
  const byId = new Map(state.tasks.map((rt) => [rt.id, rt]))
  for (const id of state.active) {
    const rt = byId.get(id)
    if (!rt) continue
    if (rt.status === "running" || rt.status === "debugging") out.push({ kind: "worker", taskId: id, role: rt.role ?? "executor", sessionId: rt.sessionId })
    else if (rt.status === "gating") out.push({ kind: "gates", taskId: id })
    else if (rt.status === "reviewing") out.push({ kind: "review", taskId: id })
    else if (rt.status === "consulting") out.push({ kind: "consult", taskId: id })
    else if (rt.status === "merging") out.push({ kind: "merging", taskId: id })
  }
  if (state.mergeQueue.length) out.push({ kind: "mergeQueue", taskIds: [...state.mergeQueue] })
  // Ready tasks held by the baseline (running, or failed and waiting for the answer) wait for it, not a slot.
  if (state.ready.length && !state.paused && !state.frozen && !baselineHolds(state)) out.push({ kind: "ready", taskIds: [...state.ready] })
  const deploying = state.stage === "deploying" ? (state.deploy?.targets ?? []).filter((d) => d.status === "running").map((d) => d.name) : []
  if (deploying.length) out.push({ kind: "deploy", targets: deploying })
  return out
}
