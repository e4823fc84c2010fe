import type { RunReport } from "../scheduler/runtime/report/run-report"
import { DeployLines } from "../text/deploy-lines"
import type { SchedulerState, TaskRuntime } from "../scheduler/core/state"
import type { WorkerRole } from "../scheduler/core/vocabulary"
import { isShippedGate, SHIPPED_GATE_IDS } from "./gate-descriptors"
import type { RunData } from "../scheduler/runtime/store/run-data"
import { ProgramEvidence } from "../scheduler/runtime/verify/program-evidence"
import { runStatus, waitingFor as waitingForState, type RunWord, type Waiting as RunWaiting } from "../text/run-status"
import { gateFacts, type GateFacts } from "./gate-words"
import { GateProgress } from "../scheduler/runtime/store/gate-progress"
import type { CheckReuse } from "./check-reuse"
import { MoneyLines } from "../text/money-lines"

/**
 * What a person needs to know about a run, as data (`aircoding status --json`, the dashboard); its lines for
 * people are view-text.ts, its terminal page (`aircoding status`, the air_status tool) view-render.ts. Building
 * the view is pure: time is the `now` given, or the time of the last event, never a clock.
 */
/** A gate's failure has facts: a shipped gate's, or one the project added that its last gate report names. */
function failureFacts(source: string, report: RunData.GateReportFile | null | undefined): GateFacts | null {
  const named = report?.failedGate === source
  return isShippedGate(source) || named ? gateFacts(source, named ? report : null) : null
}

export namespace RunView {
  /** `ran: false`: a tool gate with nothing to run (cppcheck disabled, no .clang-tidy, no C++ file changed). */
  export type GateLine = { gate: string; passed: boolean; ran?: boolean; ms?: number; summary?: string; reused?: { tests: number; savedMs: number } }
  export type Session = { sessionId: string; role: WorkerRole | "reviewer"; attempt: number | null; at: string; requests: number | null }

  export type Task = {
    id: string
    title: string
    kind: string | null
    phase: number | null
    deps: string[]
    state: string
    role: string | null
    /** The session working on the task now (worker or reviewer); null when none is. */
    session: string | null
    /** Every session that worked on the task, oldest first (known when the log was read). */
    sessions: Session[]
    elapsedMs: number | null
    attempts: number
    repairs: number
    stalls: number
    /** The last gate run: from its report.json when present, else from the state. */
    gates: GateLine[]
    gateRun: number
    /** The raw message stays for tools (and in the evidence); `facts` is what the views word. */
    lastFailure: { source: string; message: string; facts: GateFacts | null } | null
    merged: { commit: string; tag: string } | null
    waitingOn: string | null
    /** The gate command running now and how far it got (runtime/gates/progress.ts); absent when none runs. */
    progress?: Progress | null
    /** A ui or service task's evidence files of its last gate run (screenshots, window tree, pcap, summary); absent for others. */
    evidence?: Evidence
  }

  /** `dir` and `path` absolute; `rel` from `dir`. */
  export type Evidence = { gateRun: number; dir: string; files: { kind: ProgramEvidence.FileKind; path: string; rel: string }[] }

  /** A running build or test: its step, the tool's count or percentage, and the time since it started. */
  export type Progress = { gate: string; command: string; step: string; done: number | null; total: number | null; percent: number | null; elapsedMs: number; updatedAt: string }

  /** The baseline's or the final check's command running now, with its progress as a task's gates show it. */
  export type CheckProgress = Progress & { check: GateProgress.Check }

  export type Waiting = RunWaiting

  export type Status = {
    kind: "aircoding.status"
    version: 1
    /**
     * The one run status word (src/text/run-status.ts), or "interrupted": the log says the run is at work but
     * its process is gone (src/read/run-liveness.ts), so nothing runs until `resume` is typed.
     */
    status: RunWord | "interrupted" | "error"
    /** The command that resumes an interrupted run; absent otherwise. */
    resume?: string
    runId: string | null
    /** The Scheduler's stage: a detail for tools, not shown as a second status. */
    stage: string
    requirement: string
    paused: boolean
    frozen: string | null
    eventCount: number
    lastEventAt: string | null
    tasks: Task[]
    budgets: {
      repairBudget: number | null
      stallRetries: number | null
      concurrency: number | null
      wallClockMs: number | null
      active: number
      perTask: { id: string; repairs: number; left: number | null }[]
      modelRequests: { total: number; byAgent: Record<string, number> }
      runBudgetSpent: boolean
      /** What the run cost in USD (the engine's prices), per task, role and session, against its money limit. */
      money?: MoneyLines.Money
      /** The run's job budget for builds and tests (jobs.json), when the run has one. */
      jobs?: { size: number; inUse: number; waiting: number; peakInUse: number; timeoutMs: number | null }
    }
    waitingFor: Waiting[]
    questions: { questionId: string; taskId: string | null; text: string }[]
    /** Per deploy target of a deployable run (absent when it deployed nothing). */
    deploy?: DeployLines.Target[]
    /** Model calls waiting for the engine's retry (`model.retrying`) or the run's rate-limit pause (`rate.limited`), and when the next attempt is. */
    retries?: Retry[]
    /** Set when the run's baseline or its final check reused a recorded result instead of building and testing. */
    reusedChecks?: CheckReuse.Checks
    /** The baseline or the final check running now (absent when neither runs). */
    checks?: CheckProgress[]
  }

  export type Retry = { taskId: string | null; role: string | null; nextAt: string }

  export type Input = {
    state: SchedulerState
    /** The log, when it was read: gives the sessions of each task. */
    entries?: readonly RunData.Entry[]
    /** Gate reports by task (the last one of each), read from evidence/. */
    gateReports?: Record<string, RunData.GateReportFile | null>
    modelRequests?: Record<string, number>
    requestsBySession?: Record<string, number>
    /** ISO time for the elapsed time of tasks still in flight; default: the time of the last event. */
    now?: string
    /** The run's job budget (jobs.json). */
    jobs?: { size: number; inUse: number; waiting: number; peakInUse: number; timeout?: { ms: number } }
    /** Progress files of running gates, by task (src/scheduler/runtime/store/gate-progress.ts). */
    progress?: Record<string, GateProgress.File>
    /** The baseline's and the final check's reuses (src/read/check-reuse.ts). */
    reusedChecks?: CheckReuse.Checks
    /** Whether the run's process still runs (src/read/run-liveness.ts); absent: the log is trusted as it is. */
    process?: { state: "live" | "gone" | "unknown"; resume: string }
    /** The program evidence of ui and service tasks, by task (src/scheduler/runtime/verify/program-evidence.ts). */
    programEvidence?: Record<string, ProgramEvidence.Evidence | null>
  }

  /**
   * The log says the run is at work (or its final check has not ended) while its process is gone. A run that
   * waits for the user, is paused or has ended says so truthfully without a process.
   */
  export function isInterrupted(state: SchedulerState, process: Input["process"]): boolean {
    if (process?.state !== "gone" || state.stage === "idle") return false
    if (state.finished) return state.finalCheck === null
    const word = runStatus(state).word
    return word === "running" || word === "planning"
  }

  const TERMINAL = new Set(["merged", "blocked", "invalidated"])

  export function build(input: Input): Status {
    const { state } = input
    const nodes = new Map((state.graph?.tasks ?? []).map((n) => [n.id, n]))
    const sessions = sessionsByTask(input.entries ?? [], input.requestsBySession)
    const interrupted = isInterrupted(state, input.process)
    // Nothing has moved since the process died: times stop at its last event instead of climbing with the clock.
    const nowMs = Date.parse((interrupted ? undefined : input.now) ?? state.lastAt ?? "") || null
    const config = state.config
    const tasks: Task[] = state.tasks.map((rt) => {
      const node = nodes.get(rt.id)
      const report = input.gateReports?.[rt.id] ?? null
      return {
        id: rt.id,
        title: node?.title ?? rt.id,
        kind: node?.kind ?? null,
        phase: node?.phase ?? null,
        deps: node?.deps ?? [],
        state: rt.status,
        role: rt.role,
        session: rt.reviewSessionId ?? rt.sessionId,
        sessions: sessions.get(rt.id) ?? [],
        elapsedMs: elapsed(rt, nowMs),
        attempts: rt.attempts,
        repairs: rt.repairs,
        stalls: rt.stalls,
        gates: report ? report.gates.map((g) => ({ gate: g.gate, passed: g.passed, ...(g.ran === false ? { ran: false } : {}), ms: g.ms, summary: g.summary, ...(g.reused ? { reused: { tests: g.reused.tests, savedMs: g.reused.savedMs } } : {}) })) : gatesFromState(rt),
        gateRun: report?.attempt ?? rt.gateRuns,
        lastFailure: rt.lastFailure
          ? {
              source: rt.lastFailure.source,
              message: rt.lastFailure.message,
              facts: failureFacts(rt.lastFailure.source, report),
            }
          : null,
        merged: rt.merged,
        waitingOn: rt.waitingOn,
        // A task's gates, or its merge build (the same commands, on the integration head), running now.
        progress: !interrupted && (rt.status === "gating" || rt.status === "merging") ? progressOf(input.progress?.[rt.id], input.now) : null,
        ...evidenceOf(input.programEvidence?.[rt.id]),
      }
    })
    const byAgent = input.modelRequests ?? {}
    const checks: CheckProgress[] = interrupted
      ? []
      : (Object.keys(GateProgress.CHECK_IDS) as GateProgress.Check[]).flatMap((check) => {
          const progress = progressOf(input.progress?.[GateProgress.CHECK_IDS[check]], input.now)
          return progress ? [{ check, ...progress }] : []
        })
    const run = runStatus(state)
    const status: Status["status"] = interrupted ? "interrupted" : run.word
    const resume = interrupted ? input.process!.resume : undefined
    return {
      kind: "aircoding.status",
      version: 1,
      status,
      ...(resume ? { resume } : {}),
      runId: state.runId,
      stage: state.stage,
      requirement: state.requirement,
      paused: state.paused,
      frozen: state.frozen?.text ?? null,
      eventCount: state.eventCount,
      lastEventAt: state.lastAt,
      tasks,
      budgets: {
        repairBudget: config?.repairBudget ?? null,
        stallRetries: config?.stallRetries ?? null,
        concurrency: config?.concurrency ?? null,
        wallClockMs: config?.wallClockMs ?? null,
        active: interrupted ? 0 : state.active.length,
        perTask: state.tasks.map((rt) => ({ id: rt.id, repairs: rt.repairs, left: config ? Math.max(0, config.repairBudget - rt.repairs) : null })),
        modelRequests: { total: Object.values(byAgent).reduce((a, b) => a + b, 0), byAgent },
        runBudgetSpent: state.runBudgetSpent,
        money: MoneyLines.of(state),
        ...(input.jobs
          ? { jobs: { size: input.jobs.size, inUse: input.jobs.inUse, waiting: input.jobs.waiting, peakInUse: input.jobs.peakInUse, timeoutMs: input.jobs.timeout?.ms ?? null } }
          : {}),
      },
      // An interrupted run waits for nobody's work but the person's: its questions, then the resume command.
      waitingFor: resume ? [...run.waitingFor.filter((w) => w.kind === "question"), { kind: "interrupted", resume }] : run.waitingFor,
      questions: state.questions.map((q) => ({ questionId: q.questionId, taskId: q.taskId, text: q.text })),
      ...(state.deploy ? { deploy: DeployLines.of(state) } : {}),
      // A dead process retries nothing.
      retries: interrupted ? [] : retries(input.entries ?? [], nowMs),
      ...(input.reusedChecks && (input.reusedChecks.baseline || input.reusedChecks.final) ? { reusedChecks: input.reusedChecks } : {}),
      ...(checks.length ? { checks } : {}),
    }
  }

  function evidenceOf(e: ProgramEvidence.Evidence | null | undefined): { evidence?: Evidence } {
    if (!e) return {}
    return { evidence: { gateRun: e.attempt, dir: e.dir, files: ProgramEvidence.files(e).map((f) => ({ kind: f.kind, path: f.path, rel: f.rel })) } }
  }

  /**
   * Whether the view changes with the clock alone (no event): a gate, a merge build, the baseline or the final
   * check may be running, whose progress file moves and whose time ticks; or a model call waits for its retry.
   * The TUI and the dashboard read the run again every second while it does.
   */
  export function moves(state: SchedulerState, v: Pick<Status, "status" | "retries">): boolean {
    if (v.retries?.length) return true
    if (v.status === "interrupted") return false
    return state.active.length > 0 || state.baseline?.status === "running" || (state.finished !== null && state.finalCheck === null)
  }

  /**
   * Waits for the model provider still in the future: the run's rate-limit pause (`rate.limited`, until
   * `rate.eased` ends it) and each session's engine retry (`model.retrying`), the latest per task, or per
   * role for a session of no task (the Architect's). Any later event of a task (a report, a dispatch, gates)
   * ends that task's wait; so does the time of the next attempt passing.
   */
  function retries(entries: readonly RunData.Entry[], nowMs: number | null): Retry[] {
    const latest = new Map<string, Retry | null>()
    for (const { event: e, refused } of entries) {
      if (refused) continue
      if (e.type === "rate.limited") latest.set("run", { taskId: null, role: null, nextAt: e.until })
      else if (e.type === "rate.eased") latest.set("run", null)
      else if (e.type === "model.retrying") latest.set(e.taskId ?? `role:${e.role}`, { taskId: e.taskId ?? null, role: e.role, nextAt: e.nextAt })
      else if ("taskId" in e && typeof e.taskId === "string" && latest.has(e.taskId)) latest.set(e.taskId, null)
    }
    return [...latest.values()].filter((r): r is Retry => r !== null && (nowMs === null || Date.parse(r.nextAt) > nowMs))
  }

  /** A summary from RunReport has no sessions, times or gates: those columns stay empty. */
  export function fromSummary(s: RunReport.Summary): Status {
    const byAgent = s.modelRequests
    return {
      kind: "aircoding.status",
      version: 1,
      status: s.status,
      runId: s.runId,
      stage: s.stage,
      requirement: "",
      paused: false,
      frozen: null,
      eventCount: 0,
      lastEventAt: null,
      tasks: s.tasks.map((task) => ({
        id: task.id,
        title: task.title,
        kind: null,
        phase: null,
        deps: [],
        state: task.state,
        role: null,
        session: null,
        sessions: [],
        elapsedMs: null,
        attempts: task.attempts,
        repairs: task.repairs,
        stalls: 0,
        gates: [],
        gateRun: 0,
        lastFailure: null,
        merged: null,
        waitingOn: null,
      })),
      budgets: {
        repairBudget: null,
        stallRetries: null,
        concurrency: null,
        wallClockMs: null,
        active: 0,
        perTask: s.tasks.map((task) => ({ id: task.id, repairs: task.repairs, left: null })),
        modelRequests: { total: Object.values(byAgent).reduce((a, b) => a + b, 0), byAgent },
        runBudgetSpent: false,
        ...(s.money ? { money: s.money } : {}),
      },
      waitingFor: s.status === "done" ? [{ kind: "nothing" }] : s.questions.map((q) => ({ kind: "question" as const, questionId: q.questionId, taskId: null, text: q.text })),
      questions: s.questions.map((q) => ({ ...q, taskId: null })),
      ...(s.deploy ? { deploy: s.deploy } : {}),
    }
  }

  function progressOf(file: GateProgress.File | undefined, now: string | undefined): Progress | null {
    if (!file) return null
    const started = Date.parse(file.startedAt)
    const at = Date.parse(now ?? file.updatedAt)
    return {
      gate: file.gate,
      command: file.command,
      step: file.step,
      done: file.done,
      total: file.total,
      percent: file.percent,
      elapsedMs: Number.isNaN(started) || Number.isNaN(at) ? 0 : Math.max(0, at - started),
      updatedAt: file.updatedAt,
    }
  }

  function elapsed(rt: TaskRuntime, nowMs: number | null): number | null {
    const start = rt.history.find((h) => h.from === "pending" && h.to !== "pending" && h.to !== "invalidated" && h.to !== "blocked")
    if (!start) return null
    const startMs = Date.parse(start.at)
    let endMs = nowMs
    if (TERMINAL.has(rt.status)) {
      const last = rt.history[rt.history.length - 1]
      endMs = last ? Date.parse(last.at) : nowMs
    }
    if (endMs === null || Number.isNaN(startMs) || Number.isNaN(endMs)) return null
    return Math.max(0, endMs - startMs)
  }

  function gatesFromState(rt: TaskRuntime): GateLine[] {
    if (rt.evidence) {
      return SHIPPED_GATE_IDS.filter((g) => rt.evidence![g] !== undefined).map((gate) => ({ gate, passed: true }))
    }
    if (rt.lastFailure && isShippedGate(rt.lastFailure.source)) return [{ gate: rt.lastFailure.source, passed: false }]
    return []
  }

  function sessionsByTask(entries: readonly RunData.Entry[], requests?: Record<string, number>): Map<string, Session[]> {
    const out = new Map<string, Session[]>()
    const add = (taskId: string, s: Session) => out.set(taskId, [...(out.get(taskId) ?? []), s])
    for (const { event: e, refused } of entries) {
      if (refused) continue
      if (e.type === "task.dispatched")
        add(e.taskId, { sessionId: e.sessionId, role: e.role, attempt: e.attempt, at: e.at, requests: requests ? requests[e.sessionId] ?? 0 : null })
      if (e.type === "review.started")
        add(e.taskId, { sessionId: e.sessionId, role: "reviewer", attempt: null, at: e.at, requests: requests ? requests[e.sessionId] ?? 0 : null })
    }
    return out
  }

  export function waitingFor(state: SchedulerState): Waiting[] {
    return waitingForState(state)
  }
}
