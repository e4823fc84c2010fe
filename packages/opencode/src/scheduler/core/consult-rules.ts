import type { Consultant, ConsultOption } from "./command"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import type { TaskRuntime } from "./state"
import { acceptDelta } from "./plan-rules"
import { consultedTask } from "./rule-guards"

/** The machine's rules for a consult: the scheduler agent or the Architect chooses one of the options offered, gives no decision (the question goes up: Architect, then user), or answers with a plan delta. */

export function consultAnswered(d: Draft, e: EventOf<"consult.answered">): string | undefined {
  const t = consultedTask(d, e.taskId, e.by)
  if (typeof t === "string") return t
  const options = t.consultOptions ?? []
  if (!options.includes(e.choice as ConsultOption)) return `"${e.choice}" is not one of the options offered for task ${t.id}: ${options.join(", ")}`
  const choice = e.choice as ConsultOption
  const who = e.by === "architect" ? "the Architect" : "the scheduler agent"
  if (choice === "block") {
    escalate(d, t, e.by, `${who} chose not to decide${e.reason ? `: ${e.reason}` : ""}`)
  } else {
    d.patch(t.id, { consultOptions: null, consultBy: null })
    if (choice === "debug-again") d.dispatch(t.id, "debugger", `${who} chose another debugger run`)
    else if (choice === "executor-again") d.dispatch(t.id, "executor", `${who} chose another executor run`)
    else d.review(t.id, `${who} chose another review`)
  }
  d.schedule()
}

export function consultUnanswered(d: Draft, e: EventOf<"consult.unanswered">): string | undefined {
  const t = consultedTask(d, e.taskId, e.by)
  if (typeof t === "string") return t
  escalate(d, t, e.by, `the ${e.by === "architect" ? "Architect" : "scheduler agent"} gave no decision: ${e.reason}`)
  d.schedule()
}

export function consultReplanned(d: Draft, e: EventOf<"consult.replanned">): string | undefined {
  const t = consultedTask(d, e.taskId, "architect")
  if (typeof t === "string") return t
  const refusal = acceptDelta(d, e.delta)
  if (refusal) return `the Architect's plan delta for task ${t.id} is invalid:\n${refusal}`
  // A delta that left the task itself alone (a new task it now waits on is added by modifying it) sends it
  // back to work on the changed plan; a delta that modified it already reset it to pending.
  const after = d.task(t.id)!
  if (after.status === "consulting") {
    d.patch(t.id, { consultOptions: null, consultBy: null })
    d.dispatch(t.id, t.role ?? "executor", "the Architect changed the plan")
  }
  d.notify(`the Architect answered task ${t.id} with a plan delta`)
  d.schedule()
}

/** A consult that did not settle it: the Architect is asked after the scheduler agent; after the Architect, the user. */
function escalate(d: Draft, t: TaskRuntime, by: Consultant, why: string): void {
  const last = t.lastFailure?.message ?? "see the task's history"
  if (by === "scheduler") {
    d.consult(t.id, `task ${t.id}: ${why}. Last failure: ${last}`, t.consultOptions ?? ["block"], "architect")
    return
  }
  d.block(t.id, `${why}; last failure: ${last}`, "executor")
}
