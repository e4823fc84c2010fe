import { createHash } from "node:crypto"
import type { StoredEvent } from "../../core/event.schema"
import { isRefused, transition } from "../../core/machine"
import { initialState, type SchedulerState } from "../../core/state"
import type { RunData } from "../store/run-data"

/**
 * A run's trace, derived from its event log alone (and the gate reports the log points at): the run is one trace,
 * its plan, phases, tasks, attempts, sessions, gates, merges, final check and deploys are spans. Pure: the same log
 * gives the same spans with the same ids, so a resumed run continues its trace and `aircoding traces export` sends a
 * finished or archived run again as it was. Prompts and code are never in a span: only ids, outcomes, timings,
 * tokens and cost.
 */
export namespace TraceSpans {
  export type Value = string | number | boolean
  export type Kind = "run" | "plan" | "baseline" | "phase" | "milestone" | "task" | "attempt" | "session" | "gates" | "gate" | "merge" | "finalCheck" | "deploy"
  export type Span = {
    /** 16 hex digits, from the run id and what the span is: the same on every derivation. */
    spanId: string
    parentId?: string
    kind: Kind
    name: string
    /** Epoch milliseconds. */
    startMs: number
    endMs: number
    status: "ok" | "error" | "unset"
    /** Why it failed, for an error status. */
    message?: string
    attributes: Record<string, Value>
  }
  export type Trace = { runId: string; traceId: string; spans: Span[] }

  /** The gate report of a task's gate run `run` (1-based, as the log counts gates.started), when the caller can read it. */
  export type ReportOf = (taskId: string, run: number) => RunData.GateReportFile | null

  const hex = (text: string, digits: number) => createHash("sha256").update(text).digest("hex").slice(0, digits)

  /** The trace id of a run: the same for every process that derives it (a resumed run, a re-export). */
  export function traceId(runId: string): string {
    return hex(`aircoding-trace:${runId}`, 32)
  }
  export function spanId(runId: string, key: string): string {
    return hex(`aircoding-span:${runId}:${key}`, 16)
  }
  /** The key of a session's span (its id is `spanId(runId, sessionKey(sessionId))`). */
  export const sessionKey = (sessionId: string) => `session:${sessionId}`
  export const RUN_KEY = "run"

  /**
   * The W3C `traceparent` of a prompt to the engine (sent as the request's header): the engine's server takes it as
   * the parent of its request span, under which its model calls and tools run, so they hang under the session's span
   * in the run's trace; a session the trace has no span for (the Architect's, Main's) hangs under the run.
   */
  export function traceparent(runId: string, sessionId?: string): string {
    return `00-${traceId(runId)}-${spanId(runId, sessionId ? sessionKey(sessionId) : RUN_KEY)}-01`
  }

  /** Open spans by key; a span is closed when its outcome event comes, or at the run's last event. */
  type Open = Omit<Span, "endMs"> & { endMs?: number }

  export function derive(events: readonly StoredEvent[], reportOf: ReportOf = () => null): Trace | null {
    // Only what the machine applied is the run's story (a refused event changed nothing).
    const applied: StoredEvent[] = []
    let state: SchedulerState = initialState()
    for (const e of events) {
      const result = transition(state, e)
      if (isRefused(result)) continue
      state = result.state
      applied.push(e)
    }
    const started = applied.find((e) => e.type === "run.started")
    if (!started || started.type !== "run.started") return null
    const runId = started.runId
    const ms = (at: string) => Date.parse(at)
    const lastMs = ms(applied[applied.length - 1]!.at)
    const spans: Open[] = []
    const byKey = new Map<string, Open>()
    const id = (key: string) => spanId(runId, key)

    const open = (key: string, kind: Kind, name: string, at: string, parentKey: string | undefined, attributes: Record<string, Value> = {}): Open => {
      const span: Open = { spanId: id(key), kind, name, startMs: ms(at), status: "unset", attributes: { "aircoding.run.id": runId, ...attributes } }
      if (parentKey) span.parentId = id(parentKey)
      spans.push(span)
      byKey.set(key, span)
      return span
    }
    const close = (key: string | undefined, at: string, outcome: string, error?: string, attributes: Record<string, Value> = {}) => {
      const span = key ? byKey.get(key) : undefined
      if (!span || span.endMs !== undefined) return
      span.endMs = Math.max(span.startMs, ms(at))
      span.attributes["aircoding.outcome"] = outcome
      Object.assign(span.attributes, attributes)
      if (error !== undefined) {
        span.status = "error"
        span.message = error
      } else span.status = "ok"
      byKey.delete(key!)
    }

    const runKey = RUN_KEY
    open(runKey, "run", "run", started.at, undefined, { "aircoding.integration": started.integration ?? "" })
    open("plan", "plan", "plan", started.at, runKey)

    // Tasks and their phases, from the graph the run settled on.
    const phaseOf = new Map<string, number>()
    const indexGraph = (graph: { tasks: { id: string; phase: number }[] } | null | undefined) => {
      for (const t of graph?.tasks ?? []) phaseOf.set(t.id, t.phase)
    }
    const taskKey = (taskId: string) => `task:${taskId}`
    const attempt = new Map<string, number>()
    /** Why a task's current attempt failed, when it did: its span ends ERROR with it when the next attempt starts. */
    const attemptFailure = new Map<string, { outcome: string; reason: string }>()
    const closeAttempt = (taskId: string, at: string, otherwise: string) => {
      const failure = attemptFailure.get(taskId)
      close(attemptKey(taskId), at, failure?.outcome ?? otherwise, failure?.reason)
      attemptFailure.delete(taskId)
    }
    const attemptKey = (taskId: string) => `attempt:${taskId}:${attempt.get(taskId) ?? 0}`
    const gateRun = new Map<string, number>()
    const mergeRun = new Map<string, number>()
    const sessionKeys = new Map<string, string>()
    const sessionTask = new Map<string, string>()
    const usage = new Map<string, { tokens: number; requests: number; costUsd?: number; unpriced?: number; model?: string }>()
    let previousAt = started.at

    const phaseKey = (phase: number) => `phase:${phase}`
    const ensurePhase = (phase: number, at: string) => {
      if (!byKey.has(phaseKey(phase)) && !spans.some((s) => s.spanId === id(phaseKey(phase))))
        open(phaseKey(phase), "phase", `phase ${phase}`, at, runKey, { "aircoding.phase": phase })
    }
    const ensureTask = (taskId: string, at: string) => {
      if (spans.some((s) => s.spanId === id(taskKey(taskId)))) return
      const phase = phaseOf.get(taskId) ?? 1
      ensurePhase(phase, at)
      open(taskKey(taskId), "task", `task ${taskId}`, at, phaseKey(phase), { "aircoding.task.id": taskId, "aircoding.phase": phase })
    }
    const openSession = (taskId: string, sessionId: string, role: string, at: string, extra: Record<string, Value> = {}) => {
      const key = sessionKey(sessionId)
      const parent = attempt.has(taskId) ? attemptKey(taskId) : taskKey(taskId)
      sessionSpans.set(sessionId, open(key, "session", `session ${role}`, at, parent, { "aircoding.task.id": taskId, "aircoding.role": role, "aircoding.session.id": sessionId, ...extra }))
      sessionKeys.set(sessionId, key)
      sessionTask.set(sessionId, taskId)
    }
    const closeSession = (sessionId: string, at: string, outcome: string, error?: string) => close(sessionKeys.get(sessionId), at, outcome, error)
    /** A session's figures are its last usage.recorded, which may come after its report: given once the log is read. */
    const sessionSpans = new Map<string, Open>()

    for (const e of applied) {
      switch (e.type) {
        case "graph.accepted":
          indexGraph(e.graph)
          close("plan", e.at, "accepted", undefined, { "aircoding.tasks": e.graph.tasks.length })
          break
        case "delta.accepted":
        case "consult.replanned":
          for (const t of (e.delta as { add?: { id: string; phase: number }[] }).add ?? []) phaseOf.set(t.id, t.phase)
          break
        case "baseline.done":
          open("baseline", "baseline", "baseline", previousAt, runKey, { "aircoding.commit": e.commit })
          close("baseline", e.at, e.status, e.status === "failed" || e.buildFailed ? e.message : undefined)
          break
        case "task.dispatched": {
          ensureTask(e.taskId, e.at)
          closeAttempt(e.taskId, e.at, "superseded")
          attempt.set(e.taskId, e.attempt)
          open(attemptKey(e.taskId), "attempt", `attempt ${e.attempt}`, e.at, taskKey(e.taskId), { "aircoding.task.id": e.taskId, "aircoding.attempt": e.attempt, "aircoding.role": e.role })
          openSession(e.taskId, e.sessionId, e.role, e.at)
          break
        }
        case "session.refreshed":
          openSession(e.taskId, e.sessionId, e.role, e.at, { "aircoding.session.from": e.from })
          break
        case "review.started":
          ensureTask(e.taskId, e.at)
          openSession(e.taskId, e.sessionId, "reviewer", e.at)
          break
        case "usage.recorded":
          usage.set(e.sessionId, { tokens: e.tokens, requests: e.requests, ...(e.costUsd !== undefined ? { costUsd: e.costUsd } : {}), ...(e.unpriced ? { unpriced: e.unpriced } : {}), ...(e.model ? { model: e.model } : {}) })
          break
        case "worker.reported":
          closeSession(e.sessionId, e.at, e.result.blocked ? "blocked" : "reported", e.result.blocked ? e.result.blocked.reason : undefined)
          break
        case "worker.failed":
          closeSession(e.sessionId, e.at, e.reason, e.message)
          attemptFailure.set(e.taskId, { outcome: `worker ${e.reason}`, reason: e.message })
          break
        case "session.errored":
          closeSession(e.sessionId, e.at, "errored", e.cause)
          break
        case "session.overflowed":
          closeSession(e.sessionId, e.at, "overflowed", e.message)
          break
        case "session.lost":
          closeSession(e.sessionId, e.at, "lost", "the process that held the session died")
          break
        case "review.reported": {
          const sessionId = [...sessionTask].findLast(([s, t]) => t === e.taskId && sessionKeys.get(s) && byKey.has(sessionKeys.get(s)!))?.[0]
          if (sessionId) closeSession(sessionId, e.at, e.report.verdict, e.report.verdict === "fail" ? "the review failed" : undefined)
          break
        }
        case "gates.started": {
          ensureTask(e.taskId, e.at)
          const run = (gateRun.get(e.taskId) ?? 0) + 1
          gateRun.set(e.taskId, run)
          const key = `gates:${e.taskId}:${run}`
          open(key, "gates", "gates", e.at, attempt.has(e.taskId) ? attemptKey(e.taskId) : taskKey(e.taskId), { "aircoding.task.id": e.taskId, "aircoding.gates.run": run })
          break
        }
        case "gates.passed":
        case "gates.failed":
        case "gates.errored": {
          const run = gateRun.get(e.taskId) ?? 0
          const key = `gates:${e.taskId}:${run}`
          const span = byKey.get(key)
          if (!span) break
          // Each gate of the run, from its report: laid end to end from the run's start (the report keeps durations, not start times).
          let from = span.startMs
          for (const g of reportOf(e.taskId, run)?.gates ?? []) {
            if (g.ran === false) continue
            const gKey = `${key}:${g.gate}`
            const child = open(gKey, "gate", `gate ${g.gate}`, new Date(from).toISOString(), key, { "aircoding.task.id": e.taskId, "aircoding.gate": g.gate })
            const end = from + (g.ms ?? 0)
            close(gKey, new Date(Math.min(end, Math.max(ms(e.at), from))).toISOString(), g.passed ? "passed" : "failed", g.passed ? undefined : g.summary ?? `gate ${g.gate} failed`)
            child.endMs = Math.max(child.startMs, Math.min(end, Math.max(ms(e.at), from)))
            from = child.endMs
          }
          if (e.type === "gates.passed") close(key, e.at, "passed")
          else if (e.type === "gates.failed") {
            close(key, e.at, "failed", e.message, { "aircoding.gate": e.gate, ...(e.route ? { "aircoding.gate.route": e.route } : {}) })
            attemptFailure.set(e.taskId, { outcome: `gate ${e.gate} failed`, reason: e.message })
          }
          else close(key, e.at, "errored", e.message, { "aircoding.fault": e.tag })
          break
        }
        case "merge.started": {
          ensureTask(e.taskId, e.at)
          const run = (mergeRun.get(e.taskId) ?? 0) + 1
          mergeRun.set(e.taskId, run)
          open(`merge:${e.taskId}:${run}`, "merge", "merge", e.at, taskKey(e.taskId), { "aircoding.task.id": e.taskId })
          break
        }
        case "merge.succeeded":
          close(`merge:${e.taskId}:${mergeRun.get(e.taskId) ?? 0}`, e.at, "merged", undefined, { "aircoding.commit": e.commit })
          break
        case "merge.conflicted":
          close(`merge:${e.taskId}:${mergeRun.get(e.taskId) ?? 0}`, e.at, "conflicted", `conflicts in ${e.files.join(", ") || "the tree"}`)
          break
        case "merge.rejected":
          close(`merge:${e.taskId}:${mergeRun.get(e.taskId) ?? 0}`, e.at, "rejected", e.message)
          break
        case "merge.blocked":
          close(`merge:${e.taskId}:${mergeRun.get(e.taskId) ?? 0}`, e.at, "blocked", e.message)
          break
        case "merge.deferred":
          close(`merge:${e.taskId}:${mergeRun.get(e.taskId) ?? 0}`, e.at, "deferred")
          break
        case "merge.batch-rejected":
          for (const t of e.taskIds) close(`merge:${t}:${mergeRun.get(t) ?? 0}`, e.at, "rejected", e.message)
          break
        case "milestone.reached":
          ensurePhase(e.phase, e.at)
          open(`milestone:${e.phase}:${e.seq}`, "milestone", `milestone review ${e.phase}`, e.at, phaseKey(e.phase), { "aircoding.phase": e.phase })
          break
        case "milestone.reviewed": {
          const key = [...byKey.keys()].find((k) => k.startsWith(`milestone:${e.phase}:`))
          close(key, e.at, e.verdict, e.verdict === "fail" ? (e.findings ?? []).join("; ") || "the milestone review failed" : undefined)
          if (e.verdict === "pass") close(phaseKey(e.phase), e.at, "passed")
          break
        }
        case "deploy.started":
          open(`deploy:${e.target}:${e.n}`, "deploy", `deploy ${e.target}`, e.at, runKey, { "aircoding.deploy.target": e.target, "aircoding.commit": e.commit, "aircoding.deploy.n": e.n })
          break
        case "deploy.passed":
          close(`deploy:${e.target}:${e.n}`, e.at, "passed")
          break
        case "deploy.failed":
          close(`deploy:${e.target}:${e.n}`, e.at, e.rolledBack ? "rolled-back" : "failed", `${e.cause}: ${e.message}`, { "aircoding.deploy.cause": e.cause, "aircoding.deploy.rolled_back": e.rolledBack })
          break
        case "finalCheck.done":
          open("finalCheck", "finalCheck", "final check", previousAt, runKey)
          close("finalCheck", e.at, e.status, e.status === "passed" ? undefined : e.message)
          break
      }
      previousAt = e.at
    }

    for (const [sessionId, span] of sessionSpans) {
      const u = usage.get(sessionId)
      if (!u) continue
      Object.assign(span.attributes, {
        "aircoding.tokens": u.tokens,
        "aircoding.requests": u.requests,
        ...(u.costUsd !== undefined ? { "aircoding.cost.usd": u.costUsd } : {}),
        ...(u.unpriced ? { "aircoding.requests.unpriced": u.unpriced } : {}),
        ...(u.model ? { "aircoding.model": u.model } : {}),
      })
    }
    // Tasks end with their last state; what is still open ends at the run's last event.
    const graphTasks = state.graph?.tasks ?? []
    state.tasks.forEach((task, i) => {
      const key = taskKey(task.id)
      const span = byKey.get(key)
      if (!span) return
      const end = [...task.history].reverse()[0]?.at
      const failed = task.status === "blocked"
      const reason = task.lastFailure ? `${task.lastFailure.source}: ${task.lastFailure.message}` : `the task is ${task.status}`
      if (task.status === "merged" || task.status === "invalidated" || failed) closeAttempt(task.id, end ?? new Date(lastMs).toISOString(), task.status)
      if (task.status === "merged" || task.status === "invalidated" || failed) close(key, end ?? new Date(lastMs).toISOString(), task.status, failed ? reason : undefined, { "aircoding.task.phase": graphTasks[i]?.phase ?? 1 })
      else span.attributes["aircoding.outcome"] = task.status
    })
    const outcome = state.finished?.status ?? (state.questions.length ? "waiting" : "running")
    const totals = [...usage.values()].reduce((a, u) => ({ tokens: a.tokens + u.tokens, cost: a.cost + (u.costUsd ?? 0) }), { tokens: 0, cost: 0 })
    const run = byKey.get(runKey)!
    Object.assign(run.attributes, { "aircoding.tokens": totals.tokens, "aircoding.cost.usd": totals.cost, "aircoding.tasks": state.tasks.length })
    if (state.finished) {
      for (const phase of new Set(graphTasks.map((t) => t.phase))) {
        const ids = new Set(graphTasks.filter((t) => t.phase === phase).map((t) => t.id))
        const blocked = state.tasks.filter((t) => ids.has(t.id) && t.status === "blocked").map((t) => t.id)
        close(phaseKey(phase), new Date(lastMs).toISOString(), blocked.length ? "blocked" : "done", blocked.length ? `blocked: ${blocked.join(", ")}` : undefined)
      }
      const final = state.finalCheck
      const blocked = state.finished.status === "blocked"
      close(runKey, new Date(lastMs).toISOString(), outcome, blocked ? "the run ended blocked" : final && final.status !== "passed" ? final.message ?? "the final check failed" : undefined)
    }
    for (const span of spans) {
      if (span.endMs !== undefined) continue
      span.endMs = Math.max(span.startMs, lastMs)
      span.attributes["aircoding.outcome"] ??= span.kind === "run" ? outcome : "open"
    }
    return { runId, traceId: traceId(runId), spans: spans as Span[] }
  }
}
