import { z } from "zod"

/**
 * What the run's sessions cost in USD, as the engine priced each request from its model catalogue, folded
 * from `usage.recorded`; and what the sessions in flight are expected to cost (reservations). The money
 * budget is decided from both: a session is started only when what was spent plus what the sessions in
 * flight hold back plus its own estimate fits, so parallel sessions cannot overshoot together.
 */
const SessionCost = z.object({
  usd: z.number().min(0),
  /** Requests of a model with no price: counted as such, never as $0. */
  unpriced: z.number().int().min(0),
  role: z.string(),
  taskId: z.string().optional(),
})
type SessionCost = z.infer<typeof SessionCost>

/** Held back for a task's current session when it was started: its estimate, and the task's cost at that moment. */
const Reservation = z.object({ usd: z.number().min(0), from: z.number().min(0), logged: z.boolean().optional() })

export const MoneyState = z.object({
  usd: z.number().min(0),
  unpriced: z.number().int().min(0),
  sessions: z.record(z.string(), SessionCost),
  /** Per task, since its cost budget was last spent: a blocked task's next session starts afresh. */
  tasks: z.record(z.string(), z.number().min(0)),
  reserved: z.record(z.string(), Reservation),
  /**
   * The task each session worked for (task.dispatched, review.started): a session's last cost is reported after
   * its report moved the task on, when the runtime no longer names the task.
   */
  owners: z.record(z.string(), z.string()).default({}),
  /** The run's limit as the user raised it in answer to the spent budget (null: as configured). */
  runLimitUsd: z.number().min(0).nullable(),
})
export type MoneyState = z.infer<typeof MoneyState>

export function emptyMoney(): MoneyState {
  return { usd: 0, unpriced: 0, sessions: {}, tasks: {}, reserved: {}, owners: {}, runLimitUsd: null }
}

/** The estimate comes from this many of the role's latest sessions. */
const RECENT_SESSIONS = 5

type CostReport = { sessionId: string; role: string; costUsd?: number; unpriced?: number }

/**
 * Adds a session's new totals (events carry totals, so a repeated one adds nothing). `taskId`: the task whose
 * budget the session spends, or null.
 */
export function addCost(money: MoneyState, report: CostReport, taskId: string | null): MoneyState {
  if (report.costUsd === undefined && report.unpriced === undefined) return money
  const known = money.sessions[report.sessionId]
  const usd = Math.max(known?.usd ?? 0, report.costUsd ?? 0)
  const unpriced = Math.max(known?.unpriced ?? 0, report.unpriced ?? 0)
  const addedUsd = usd - (known?.usd ?? 0)
  const session: SessionCost = { usd, unpriced, role: report.role, ...(taskId !== null ? { taskId } : known?.taskId ? { taskId: known.taskId } : {}) }
  return {
    ...money,
    usd: money.usd + addedUsd,
    unpriced: money.unpriced + unpriced - (known?.unpriced ?? 0),
    sessions: { ...money.sessions, [report.sessionId]: session },
    tasks: taskId === null || addedUsd === 0 ? money.tasks : { ...money.tasks, [taskId]: (money.tasks[taskId] ?? 0) + addedUsd },
  }
}

/** Everything a task's sessions cost so far (never reset): a reservation is measured against it. */
function taskTotal(money: MoneyState, taskId: string): number {
  let sum = 0
  for (const s of Object.values(money.sessions)) if (s.taskId === taskId) sum += s.usd
  return sum
}

/**
 * What one more session of `role` is expected to cost: the mean of the role's latest priced sessions, or
 * before any, `firstUsd` (the context a session starts with times the model's price, set when the run started).
 */
export function estimateUsd(money: MoneyState, role: string, firstUsd: number): number {
  const recent = Object.values(money.sessions)
    .filter((s) => s.role === role && s.usd > 0)
    .slice(-RECENT_SESSIONS)
  if (recent.length === 0) return firstUsd
  return recent.reduce((sum, s) => sum + s.usd, 0) / recent.length
}

/**
 * What the sessions in flight still hold back: each reservation less what its task spent since, for the
 * tasks still at work (`live`: a session's last cost arrives after its report, while the task is gated).
 */
export function reservedUsd(money: MoneyState, live: (taskId: string) => boolean): number {
  let sum = 0
  for (const [taskId, r] of Object.entries(money.reserved)) {
    if (!live(taskId)) continue
    sum += Math.max(0, r.usd - (taskTotal(money, taskId) - r.from))
  }
  return sum
}

/** The run's limit in force (0: none): the user's raise, or the configured one. */
export function runLimit(money: MoneyState, configured: number | undefined): number {
  return money.runLimitUsd ?? configured ?? 0
}

/** A new session of `estimate` fits: spent + held back + its estimate stays within the limit (0 = no limit). */
export function fits(money: MoneyState, limit: number, estimate: number, live: (taskId: string) => boolean): boolean {
  if (limit <= 0) return true
  return money.usd + reservedUsd(money, live) + estimate <= limit
}

/**
 * Holds back a session's estimate for its task. A session that was not held (a task's next step: debugger,
 * reviewer) holds back at most what is left, so spent + held back never passes the limit.
 */
export function reserve(money: MoneyState, taskId: string, estimate: number, limit: number, live: (taskId: string) => boolean): MoneyState {
  const others = { ...money, reserved: Object.fromEntries(Object.entries(money.reserved).filter(([id]) => id !== taskId && live(id))) }
  const left = limit > 0 ? Math.max(0, limit - money.usd - reservedUsd(others, live)) : Infinity
  return { ...others, reserved: { ...others.reserved, [taskId]: { usd: Math.min(estimate, left), from: taskTotal(money, taskId) } } }
}

/** The budgets overrun by what was spent: the run's, then the task's (a limit of N allows N; 0 is none). */
export function costOverruns(money: MoneyState, limits: { runCostUsd?: number; taskCostUsd?: number }, taskId: string | null, runSpent: boolean): { taskId?: string }[] {
  const out: { taskId?: string }[] = []
  const run = runLimit(money, limits.runCostUsd)
  if (!runSpent && run > 0 && money.usd > run) out.push({})
  const task = limits.taskCostUsd ?? 0
  if (taskId !== null && task > 0 && (money.tasks[taskId] ?? 0) > task) out.push({ taskId })
  return out
}

/** A task's cost budget was spent: its next session starts afresh. */
export function resetTaskCost(money: MoneyState, taskId: string): MoneyState {
  const { [taskId]: _spent, ...tasks } = money.tasks
  return { ...money, tasks }
}

/** The answers the run's spent money budget honours: "raise to N" (USD, above the limit) or "stop". */
export function parseCostAnswer(answer: string, limit: number): { raiseTo: number } | { stop: true } | { refused: string } {
  const text = answer.trim().toLowerCase()
  if (/^(stop|停止)[.!。！]?$/.test(text)) return { stop: true }
  const m = /^(?:raise to|提高到)\s*\$?\s*(\d+(?:\.\d+)?)\s*(?:usd|美元)?$/.exec(text)
  if (!m) return { refused: `answer "raise to N" (a new run limit in USD, above ${limit}) or "stop"` }
  const raiseTo = Number(m[1])
  if (!(raiseTo > limit)) return { refused: `the run's money budget is $${limit}; "raise to N" needs N above it` }
  return { raiseTo }
}
