import type { RunReport } from "../scheduler/runtime/report/run-report"
import { DeployLines } from "../text/deploy-lines"
import type { SchedulerState, TaskRuntime } from "../scheduler/core/state"
import type { WorkerRole } from "../scheduler/core/vocabulary"
import { isBookkeepingGate, isShippedGate, SHIPPED_GATE_IDS } from "./gate-descriptors"
import type { RunData } from "../scheduler/runtime/store/run-data"
import { ProgramEvidence } from "../scheduler/runtime/verify/program-evidence"
import { runStatus, waitingFor as waitingForState, type RunWord, type Waiting as RunWaiting } from "../text/run-status"
import { failureText, gateFacts, type GateFacts } from "./gate-words"
import { Labels } from "./labels"
import { TerminalText } from "../text/terminal-text"
import { t, tCount, type Key, type Lang } from "../text/words"
import { GateProgress } from "../scheduler/runtime/store/gate-progress"
import type { CheckReuse } from "./check-reuse"
import { durationText } from "../text/duration"
import { MoneyLines } from "../text/money-lines"

/**
 * What a person needs to know about a run, as data (`aircoding status --json`, the dashboard) and as
 * text (`aircoding status`, the air_status tool). Building the view is pure: time is the `now` given,
 * or the time of the last event, never a clock.
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

  /** A task's evidence files, a line each under the directory they are in: whole, never cut (a path is copied as it stands). */
  export function evidenceLines(lang: Lang, task: Pick<Task, "id" | "evidence">): string[] {
    const e = task.evidence
    if (!e) return []
    return [`  ${t(lang, "tasks.evidence", { id: task.id, n: e.gateRun, dir: e.dir })}`, ...e.files.map((f) => `    ${t(lang, `evidence.${f.kind}`)}: ${f.rel}`)]
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

  /** "T-2: the executor's model call retries at 10:04:05", "the architect's model call retries at …", "model calls paused until …". */
  export function retryText(lang: Lang, r: Retry): string {
    if (r.taskId) return t(lang, "run.retry.task", { id: r.taskId, role: Labels.role(lang, r.role ?? "worker"), at: TerminalText.clock(r.nextAt) })
    if (r.role) return t(lang, "run.retry.role", { role: Labels.role(lang, r.role), at: TerminalText.clock(r.nextAt) })
    return t(lang, "run.retry.run", { at: TerminalText.clock(r.nextAt) })
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

  /** "build [12/40] 30% · 1m05s · Building CXX object src/calc.cpp.o": a running gate in one line. */
  export function progressText(lang: Lang, p: Progress): string {
    const count = p.done !== null && p.total !== null ? `[${p.done}/${p.total}] ` : ""
    const percent = p.percent !== null ? `${p.percent}% ` : ""
    const head = `${Labels.gate(p.gate, lang)} ${count}${percent}`.trimEnd()
    return [head, durationText(p.elapsedMs), p.step].filter(Boolean).join(" · ")
  }

  /** "baseline: build [3/10] 30% · 12s · Building CXX object …": the run's own check in one line, as a task's gates. */
  export function checkProgressText(lang: Lang, c: CheckProgress): string {
    return `${t(lang, `check.${c.check}`)}: ${progressText(lang, c)}`
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

  export function waitingText(lang: Lang, w: Waiting, titles?: ReadonlyMap<string, string>): string {
    switch (w.kind) {
      case "nothing":
      case "idle":
      case "plan":
      case "graph":
      case "paused":
      case "baseline":
        return t(lang, `waiting.${w.kind}`)
      case "confirm":
        return t(lang, "waiting.confirm", { summary: TerminalText.oneLine(w.summary, 100) })
      case "question":
        return t(lang, "waiting.question", { questionId: w.questionId, text: TerminalText.oneLine(w.text, 240) })
      case "frozen":
        return t(lang, "waiting.frozen", { text: TerminalText.oneLine(w.text, 100) })
      case "milestone":
        return t(lang, w.final ? "waiting.finalReview" : "waiting.milestone", { phase: w.phase })
      case "adr":
        return t(lang, "waiting.adr", { adr: w.adr })
      case "worker":
        // A person knows a task by its title; the session id stays in --json and the events.
        if (w.sessionId && titles?.has(w.taskId)) return t(lang, "waiting.workerTitled", { role: Labels.role(lang, w.role), id: w.taskId, title: TerminalText.truncate(titles.get(w.taskId)!, 40) })
        return w.sessionId
          ? t(lang, "waiting.worker", { role: Labels.role(lang, w.role), id: w.taskId, session: w.sessionId })
          : t(lang, "waiting.workerStarting", { role: Labels.role(lang, w.role), id: w.taskId })
      case "gates":
      case "review":
      case "consult":
      case "merging":
        return t(lang, `waiting.${w.kind}`, { id: w.taskId })
      case "deploy":
        return t(lang, "waiting.deploy", { targets: w.targets.join(", ") })
      case "mergeQueue":
        return t(lang, "waiting.mergeQueue", { ids: w.taskIds.join(", ") })
      case "ready":
        return t(lang, "waiting.ready", { ids: w.taskIds.join(", ") })
      case "interrupted":
        return t(lang, "waiting.interrupted", { command: w.resume })
    }
  }

  /** A task's last failure for people: "cppcheck gate failed: 1 finding(s), 1 error(s), in src/parser.cpp". */
  export function lastFailureText(lang: Lang, failure: NonNullable<Task["lastFailure"]>): string {
    return isShippedGate(failure.source) || failure.facts
      ? t(lang, "ev.gates.failed", { gate: Labels.gate(failure.source, lang), what: failureText(lang, failure) })
      : failureText(lang, failure)
  }

  /**
   * Where the run stands in one line, for a sidebar, a toast or a prompt: the status word and what
   * it waits for first ("waiting — waiting for your confirmation of the plan: …").
   */
  export function headline(state: SchedulerState, lang: Lang): string {
    const run = runStatus(state)
    const first = run.waitingFor[0]
    const status = t(lang, `status.${run.word}`)
    return first && first.kind !== "nothing" ? t(lang, "run.headline", { status, what: waitingText(lang, first) }) : status
  }

  export function gatesText(lang: Lang, gates: readonly GateLine[]): string {
    // A bookkeeping gate (commit, diff, …) is shown only when it is what failed; a tool gate that had nothing
    // to run is no ✓ (a project without .clang-tidy, cppcheck disabled).
    const shown = gates.filter((g) => !g.passed || (g.ran !== false && !isBookkeepingGate(g.gate)))
    if (!shown.length) return t(lang, "gates.none")
    return shown.map((g) => (g.passed && g.reused ? reusedText(lang, Labels.gate(g.gate, lang), g.reused) : `${Labels.gate(g.gate, lang)} ${g.passed ? "✓" : "✗"}`)).join(" ")
  }

  /** "test ✓ reused (20 tests, 1m15s saved)"; without the count when the reuse holds no test result (an analysis). */
  export function reusedText(lang: Lang, what: string, reused: { tests: number; savedMs: number }): string {
    return reused.tests > 0
      ? tCount(lang, "gates.reused", reused.tests, { gate: what, tests: reused.tests, saved: durationText(reused.savedMs) })
      : t(lang, "gates.reusedSaved", { gate: what, saved: durationText(reused.savedMs) })
  }

  /**
   * "baseline ✓ reused (…)", "final check ✓ reused (…)": the run's own checks that ran nothing. `short`
   * leaves the test count out (a 36-column sidebar; the status has it) but keeps the time saved.
   */
  export function reusedCheckLines(lang: Lang, v: Pick<Status, "reusedChecks">, short = false): string[] {
    const checks = v.reusedChecks ?? {}
    const line = (what: string, reuse: CheckReuse.Reuse) => (short ? t(lang, "gates.reusedSaved", { gate: what, saved: durationText(reuse.savedMs) }) : reusedText(lang, what, reuse))
    return [
      ...(checks.baseline ? [line(t(lang, "check.baseline"), checks.baseline)] : []),
      ...(checks.final ? [line(t(lang, "check.final"), checks.final)] : []),
    ]
  }

  function isState(x: unknown): x is SchedulerState {
    return typeof x === "object" && x !== null && "eventCount" in x && "tasks" in x && "stage" in x && !("kind" in x)
  }
  function isSummary(x: unknown): x is RunReport.Summary {
    return typeof x === "object" && x !== null && "evidenceRoot" in x && "modelRequests" in x
  }

  /**
   * The status as text. Takes a view built by `build`, a SchedulerState (pure: elapsed times up to
   * the last event, no files read) or a RunReport summary.
   */
  export function render(input: Status | SchedulerState | RunReport.Summary, lang: Lang, width = 80): string {
    const v: Status = isState(input) ? build({ state: input }) : isSummary(input) ? fromSummary(input) : input
    if (v.stage === "idle" && v.tasks.length === 0 && v.runId === null) return t(lang, "waiting.heading") + ": " + t(lang, "waiting.idle") + "\n"
    const W = Math.max(50, width)
    const lines: string[] = []
    const flags = [v.paused && v.status !== "paused" ? t(lang, "run.paused") : null, v.frozen ? t(lang, "run.frozen", { text: TerminalText.oneLine(v.frozen, 80) }) : null].filter(Boolean)
    lines.push(
      TerminalText.truncate(
        t(lang, "run.header", { runId: v.runId ?? "?", status: t(lang, `status.${v.status}`) }) + (flags.length ? ` — ${flags.join("; ")}` : ""),
        W,
      ),
    )
    // Wrapped, not cut, on a narrow terminal: three lines say what was asked.
    if (v.requirement) lines.push(...TerminalText.wrap(t(lang, "run.requirement", { text: TerminalText.oneLine(v.requirement, 3 * W) }), W, "  ").slice(0, 3))
    if (v.lastEventAt) lines.push(t(lang, "run.updated", { count: v.eventCount, at: TerminalText.stamp(v.lastEventAt) }))
    lines.push("", t(lang, "tasks.heading"))
    if (!v.tasks.length) lines.push(t(lang, "tasks.none"))
    else {
      // TASK  TITLE…  STATE  ELAPSED  LAST GATES: the title takes what the terminal leaves; sessions are in --json and the events.
      const cells = v.tasks.map((task) => [
        task.id,
        task.title,
        // A second attempt or a repair is said beside the state; one attempt needs no column.
        Labels.state(lang, task.state) + (task.attempts > 1 || task.repairs > 0 ? ` ×${task.attempts}${v.budgets.repairBudget !== null && task.repairs > 0 ? ` (${task.repairs}↻)` : ""}` : ""),
        durationText(task.elapsedMs),
        W >= 100 && task.gates.length && task.gateRun ? `#${task.gateRun} ${gatesText(lang, task.gates)}` : gatesText(lang, task.gates),
      ])
      const header = ["col.task", "col.title", "col.state", "col.elapsed", "col.gates"].map((k) => t(lang, k as Key))
      const rows = [header, ...cells]
      const widths = header.map((_, c) => Math.max(...rows.map((r) => TerminalText.displayWidth(r[c]!))))
      const fixed = widths.reduce((a, b, c) => a + (c === 1 ? 0 : b), 0) + 2 * (header.length - 1)
      widths[1] = Math.max(12, Math.min(widths[1]!, W - fixed))
      const lastAt = widths.slice(0, -1).reduce((a, b) => a + b + 2, 0)
      const natural = header.map((_, c) => Math.max(...rows.map((r) => TerminalText.displayWidth(r[c]!))))
      if (natural[1]! <= widths[1]! && lastAt + natural[4]! <= W)
        for (const r of rows) lines.push(r.map((cell, c) => (c === r.length - 1 ? cell : TerminalText.pad(cell, widths[c]!))).join("  ").trimEnd())
      else {
        // Too narrow for the table: each task on its own lines (id, state and time, then its title, then its
        // gates), wrapped rather than cut, so an 80-column terminal still reads every title and every gate.
        const lead = Math.max(...cells.map((r) => TerminalText.displayWidth(r[0]!)))
        for (const [id, title, state, elapsed, gates] of cells) {
          const shown = (cell: string | undefined) => !!cell && cell !== "—"
          lines.push(...TerminalText.wrap(`${TerminalText.pad(id!, lead)}  ${[state, elapsed, title].filter(shown).join(" · ")}`, W, " ".repeat(lead + 2)))
          if (shown(gates)) lines.push(...TerminalText.wrap(`${" ".repeat(lead + 2)}${gates}`, W, " ".repeat(lead + 2)))
        }
      }
      for (const task of v.tasks) {
        if (task.progress) lines.push(TerminalText.truncate(`  ${task.id}: ${progressText(lang, task.progress)}`, W))
        if (task.lastFailure && task.state !== "merged") lines.push(TerminalText.truncate(`  ${task.id}: ${TerminalText.oneLine(lastFailureText(lang, task.lastFailure), 2 * W)}`, W))
        if (task.waitingOn) lines.push(TerminalText.truncate(`  ${task.id}: ${t(lang, "tasks.waitsOn", { what: task.waitingOn })}`, W))
        lines.push(...evidenceLines(lang, task))
      }
    }
    for (const c of v.checks ?? []) lines.push(TerminalText.truncate(checkProgressText(lang, c), W))
    for (const line of reusedCheckLines(lang, v)) lines.push(TerminalText.truncate(line, W))
    const deploy = DeployLines.section(lang, v.deploy)
    if (deploy.length) lines.push("", ...deploy)
    lines.push("", t(lang, "budgets.heading"))
    for (const line of budgetLines(lang, v)) lines.push(...TerminalText.wrap("- " + line, W, "  "))
    lines.push("", t(lang, "waiting.heading"))
    for (const r of v.retries ?? []) lines.push(TerminalText.truncate("- " + retryText(lang, r), W))
    const titles = new Map(v.tasks.map((task) => [task.id, task.title]))
    for (const w of v.waitingFor) {
      // The resume command on a line of its own, whole (never wrapped or cut): it is typed, or copied, as it stands.
      if (w.kind === "interrupted") lines.push(...TerminalText.wrap("- " + t(lang, "waiting.interrupted.lead"), W, "  "), `    ${w.resume}`)
      else lines.push(...TerminalText.wrap("- " + waitingText(lang, w, titles), W, "  ").slice(0, 4))
    }
    return lines.join("\n") + "\n"
  }

  export function budgetLines(lang: Lang, v: Status): string[] {
    const lines: string[] = []
    const b = v.budgets
    if (b.repairBudget !== null) {
      const spent = b.perTask.filter((p) => p.repairs > 0).map((p) => t(lang, "budgets.repair.task", { id: p.id, used: p.repairs, budget: b.repairBudget!, left: p.left ?? "?" }))
      lines.push(t(lang, "budgets.repair", { budget: b.repairBudget, spent: spent.length ? spent.join(", ") : t(lang, "budgets.repair.none") }))
    }
    if (b.stallRetries !== null) lines.push(t(lang, "budgets.stall", { budget: b.stallRetries }))
    if (b.concurrency !== null) lines.push(t(lang, "budgets.concurrency", { active: b.active, cap: b.concurrency }))
    if (b.wallClockMs !== null) lines.push(t(lang, "budgets.wallclock", { cap: durationText(b.wallClockMs) }))
    const agents = Object.entries(b.modelRequests.byAgent).sort(([a], [c]) => a.localeCompare(c))
    lines.push(t(lang, "budgets.requests", { total: b.modelRequests.total, detail: agents.length ? ` (${agents.map(([a, n]) => `${Labels.role(lang, a)} ${n}`).join(", ")})` : "" }))
    if (b.money && MoneyLines.worthSaying(b.money)) lines.push(...MoneyLines.lines(lang, b.money))
    if (b.runBudgetSpent) lines.push(t(lang, "budgets.runSpent"))
    if (b.jobs)
      lines.push(
        t(lang, "budgets.jobs", { used: b.jobs.inUse, size: b.jobs.size, waiting: b.jobs.waiting, peak: b.jobs.peakInUse }) +
          (b.jobs.timeoutMs !== null ? t(lang, "budgets.jobs.timeout", { timeout: durationText(b.jobs.timeoutMs) }) : ""),
      )
    return lines
  }

}

/** The status as text; the air_status tool reuses it. */
export function renderStatus(summaryOrState: RunView.Status | SchedulerState | RunReport.Summary, lang: Lang = "en"): string {
  return RunView.render(summaryOrState, lang)
}