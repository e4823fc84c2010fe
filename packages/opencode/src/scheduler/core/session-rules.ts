import type { ConsultOption } from "./command"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import type { WorkerResult } from "./report.schema"
import type { TaskRuntime } from "./state"
import { ownSession } from "./money-rules"
import { blockOnFault, isHopeless, isRepairing, stepTimer, workerResume } from "./step-rules"
import { findTask, WORKER_STATUSES, workerTask } from "./rule-guards"

/** The machine's rules for a task's worker sessions: dispatched, reported, failed, lost, nudged, errored, timed out, or never started; a stall or an error gets a fresh session a limited number of times. */

export function taskDispatched(d: Draft, e: EventOf<"task.dispatched">): string | undefined {
  const t = findTask(d, e.taskId)
  if (typeof t === "string") return t
  if (!WORKER_STATUSES.includes(t.status)) return `task ${t.id} is ${t.status}; no dispatch for it is outstanding`
  if (t.role !== e.role) return `task ${t.id} was dispatched to the ${t.role}, not the ${e.role}`
  if (t.attempts !== e.attempt) return `task ${t.id} is at attempt ${t.attempts}; attempt ${e.attempt} is not the outstanding dispatch`
  if (t.sessionId !== null) return `task ${t.id} attempt ${e.attempt} already runs in session ${t.sessionId}`
  // The time comes from the event, never a clock: the deadline folds the same on every replay.
  const deadline = new Date(Date.parse(e.at) + d.s.config!.wallClockMs)
  d.patch(t.id, { sessionId: e.sessionId, deadline: Number.isNaN(deadline.getTime()) ? null : deadline.toISOString() })
  ownSession(d, e.sessionId, t.id)
}

export function workerReported(d: Draft, e: EventOf<"worker.reported">): string | undefined {
  const t = workerTask(d, e.taskId, e.sessionId)
  if (typeof t === "string") return t
  if (e.result.taskId !== t.id) return `the report is for task ${e.result.taskId} but came from the session of ${t.id}`
  if (e.result.role !== t.role) return `task ${t.id}: the report says ${e.result.role}, but the session belongs to the ${t.role}`
  // The step is over: a later overflow is the first of its own step.
  if (t.overflow !== null) d.patch(t.id, { overflow: null })
  if (e.result.blocked || e.result.planIssue) {
    fieldReport(d, t, e.result)
  } else {
    // A report asks for the gates; it never makes a task done.
    d.runGates(t.id, `${t.role} reported: ${e.result.summary}`)
  }
  d.schedule()
}

export function workerFailed(d: Draft, e: EventOf<"worker.failed">): string | undefined {
  const t = workerTask(d, e.taskId, e.sessionId)
  if (typeof t === "string") return t
  if (e.reason === "aborted") {
    d.block(t.id, `the ${t.role}'s session was aborted: ${e.message}`, workerResume(t))
  } else if (isHopeless(e.fault)) {
    blockOnFault(d, t, t.role ?? "executor", e.fault, workerResume(t))
  } else {
    retryOrBlock(d, t, `${e.reason}: ${e.message}`)
  }
  d.schedule()
}

export function sessionLost(d: Draft, e: EventOf<"session.lost">): string | undefined {
  const t = findTask(d, e.taskId)
  if (typeof t === "string") return t
  if (WORKER_STATUSES.includes(t.status)) {
    if (t.sessionId !== e.sessionId) return `session ${e.sessionId} is not the current session of task ${t.id} (${t.sessionId ?? "none recorded"}); nothing was lost`
    // A fresh session for the same step; stalls and repairs stay as they were.
    d.dispatch(t.id, t.role ?? "executor", "its session was lost when AirCoding restarted")
  } else if (t.status === "reviewing") {
    if (t.reviewSessionId !== e.sessionId) return `session ${e.sessionId} is not the current review of task ${t.id} (${t.reviewSessionId ?? "none recorded"}); nothing was lost`
    d.review(t.id, "its review session was lost when AirCoding restarted")
  } else return `task ${t.id} is ${t.status}: no session of it runs`
  d.schedule()
}

export function sessionNudged(d: Draft, e: EventOf<"session.nudged">): string | undefined {
  const t = findTask(d, e.taskId)
  if (typeof t === "string") return t
  const current = WORKER_STATUSES.includes(t.status) ? t.sessionId : t.status === "reviewing" ? t.reviewSessionId : null
  if (current !== e.sessionId) return `session ${e.sessionId} is not the current session of task ${t.id} (${current ?? "none"}); it is not nudged`
  d.patch(t.id, { nudges: t.nudges + 1 })
}

export function sessionErrored(d: Draft, e: EventOf<"session.errored">): string | undefined {
  const t = findTask(d, e.taskId)
  if (typeof t === "string") return t
  if (WORKER_STATUSES.includes(t.status)) {
    if (t.sessionId !== e.sessionId) return `session ${e.sessionId} is not the current session of task ${t.id} (${t.sessionId ?? "none recorded"}); its error is stale`
    d.patch(t.id, { sessionId: null })
    if (isHopeless(e.fault)) blockOnFault(d, t, t.role ?? "executor", e.fault, workerResume(t))
    else retryOrBlock(d, t, `its session errored: ${e.cause}`)
  } else if (t.status === "reviewing") {
    if (t.reviewSessionId !== e.sessionId) return `session ${e.sessionId} is not the current review of task ${t.id} (${t.reviewSessionId ?? "none recorded"}); its error is stale`
    d.patch(t.id, { reviewSessionId: null, lastFailure: { source: "reviewer", message: e.cause, evidencePath: null } })
    if (isHopeless(e.fault)) blockOnFault(d, t, "reviewer", e.fault, "review")
    else if (t.stalls < d.s.config!.stallRetries) {
      d.patch(t.id, { stalls: t.stalls + 1 })
      d.review(t.id, `the reviewer's session errored (${e.cause}); reviewing again`)
    } else d.block(t.id, `the reviewer's session errored again: ${e.cause}`, "review")
  } else return `task ${t.id} is ${t.status}: no session of it runs`
  d.schedule()
}

export function timerFired(d: Draft, e: EventOf<"timer.fired">): string | undefined {
  if ((e.step === undefined) === (e.taskId === undefined)) return "a timer names either a task or a step, exactly one of the two"
  if (e.step !== undefined) return stepTimer(d, e.step, e.kind)
  const t = findTask(d, e.taskId!)
  if (typeof t === "string") return t
  const what = e.kind === "inactivity" ? "stalled (no activity within the inactivity timeout)" : "ran past its wall-clock cap"
  if (e.kind === "wallclock" && (WORKER_STATUSES.includes(t.status) || t.status === "reviewing")) d.patch(t.id, { deadline: null })
  if (WORKER_STATUSES.includes(t.status)) {
    d.abortSessions(t.id)
    retryOrBlock(d, t, `${t.role} ${what}`)
  } else if (t.status === "reviewing") {
    d.abortSessions(t.id)
    if (t.stalls < d.s.config!.stallRetries) {
      d.patch(t.id, { stalls: t.stalls + 1 })
      d.review(t.id, `reviewer ${what}; reviewing again`)
    } else d.block(t.id, `the reviewer ${what}, again`, "review")
  } else return `task ${t.id} is ${t.status}: no session of it is timed; the timer is stale`
  d.schedule()
}

export function dispatchFailed(d: Draft, e: EventOf<"dispatch.failed">): string | undefined {
  const t = findTask(d, e.taskId)
  if (typeof t === "string") return t
  const reason = `its ${e.role} session could not be started: ${e.message}`
  if (e.role === "reviewer") {
    if (t.status !== "reviewing" || t.reviewRuns !== e.run) return `task ${t.id} is ${t.status} (review run ${t.reviewRuns}); review run ${e.run} is not outstanding`
    if (t.reviewSessionId !== null) return `task ${t.id} is already reviewed in session ${t.reviewSessionId}; its review did start`
    if (t.stalls < d.s.config!.stallRetries) {
      d.patch(t.id, { stalls: t.stalls + 1, lastFailure: { source: "dispatch", message: reason, evidencePath: null } })
      d.review(t.id, `retry: ${reason}`)
    } else d.block(t.id, reason, "review")
  } else {
    if (!WORKER_STATUSES.includes(t.status) || t.role !== e.role || t.attempts !== e.run)
      return `task ${t.id} is ${t.status} (attempt ${t.attempts} by the ${t.role ?? "nobody"}); the ${e.role}'s attempt ${e.run} is not outstanding`
    if (t.sessionId !== null) return `task ${t.id} attempt ${e.run} already runs in session ${t.sessionId}; its dispatch did not fail`
    retryOrBlock(d, t, reason)
  }
  d.schedule()
}

/**
 * A worker that is blocked, or finds the plan wrong (a missing dependency, a wrong write-set, an interface
 * that does not exist), is heard by the Architect first: a delta, an ADR and another run, or one question
 * to the user. Each such round spends a repair, so a task cannot bounce between worker and Architect forever;
 * once the budget is spent the user is asked.
 */
function fieldReport(d: Draft, t: TaskRuntime, result: WorkerResult): void {
  const issue = result.planIssue
  const said = [
    issue ? `finds the plan wrong (${issue.kind}): ${issue.detail}` : null,
    result.blocked ? `reports it is blocked: ${result.blocked.reason}` : null,
  ].filter((part): part is string => part !== null)
  const reason = `the ${t.role} ${said.join("; and ")}`
  d.patch(t.id, { lastFailure: { source: "plan", message: reason, evidencePath: null } })
  if (t.repairs >= d.s.config!.repairBudget) {
    d.block(t.id, `${reason} (the repair budget of ${d.s.config!.repairBudget} is spent)`, "executor")
    return
  }
  d.patch(t.id, { repairs: t.repairs + 1 })
  const options: ConsultOption[] = t.role === "debugger" ? ["debug-again", "executor-again", "block"] : ["executor-again", "block"]
  d.consult(t.id, `task ${t.id}: ${reason}`, options, "architect")
}

/** Stalls, errors and timeouts get a fresh session, a limited number of times; then the user hears of it. */
function retryOrBlock(d: Draft, t: TaskRuntime, reason: string): void {
  const role = t.role ?? "executor"
  // A Debugger's fresh session is still sent to fix the gate failure it was given: a stalled or failed
  // session does not replace it (a chaos seed's second Debugger got only "no activity" and never the cppcheck finding).
  const repairing = isRepairing(t)
  if (!repairing) d.patch(t.id, { lastFailure: { source: "worker", message: reason, evidencePath: null } })
  if (t.stalls < d.s.config!.stallRetries) {
    d.patch(t.id, { stalls: t.stalls + 1 })
    d.dispatch(t.id, role, `retry after ${reason}`)
  } else {
    d.block(t.id, `the ${role} failed again: ${reason}`, repairing ? "debugger" : "executor")
  }
}
