import type { Command } from "./command"
import { addCost, costOverruns, estimateUsd, fits, parseCostAnswer, reserve, resetTaskCost, runLimit } from "./money"
import { ACTIVE_STATUSES, type Question, type SchedulerState, type TaskRuntime } from "./state"

/**
 * The machine's rules for the money budget (core/money.ts holds the arithmetic): a session starts only when
 * its estimate fits beside what was spent and what the sessions in flight hold back; a run whose budget
 * cannot fit the next session, with nothing left in flight, asks once ("raise to N" / "stop").
 */

/** The question a spent money budget asks is told apart by its id. */
const COST_QUESTION = "run:cost:"

/** The moves of the machine's draft these rules use (named here, not imported: the draft calls these rules). */
type Draft = {
  readonly s: SchedulerState
  emit(command: Command): void
  notify(text: string): void
  reopen(budgetRaised?: boolean): void
  schedule(): void
}

function live(s: SchedulerState): (taskId: string) => boolean {
  return (taskId) => {
    const t = s.tasks.find((x) => x.id === taskId)
    return t !== undefined && ACTIVE_STATUSES.has(t.status)
  }
}

function limitOf(s: SchedulerState): number {
  return runLimit(s.money, s.config?.budgets?.runCostUsd)
}

/** The role whose session starting `task` from the ready list opens, or null when it opens none (a merge, gates). */
export function sessionRoleOf(task: TaskRuntime): string | null {
  if (task.resume === "merge" || task.resume === "gates") return null
  if (task.resume === "review") return "reviewer"
  return task.resume === "debugger" ? "debugger" : "executor"
}

/** A new session of `role` fits the run's money budget now (always, without a limit). */
export function sessionFits(s: SchedulerState, role: string): boolean {
  return fits(s.money, limitOf(s), estimateUsd(s.money, role, s.config?.sessionCostUsd ?? 0), live(s))
}

/** The run has a money limit in force (0: none). */
export function moneyLimited(s: SchedulerState): boolean {
  return limitOf(s) > 0
}

/** A money limit is in force and tasks wait to start: a cost report may let one start. */
export function heldForMoney(s: SchedulerState): boolean {
  return limitOf(s) > 0 && s.ready.length > 0 && !s.runBudgetSpent
}

/** Holds back the estimate of the session just started for `taskId`. */
export function reserveSession(d: Draft, taskId: string, role: string): void {
  const s = d.s
  if (limitOf(s) <= 0) return
  s.money = reserve(s.money, taskId, estimateUsd(s.money, role, s.config?.sessionCostUsd ?? 0), limitOf(s), live(s))
}

/**
 * The next session does not fit and nothing is in flight to free what is held back: the run's money
 * budget is spent. Asked once; the run stops blocked until the answer.
 */
export function askRunCost(d: Draft): void {
  const s = d.s
  if (s.questions.some(isCostQuestion)) return
  s.runBudgetSpent = true
  const limit = limitOf(s)
  const questionId = `${COST_QUESTION}${s.eventCount}`
  const text = `The run's money budget of $${limit} is spent ($${s.money.usd.toFixed(4)} so far); the next session would pass it. Answer "raise to N" (USD) to continue, or "stop".`
  s.questions = [...s.questions, { questionId, taskId: null, text, answers: [`raise to N`, "stop"] }]
  d.emit({ type: "ask", id: `ask:${questionId}`, questionId, text })
}

export function isCostQuestion(q: Question): boolean {
  return q.questionId.startsWith(COST_QUESTION)
}

/** "raise to N": the run goes on with N as its limit; "stop": it stays stopped, the question answered. */
export function answerRunCost(d: Draft, question: Question, answer: string): string | undefined {
  const s = d.s
  const parsed = parseCostAnswer(answer, limitOf(s))
  if ("refused" in parsed) return parsed.refused
  s.questions = s.questions.filter((q) => q !== question)
  if ("stop" in parsed) {
    d.notify(`the run stays stopped: its money budget of $${limitOf(s)} is spent (the user answered stop)`)
    return undefined
  }
  s.money = { ...s.money, runLimitUsd: parsed.raiseTo }
  s.runBudgetSpent = false
  d.notify(`the run's money budget is raised to $${parsed.raiseTo}`)
  d.reopen(true)
  d.schedule()
  return undefined
}

/**
 * Adds a session's reported cost; returns the budgets it overran (the run's, then the task's) for the
 * machine to spend, as it does for requests and tokens.
 */
/**
 * The task a session works for, so its cost is the task's even when reported after the task moved on. Kept
 * when the run counts money (a limit, or a priced model), so the logs of runs without either fold as before.
 */
export function ownSession(d: Draft, sessionId: string, taskId: string): void {
  if (!moneyLimited(d.s) && !(d.s.config?.sessionCostUsd ?? 0)) return
  d.s.money = { ...d.s.money, owners: { ...d.s.money.owners, [sessionId]: taskId } }
}

export function recordCost(
  d: Draft,
  report: { sessionId: string; role: string; costUsd?: number; unpriced?: number },
  taskId: string | null,
  judge: boolean,
): { taskId?: string }[] {
  const s = d.s
  const owner = taskId ?? s.money.owners[report.sessionId] ?? null
  s.money = addCost(s.money, report, owner)
  if (!judge || !s.config?.budgets) return []
  return costOverruns(s.money, s.config.budgets, owner, s.runBudgetSpent)
}

/** A task's cost budget was spent: its next session starts afresh. */
export function resetCost(d: Draft, taskId: string): void {
  d.s.money = resetTaskCost(d.s.money, taskId)
}

/** The runtime recorded a reservation as it started the session: once, and only the one the machine made. */
export function reservationLogged(d: Draft, e: { taskId: string; usd: number }): string | undefined {
  const r = d.s.money.reserved[e.taskId]
  if (!r) return `task ${e.taskId} holds no money back`
  if (r.logged) return `the reservation of task ${e.taskId} is already recorded`
  if (Math.abs(r.usd - e.usd) > 1e-9) return `task ${e.taskId} holds back $${r.usd}, not $${e.usd}`
  d.s.money = { ...d.s.money, reserved: { ...d.s.money.reserved, [e.taskId]: { ...r, logged: true } } }
  return undefined
}
