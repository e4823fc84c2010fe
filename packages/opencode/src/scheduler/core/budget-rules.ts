import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import type { TaskRuntime } from "./state"
import type { TaskStatus } from "./task.schema"
import { addUsage, overruns, resetTask } from "./usage"
import { askRunCost, heldForMoney, moneyLimited, recordCost, resetCost } from "./money-rules"
import { findTask } from "./rule-guards"

/** The machine's rules for budgets: the usage the engine reports is counted per task and run, and a budget spent stops the task (or the run, merges apart) and asks the user. */

export function budgetSpent(d: Draft, e: EventOf<"budget.spent">): string | undefined {
  const refusal = spendBudget(d, e.taskId, e.kind)
  if (refusal) return refusal
  d.schedule()
}

export function usageRecorded(d: Draft, e: EventOf<"usage.recorded">): string | undefined {
  if (d.s.runId === null) return "no run has started; its usage counts for nothing"
  // A task's budget counts its current worker's or reviewer's session only (not one it was taken from).
  const t = e.taskId !== undefined && d.s.graph ? d.task(e.taskId) : undefined
  const taskId = t && (t.sessionId === e.sessionId || t.reviewSessionId === e.sessionId) ? t.id : null
  const usage = addUsage(d.s.usage, e, taskId)
  if (typeof usage === "string") return usage
  d.s.usage = usage
  const limits = d.s.config?.budgets
  const judged = Boolean(limits && d.s.graph && (d.s.stage === "running" || d.s.stage === "milestone"))
  const costOver = recordCost(d, e, taskId, judged)
  if (!limits || !judged) return undefined
  const over = [...overruns(limits, usage, taskId, d.s.runBudgetSpent), ...costOver.map((o) => ({ ...o, kind: "cost" as const }))]
  for (const o of over) spendBudget(d, o.taskId, o.kind)
  // A cost report moves the estimates and what is held back: a session held for money may fit now.
  if (over.length || heldForMoney(d.s)) d.schedule()
  return undefined
}

/** A budget is spent: the task (or the whole run, merges apart) stops and the user is asked. */
function spendBudget(d: Draft, taskId: string | undefined, kind: EventOf<"budget.spent">["kind"]): string | undefined {
  const e = { taskId, kind }
  if (!d.s.graph || (d.s.stage !== "running" && d.s.stage !== "milestone")) return `no run is in progress (stage: ${d.s.stage})`
  if (e.taskId !== undefined) {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
    if (t.status === "merged" || t.status === "invalidated" || t.status === "blocked") return `task ${t.id} is ${t.status}; it spends nothing`
    if (t.status === "merge_queued" || t.status === "merging") return `task ${t.id} is being merged, which costs no model budget`
    d.abortSessions(t.id)
    d.block(t.id, `its ${e.kind} budget is spent`, resumeFor(t.status))
    d.s.usage = resetTask(d.s.usage, t.id)
    resetCost(d, t.id)
  } else {
    if (d.s.runBudgetSpent) return "the run's budget is already spent"
    d.s.runBudgetSpent = true
    // A money limit is raised to the amount the user names; the others by one budget's worth per answer.
    const money = e.kind === "cost" && moneyLimited(d.s)
    if (!money) d.s.usage = { ...d.s.usage, runGrants: d.s.usage.runGrants + 1 }
    // Merges finish (they cost no model budget); everything else stops and waits for one answer.
    for (const id of [...d.s.active]) {
      const status = d.task(id)!.status
      if (status === "merge_queued" || status === "merging") continue
      d.abortSessions(id)
      d.setStatus(id, "blocked", `run ${e.kind} budget spent`)
      d.patch(id, { resume: resumeFor(status), waitingOn: "run budget" })
    }
    if (money) {
      askRunCost(d)
      return undefined
    }
    const questionId = `run:budget:${d.s.eventCount}`
    const text = `The run's ${e.kind} budget is spent. Raise it and continue?`
    d.s.questions = [...d.s.questions, { questionId, taskId: null, text }]
    d.emit({ type: "ask", id: `ask:${questionId}`, questionId, text })
  }
  return undefined
}

function resumeFor(status: TaskStatus): NonNullable<TaskRuntime["resume"]> {
  if (status === "debugging") return "debugger"
  if (status === "gating") return "gates"
  if (status === "reviewing") return "review"
  return "executor"
}
