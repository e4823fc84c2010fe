import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import type { ProviderFault } from "./provider-fault"
import type { TaskRuntime } from "./state"
import { blockOnFault, workerResume } from "./step-rules"
import type { OverflowRecord, OverflowRole } from "./vocabulary"

/**
 * A worker's or reviewer's session that ran out of the model's context (item 3 of issue 38). Its work is
 * safe in the task's worktree, so the session is thrown away and a fresh one of the same role starts for
 * the same task from its context pack and what the worktree holds; only when that fresh session overflows
 * too is the user asked (a longer conversation would not fit better, the task is likely too large).
 */

/** Fresh sessions after an overflow of the same step before the user is asked (an answer "retry" gives them again). */
export const FRESH_AFTER_OVERFLOW = 1

type OverflowDecision = "fresh" | "ask"

/**
 * THE rule: a first overflow of a step gets a fresh session; one of a fresh session the user hears of. An
 * overflow of another role (the Executor's, then the Reviewer's) is the first of its own step.
 */
export function overflowDecision(last: OverflowRecord | null, role: OverflowRole): OverflowDecision {
  if (last === null || last.role !== role) return "fresh"
  return last.fresh < FRESH_AFTER_OVERFLOW ? "fresh" : "ask"
}

/** Why this overflow is not the current session's (an echo of an older session), or undefined when it is. */
function stale(t: TaskRuntime, e: { sessionId: string; role: OverflowRole }): string | undefined {
  if (e.role === "reviewer") {
    if (t.status !== "reviewing") return `task ${t.id} is ${t.status}: no review of it runs`
    if (t.reviewSessionId !== e.sessionId) return `session ${e.sessionId} is not the current review of task ${t.id} (${t.reviewSessionId ?? "none recorded"}); its overflow is stale`
    return undefined
  }
  if (t.status !== "running" && t.status !== "debugging") return `task ${t.id} is ${t.status}: no worker of it runs`
  if (t.role !== e.role) return `task ${t.id} is at work with the ${t.role}, not the ${e.role}`
  if (t.sessionId !== e.sessionId) return `session ${e.sessionId} is not the current session of task ${t.id} (${t.sessionId ?? "none recorded"}); its overflow is stale`
  return undefined
}

export function sessionOverflowed(d: Draft, e: EventOf<"session.overflowed">): string | undefined {
  if (!d.s.graph) return `no task graph yet (stage: ${d.s.stage}); task ${e.taskId} is unknown`
  const t = d.task(e.taskId)
  if (!t) return `unknown task ${e.taskId}`
  const refusal = stale(t, e)
  if (refusal) return refusal
  const last = t.overflow
  if (overflowDecision(last, e.role) === "fresh") {
    const fresh = last !== null && last.role === e.role ? last.fresh + 1 : 1
    d.patch(t.id, { overflow: { role: e.role, sessionId: e.sessionId, fresh } })
    const why = `the ${e.role}'s session ran out of the model's context; a fresh session starts from the task's context pack and its worktree`
    // Not a repair and not a stall: the work was not at fault, and its budgets stay as they were.
    if (e.role === "reviewer") d.review(t.id, why)
    else d.dispatch(t.id, e.role, why)
    d.notify(`task ${t.id}: ${why}`)
  } else {
    const fault: ProviderFault = { class: "context-too-long", retryable: false, message: e.message }
    const resume = e.role === "reviewer" ? "review" : workerResume(t)
    // The answer gives the step its fresh session again, from the same record of what overflowed.
    d.patch(t.id, { overflow: { role: e.role, sessionId: e.sessionId, fresh: 0 } })
    blockOnFault(d, t, e.role, fault, resume, last!.fresh)
  }
  d.schedule()
  return undefined
}

/** The fresh session started: recorded for the log and the views; the state waits on it already (task.dispatched, review.started). */
export function sessionRefreshed(d: Draft, e: EventOf<"session.refreshed">): string | undefined {
  if (!d.s.graph) return `no task graph yet (stage: ${d.s.stage}); task ${e.taskId} is unknown`
  const t = d.task(e.taskId)
  if (!t) return `unknown task ${e.taskId}`
  if (t.overflow === null || t.overflow.role !== e.role || t.overflow.sessionId !== e.from) return `task ${t.id} has no overflow of the ${e.role}'s session ${e.from} on record`
  return stale(t, e)
}
