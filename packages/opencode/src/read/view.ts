import type { RunReport } from "./run-report"
import { DeployLines } from "./deploy-lines"
import type { SchedulerState, TaskRuntime } from "../scheduler/core/state"
import type { WorkerRole } from "../scheduler/core/vocabulary"
import { isBookkeepingGate, isShippedGate, SHIPPED_GATE_IDS } from "./gate-descriptors"
import type { RunData } from "./run-data"
import { ProgramEvidence } from "./program-evidence"
import { runStatus, waitingFor as waitingForState, type RunWord, type Waiting as RunWaiting } from "./run-status"
import { failureText, faultText, gateFacts, gateLabel as gateWord, gateRunOf, type GateFacts } from "./gate-words"
import { list, t, tCount, tOr, type Key, type Lang } from "./words"
import { GateProgress } from "./gate-progress"
import type { CheckReuse } from "./check-reuse"
import { durationText } from "./duration"
import { MoneyLines } from "./money-lines"

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
     * The one run status word (src/read/run-status.ts), or "interrupted": the log says the run is at work but
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
    /** Progress files of running gates, by task (src/read/gate-progress.ts). */
    progress?: Record<string, GateProgress.File>
    /** The baseline's and the final check's reuses (src/read/check-reuse.ts). */
    reusedChecks?: CheckReuse.Checks
    /** Whether the run's process still runs (src/read/run-liveness.ts); absent: the log is trusted as it is. */
    process?: { state: "live" | "gone" | "unknown"; resume: string }
    /** The program evidence of ui and service tasks, by task (src/read/program-evidence.ts). */
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
    if (r.taskId) return t(lang, "run.retry.task", { id: r.taskId, role: roleLabel(lang, r.role ?? "worker"), at: clock(r.nextAt) })
    if (r.role) return t(lang, "run.retry.role", { role: roleLabel(lang, r.role), at: clock(r.nextAt) })
    return t(lang, "run.retry.run", { at: clock(r.nextAt) })
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
    const head = `${gateLabel(p.gate, lang)} ${count}${percent}`.trimEnd()
    return [head, duration(p.elapsedMs), p.step].filter(Boolean).join(" · ")
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

  // ── text ────────────────────────────────────────────────────────────────────────────────────────

  export function stateLabel(lang: Lang, state: string): string {
    return t(lang, `state.${state}` as Key) || state
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
        return t(lang, "waiting.confirm", { summary: oneLine(w.summary, 100) })
      case "question":
        return t(lang, "waiting.question", { questionId: w.questionId, text: oneLine(w.text, 240) })
      case "frozen":
        return t(lang, "waiting.frozen", { text: oneLine(w.text, 100) })
      case "milestone":
        return t(lang, w.final ? "waiting.finalReview" : "waiting.milestone", { phase: w.phase })
      case "adr":
        return t(lang, "waiting.adr", { adr: w.adr })
      case "worker":
        // A person knows a task by its title; the session id stays in --json and the events.
        if (w.sessionId && titles?.has(w.taskId)) return t(lang, "waiting.workerTitled", { role: roleLabel(lang, w.role), id: w.taskId, title: truncate(titles.get(w.taskId)!, 40) })
        return w.sessionId
          ? t(lang, "waiting.worker", { role: roleLabel(lang, w.role), id: w.taskId, session: w.sessionId })
          : t(lang, "waiting.workerStarting", { role: roleLabel(lang, w.role), id: w.taskId })
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
      ? t(lang, "ev.gates.failed", { gate: gateLabel(failure.source, lang), what: failureText(lang, failure) })
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

  export function roleLabel(lang: Lang, role: string): string {
    return tOr(lang, `role.${role}`, role)
  }

  /** A gate's name for people ("analysis" is cppcheck), in the view's language. */
  export function gateLabel(gate: string, lang: Lang = "en"): string {
    return gateWord(lang, gate)
  }

  export function gatesText(lang: Lang, gates: readonly GateLine[]): string {
    // A bookkeeping gate (commit, diff, …) is shown only when it is what failed; a tool gate that had nothing
    // to run is no ✓ (a project without .clang-tidy, cppcheck disabled).
    const shown = gates.filter((g) => !g.passed || (g.ran !== false && !isBookkeepingGate(g.gate)))
    if (!shown.length) return t(lang, "gates.none")
    return shown.map((g) => (g.passed && g.reused ? reusedText(lang, gateLabel(g.gate, lang), g.reused) : `${gateLabel(g.gate, lang)} ${g.passed ? "✓" : "✗"}`)).join(" ")
  }

  /** "test ✓ reused (20 tests, 1m15s saved)"; without the count when the reuse holds no test result (an analysis). */
  export function reusedText(lang: Lang, what: string, reused: { tests: number; savedMs: number }): string {
    return reused.tests > 0
      ? tCount(lang, "gates.reused", reused.tests, { gate: what, tests: reused.tests, saved: duration(reused.savedMs) })
      : t(lang, "gates.reusedSaved", { gate: what, saved: duration(reused.savedMs) })
  }

  /**
   * "baseline ✓ reused (…)", "final check ✓ reused (…)": the run's own checks that ran nothing. `short`
   * leaves the test count out (a 36-column sidebar; the status has it) but keeps the time saved.
   */
  export function reusedCheckLines(lang: Lang, v: Pick<Status, "reusedChecks">, short = false): string[] {
    const checks = v.reusedChecks ?? {}
    const line = (what: string, reuse: CheckReuse.Reuse) => (short ? t(lang, "gates.reusedSaved", { gate: what, saved: duration(reuse.savedMs) }) : reusedText(lang, what, reuse))
    return [
      ...(checks.baseline ? [line(t(lang, "check.baseline"), checks.baseline)] : []),
      ...(checks.final ? [line(t(lang, "check.final"), checks.final)] : []),
    ]
  }

  export const duration = durationText

  export function firstLine(text: string): string {
    return text.split(/\r?\n/).find((l) => l.trim()) ?? ""
  }

  export function oneLine(text: string, max: number): string {
    const flat = text.replace(/\s+/g, " ").trim()
    return displayWidth(flat) <= max ? flat : truncate(flat, max)
  }

  /** Terminal columns: CJK and full-width characters take two. */
  export function displayWidth(text: string): number {
    let w = 0
    for (const ch of text) w += wide(ch.codePointAt(0)!) ? 2 : 1
    return w
  }

  function wide(cp: number): boolean {
    return (
      (cp >= 0x1100 && cp <= 0x115f) ||
      (cp >= 0x2e80 && cp <= 0xa4cf) ||
      (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) ||
      (cp >= 0xfe30 && cp <= 0xfe4f) ||
      (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) ||
      (cp >= 0x20000 && cp <= 0x3fffd)
    )
  }

  export function truncate(text: string, max: number): string {
    if (displayWidth(text) <= max) return text
    let out = ""
    let w = 0
    for (const ch of text) {
      const cw = wide(ch.codePointAt(0)!) ? 2 : 1
      if (w + cw > max - 1) break
      out += ch
      w += cw
    }
    return out + "…"
  }

  /** The longest start of text that fits `width` columns (at least one character, so a loop over it ends). */
  function fit(text: string, width: number): string {
    let out = ""
    let w = 0
    for (const ch of text) {
      const cw = wide(ch.codePointAt(0)!) ? 2 : 1
      if (w + cw > width && out) break
      out += ch
      w += cw
    }
    return out
  }

  export function pad(text: string, width: number): string {
    return text + " ".repeat(Math.max(0, width - displayWidth(text)))
  }



  /** "2026-11-29T09:00:05.000Z" → "2026-11-29 09:00:05Z" */
  export function stamp(at: string | null): string {
    if (!at) return "—"
    const d = new Date(at)
    if (Number.isNaN(d.getTime())) return at
    return d.toISOString().slice(0, 19).replace("T", " ") + "Z"
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
    const flags = [v.paused && v.status !== "paused" ? t(lang, "run.paused") : null, v.frozen ? t(lang, "run.frozen", { text: oneLine(v.frozen, 80) }) : null].filter(Boolean)
    lines.push(
      truncate(
        t(lang, "run.header", { runId: v.runId ?? "?", status: t(lang, `status.${v.status}`) }) + (flags.length ? ` — ${flags.join("; ")}` : ""),
        W,
      ),
    )
    // Wrapped, not cut, on a narrow terminal: three lines say what was asked.
    if (v.requirement) lines.push(...wrap(t(lang, "run.requirement", { text: oneLine(v.requirement, 3 * W) }), W, "  ").slice(0, 3))
    if (v.lastEventAt) lines.push(t(lang, "run.updated", { count: v.eventCount, at: stamp(v.lastEventAt) }))
    lines.push("", t(lang, "tasks.heading"))
    if (!v.tasks.length) lines.push(t(lang, "tasks.none"))
    else {
      // TASK  TITLE…  STATE  ELAPSED  LAST GATES: the title takes what the terminal leaves; sessions are in --json and the events.
      const cells = v.tasks.map((task) => [
        task.id,
        task.title,
        // A second attempt or a repair is said beside the state; one attempt needs no column.
        stateLabel(lang, task.state) + (task.attempts > 1 || task.repairs > 0 ? ` ×${task.attempts}${v.budgets.repairBudget !== null && task.repairs > 0 ? ` (${task.repairs}↻)` : ""}` : ""),
        duration(task.elapsedMs),
        W >= 100 && task.gates.length && task.gateRun ? `#${task.gateRun} ${gatesText(lang, task.gates)}` : gatesText(lang, task.gates),
      ])
      const header = ["col.task", "col.title", "col.state", "col.elapsed", "col.gates"].map((k) => t(lang, k as Key))
      const rows = [header, ...cells]
      const widths = header.map((_, c) => Math.max(...rows.map((r) => displayWidth(r[c]!))))
      const fixed = widths.reduce((a, b, c) => a + (c === 1 ? 0 : b), 0) + 2 * (header.length - 1)
      widths[1] = Math.max(12, Math.min(widths[1]!, W - fixed))
      const lastAt = widths.slice(0, -1).reduce((a, b) => a + b + 2, 0)
      const natural = header.map((_, c) => Math.max(...rows.map((r) => displayWidth(r[c]!))))
      if (natural[1]! <= widths[1]! && lastAt + natural[4]! <= W)
        for (const r of rows) lines.push(r.map((cell, c) => (c === r.length - 1 ? cell : pad(cell, widths[c]!))).join("  ").trimEnd())
      else {
        // Too narrow for the table: each task on its own lines (id, state and time, then its title, then its
        // gates), wrapped rather than cut, so an 80-column terminal still reads every title and every gate.
        const lead = Math.max(...cells.map((r) => displayWidth(r[0]!)))
        for (const [id, title, state, elapsed, gates] of cells) {
          const shown = (cell: string | undefined) => !!cell && cell !== "—"
          lines.push(...wrap(`${pad(id!, lead)}  ${[state, elapsed, title].filter(shown).join(" · ")}`, W, " ".repeat(lead + 2)))
          if (shown(gates)) lines.push(...wrap(`${" ".repeat(lead + 2)}${gates}`, W, " ".repeat(lead + 2)))
        }
      }
      for (const task of v.tasks) {
        if (task.progress) lines.push(truncate(`  ${task.id}: ${progressText(lang, task.progress)}`, W))
        if (task.lastFailure && task.state !== "merged") lines.push(truncate(`  ${task.id}: ${oneLine(lastFailureText(lang, task.lastFailure), 2 * W)}`, W))
        if (task.waitingOn) lines.push(truncate(`  ${task.id}: ${t(lang, "tasks.waitsOn", { what: task.waitingOn })}`, W))
        lines.push(...evidenceLines(lang, task))
      }
    }
    for (const c of v.checks ?? []) lines.push(truncate(checkProgressText(lang, c), W))
    for (const line of reusedCheckLines(lang, v)) lines.push(truncate(line, W))
    const deploy = DeployLines.section(lang, v.deploy)
    if (deploy.length) lines.push("", ...deploy)
    lines.push("", t(lang, "budgets.heading"))
    for (const line of budgetLines(lang, v)) lines.push(...wrap("- " + line, W, "  "))
    lines.push("", t(lang, "waiting.heading"))
    for (const r of v.retries ?? []) lines.push(truncate("- " + retryText(lang, r), W))
    const titles = new Map(v.tasks.map((task) => [task.id, task.title]))
    for (const w of v.waitingFor) {
      // The resume command on a line of its own, whole (never wrapped or cut): it is typed, or copied, as it stands.
      if (w.kind === "interrupted") lines.push(...wrap("- " + t(lang, "waiting.interrupted.lead"), W, "  "), `    ${w.resume}`)
      else lines.push(...wrap("- " + waitingText(lang, w, titles), W, "  ").slice(0, 4))
    }
    return lines.join("\n") + "\n"
  }

  /** Word-wraps text to width columns (CJK characters break anywhere); later lines start with indent. */
  export function wrap(text: string, width: number, indent = ""): string[] {
    const out: string[] = []
    let line = ""
    for (const token of text.match(/[\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uffe6]|\s+|[^\s\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\uff00-\uffe6]+/g) ?? []) {
      if (displayWidth(line + token) <= width) {
        line += token
        continue
      }
      if (line.trim()) out.push(line.trimEnd())
      line = indent + (/^\s+$/.test(token) ? "" : token)
      // A word longer than the line (a path, a URL) is broken where the line ends, and goes on on the next line:
      // nothing of it is lost, and no "…" says it was cut, because it was not.
      while (displayWidth(line) > width && width > displayWidth(indent)) {
        const head = fit(line, width)
        out.push(head)
        line = indent + line.slice(head.length)
      }
    }
    if (line.trim()) out.push(line.trimEnd())
    return out
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
    if (b.wallClockMs !== null) lines.push(t(lang, "budgets.wallclock", { cap: duration(b.wallClockMs) }))
    const agents = Object.entries(b.modelRequests.byAgent).sort(([a], [c]) => a.localeCompare(c))
    lines.push(t(lang, "budgets.requests", { total: b.modelRequests.total, detail: agents.length ? ` (${agents.map(([a, n]) => `${roleLabel(lang, a)} ${n}`).join(", ")})` : "" }))
    if (b.money && MoneyLines.worthSaying(b.money)) lines.push(...MoneyLines.lines(lang, b.money))
    if (b.runBudgetSpent) lines.push(t(lang, "budgets.runSpent"))
    if (b.jobs)
      lines.push(
        t(lang, "budgets.jobs", { used: b.jobs.inUse, size: b.jobs.size, waiting: b.jobs.waiting, peak: b.jobs.peakInUse }) +
          (b.jobs.timeoutMs !== null ? t(lang, "budgets.jobs.timeout", { timeout: duration(b.jobs.timeoutMs) }) : ""),
      )
    return lines
  }

  // ── events ──────────────────────────────────────────────────────────────────────────────────────

  /** Finds the report of a task's gate run, so a gate failure can be worded from its facts. */
  export type Reports = (taskId: string, gateRun: number | undefined) => RunData.GateReportFile | null

  export function describe(entry: RunData.Entry, lang: Lang, reports?: Reports): string {
    const text = describeEvent(entry.event, lang, reports)
    return entry.refused ? `${text} ${t(lang, "ev.refused", { reason: oneLine(entry.refused, 120) })}` : text
  }

  export function describeEvent(e: RunData.Entry["event"], lang: Lang, reports?: Reports): string {
    const L = (key: Key, params?: Record<string, string | number>) => t(lang, key, params)
    switch (e.type) {
      case "run.started":
        return L("ev.run.started", { runId: e.runId, requirement: oneLine(e.requirement, 80) })
      case "plan.proposed":
        return L("ev.plan.proposed", { summary: oneLine(e.summary, 100) })
      case "plan.confirmed":
        return L("ev.plan.confirmed")
      case "graph.accepted":
        return L("ev.graph.accepted", { count: e.graph.tasks.length, ids: e.graph.tasks.map((x) => x.id).join(", ") })
      case "task.dispatched":
        return L("ev.task.dispatched", { role: roleLabel(lang, e.role), attempt: e.attempt, sessionId: e.sessionId })
      case "worker.reported":
        return e.result.blocked
          ? L("ev.worker.reported.blocked", { role: roleLabel(lang, e.result.role), reason: oneLine(e.result.blocked.reason, 100) })
          : L("ev.worker.reported", { role: roleLabel(lang, e.result.role), summary: oneLine(e.result.summary, 100) })
      case "worker.failed":
        return L("ev.worker.failed", { reason: L(`reason.${e.reason}`), message: oneLine(e.message, 100) })
      case "gates.started":
        return L("ev.gates.started")
      case "gates.passed": {
        const passed = L("ev.gates.passed", { kinds: list(lang, Object.keys(e.evidence).filter((k) => k !== "report").map((g) => gateLabel(g, lang))) })
        // Tests that failed on the baseline too are named, so nobody mistakes them for this task's.
        const inherited = e.evidence.report ? reports?.(e.taskId, gateRunOf(e.evidence.report))?.inheritedTests : undefined
        return inherited?.length ? passed + L("ev.gates.inherited", { tests: list(lang, inherited) }) : passed
      }
      case "baseline.done": {
        const commit = e.commit.slice(0, 10)
        if (e.status === "failed" && e.buildFailed) return L("ev.baseline.done.build", { commit, message: oneLine(e.message, 120) })
        if (e.status === "failed") return L("ev.baseline.done.failed", { commit, tests: e.failingTests.length ? list(lang, e.failingTests) : oneLine(e.message, 120) })
        return L(`ev.baseline.done.${e.status}`, { commit, message: oneLine(e.message, 120) })
      }
      case "gates.failed":
        return L("ev.gates.failed", {
          gate: gateLabel(e.gate, lang),
          what: oneLine(failureText(lang, { source: e.gate, message: e.message, facts: gateFacts(e.gate, reports?.(e.taskId, gateRunOf(e.evidencePath)) ?? null) }), 160),
        })
      case "runtime.fault":
        return L("ev.runtime.fault", { source: e.source === "watchdog" ? "watchdog" : (e.command ?? "command"), message: oneLine(e.message, 160) })
      case "review.started":
        return L("ev.review.started", { sessionId: e.sessionId })
      case "review.reported":
        return L("ev.review.reported", { verdict: L(`verdict.${e.report.verdict}`), rows: e.report.rows.length, findings: e.report.findings.length })
      case "merge.started":
        return L("ev.merge.started")
      case "merge.succeeded":
        return L("ev.merge.succeeded", { tag: e.tag, commit: e.commit.slice(0, 10) })
      case "merge.conflicted":
        return L("ev.merge.conflicted", { files: e.files.join(", ") || "?" })
      case "merge.batch-rejected":
        return L("ev.merge.batch-rejected", { ids: e.taskIds.join(", ") })
      case "milestone.reached":
        return L("ev.milestone.reached", { phase: e.phase })
      case "milestone.reviewed":
        return L("ev.milestone.reviewed", { phase: e.phase, verdict: L(`verdict.${e.verdict}`) })
      case "change.requested":
        return L("ev.change.requested", { text: oneLine(e.text, 100) })
      case "delta.accepted":
        return L("ev.delta.accepted", { add: e.delta.add.length, remove: e.delta.remove.length, modify: e.delta.modify.length })
      case "consult.answered":
        return L("ev.consult.answered", { by: L(`consultant.${e.by}`), choice: e.choice })
      case "consult.unanswered":
        return L("ev.consult.unanswered", { by: L(`consultant.${e.by}`), reason: oneLine(e.reason, 100) })
      case "consult.replanned":
        return L("ev.consult.replanned", { added: e.delta.add.length, modified: e.delta.modify.length, removed: e.delta.remove.length })
      case "dispatch.failed":
        return L("ev.dispatch.failed", { role: roleLabel(lang, e.role), message: oneLine(e.message, 100) })
      case "question.answered":
        return L("ev.question.answered", { questionId: e.questionId, answer: oneLine(e.answer, 80) })
      case "budget.spent":
        return L("ev.budget.spent", { kind: L(`budget.kind.${e.kind}`) })
      case "cost.reserved":
        return L("ev.cost.reserved", { role: e.role, usd: MoneyLines.usd(e.usd), spent: MoneyLines.usd(e.spentUsd), limit: MoneyLines.usd(e.limitUsd) })
      case "usage.recorded":
        return L("ev.usage.recorded", { role: e.role, sessionId: e.sessionId, requests: e.requests, tokens: e.tokens })
      case "revert.done":
        return L(e.status === "reverted" ? "ev.revert.done" : "ev.revert.conflicted", { id: e.taskId, round: e.round })
      case "session.lost":
        return L("ev.session.lost", { sessionId: e.sessionId })
      case "session.overflowed":
        return L("ev.session.overflowed", { role: roleLabel(lang, e.role), sessionId: e.sessionId, message: oneLine(e.message, 100) })
      case "session.refreshed":
        return L("ev.session.refreshed", { role: roleLabel(lang, e.role), sessionId: e.sessionId, files: e.carried.diffFiles, steps: e.carried.steps })
      case "timer.fired":
        return L("ev.timer.fired", { kind: L(`ev.timer.${e.kind}`) })
      case "step.failed":
        return L("ev.step.failed", { step: L(`step.${e.step}`), outcome: e.fault ? L(`fault.${e.fault.class}`) : e.outcome, message: oneLine(e.fault?.message ?? e.message, 100) })
      case "run.paused":
        return L("ev.run.paused")
      case "run.resumed":
        return L("ev.run.resumed")
      case "model.retrying":
        return L("ev.model.retrying", { role: roleLabel(lang, e.role), attempt: e.attempt, at: clock(e.nextAt), message: oneLine(e.message, 100) })
      case "adr.recorded":
      case "adr.edited":
        return L(`ev.${e.type}`, { adr: e.adr })
      case "adr.classified":
        return L("ev.adr.classified", { adr: e.adr, kind: L(`adr.kind.${e.kind}`), note: oneLine(e.note, 100) })
      default:
        return describeByFields(e as unknown as { type: string } & Record<string, unknown>, lang)
    }
  }

  /**
   * An event this switch does not name (one another part of the code added): its words come from
   * the catalogue's `ev.<type>`, filled from the fields such events carry — a fault's tag, a status,
   * a text, a session — so a new event reads right in every language with one catalogue entry.
   */
  export function describeByFields(e: { type: string } & Record<string, unknown>, lang: Lang): string {
    const str = (k: string) => (typeof e[k] === "string" ? (e[k] as string) : "")
    return tOr(lang, `ev.${e.type}`, e.type, {
      fault: faultText(lang, str("tag")),
      status: tOr(lang, `final.${str("status")}`, str("status")),
      text: oneLine(str("text"), 100),
      sessionId: str("sessionId"),
    })
  }

  export function taskOf(e: RunData.Entry["event"]): string | null {
    return "taskId" in e && typeof e.taskId === "string" ? e.taskId : null
  }

  /** "HH:MM:SS" in UTC, so the same log reads the same everywhere. */
  export function clock(at: string): string {
    const d = new Date(at)
    return Number.isNaN(d.getTime()) ? at : d.toISOString().slice(11, 19)
  }

  /** One line of `aircoding events`: time, type, task, text. */
  export function eventLine(entry: RunData.Entry, lang: Lang, reports?: Reports): string {
    const e = entry.event
    return `${clock(e.at)}  ${pad(e.type, 18)}  ${pad(taskOf(e) ?? "-", 6)}  ${describe(entry, lang, reports)}`
  }

  // ── graph ───────────────────────────────────────────────────────────────────────────────────────

  export type GraphNode = { id: string; title: string; state: string; layer: number; row: number }
  export type Graph = { nodes: GraphNode[]; edges: { from: string; to: string }[]; layers: number }

  /** Layers by dependency depth: a task sits one layer right of its deepest dependency. */
  export function graph(state: SchedulerState): Graph {
    const tasks = state.graph?.tasks ?? []
    const byId = new Map(tasks.map((n) => [n.id, n]))
    const status = new Map(state.tasks.map((rt) => [rt.id, rt.status]))
    const depth = new Map<string, number>()
    const visit = (id: string, seen: Set<string>): number => {
      const known = depth.get(id)
      if (known !== undefined) return known
      if (seen.has(id)) return 0 // a cycle never passes validation; stay finite anyway
      seen.add(id)
      const node = byId.get(id)
      const d = node && node.deps.length ? 1 + Math.max(...node.deps.filter((x) => byId.has(x)).map((x) => visit(x, seen)), -1) : 0
      depth.set(id, d)
      return d
    }
    for (const n of tasks) visit(n.id, new Set())
    const rows = new Map<number, number>()
    const nodes = tasks.map((n) => {
      const layer = depth.get(n.id) ?? 0
      const row = rows.get(layer) ?? 0
      rows.set(layer, row + 1)
      return { id: n.id, title: n.title, state: status.get(n.id) ?? n.status ?? "pending", layer, row }
    })
    const edges = tasks.flatMap((n) => n.deps.filter((d) => byId.has(d)).map((d) => ({ from: d, to: n.id })))
    return { nodes, edges, layers: Math.max(0, ...nodes.map((n) => n.layer + 1)) }
  }
}

/** The status as text; the air_status tool reuses it. */
export function renderStatus(summaryOrState: RunView.Status | SchedulerState | RunReport.Summary, lang: Lang = "en"): string {
  return RunView.render(summaryOrState, lang)
}
