import { z } from "zod"
import type { BudgetLimits } from "./vocabulary"

/**
 * What the run's model sessions spent, folded from `usage.recorded` events: the budgets are decided from
 * this (by the machine), so a restart folds the same totals and takes the same decisions.
 */
const UsageTotals = z.object({ requests: z.number().int().min(0), tokens: z.number().int().min(0) })
type UsageTotals = z.infer<typeof UsageTotals>

export const UsageState = z.object({
  /** When the run started (run.started's time): the run's minutes are counted from it. */
  startedAt: z.string().nullable(),
  run: UsageTotals,
  /** The totals each session reported last (events carry a session's totals, so a repeated one changes nothing). */
  sessions: z.record(z.string(), UsageTotals),
  /** Per task, since its budget was last spent: a blocked task's next session starts afresh. */
  tasks: z.record(z.string(), UsageTotals),
  /** Times the run's budget was spent; each answer grants one more budget's worth. */
  runGrants: z.number().int().min(0),
})
export type UsageState = z.infer<typeof UsageState>

const ZERO: UsageTotals = { requests: 0, tokens: 0 }

export function emptyUsage(startedAt: string | null): UsageState {
  return { startedAt, run: ZERO, sessions: {}, tasks: {}, runGrants: 0 }
}

type UsageReport = { sessionId: string; requests: number; tokens: number }
type Overrun = { taskId?: string; kind: "requests" | "tokens" }

/**
 * Adds a session's new totals. `taskId`: the task whose budget the session spends (its current worker or
 * reviewer), or null. Returns the refusal when the report adds nothing (an echo, or a replayed report).
 */
export function addUsage(usage: UsageState, report: UsageReport, taskId: string | null): UsageState | string {
  const known = usage.sessions[report.sessionId] ?? ZERO
  const delta = { requests: Math.max(0, report.requests - known.requests), tokens: Math.max(0, report.tokens - known.tokens) }
  if (delta.requests === 0 && delta.tokens === 0)
    return `session ${report.sessionId} already reported ${known.requests} requests and ${known.tokens} tokens; nothing new`
  const plus = (a: UsageTotals): UsageTotals => ({ requests: a.requests + delta.requests, tokens: a.tokens + delta.tokens })
  return {
    ...usage,
    run: plus(usage.run),
    sessions: { ...usage.sessions, [report.sessionId]: { requests: Math.max(known.requests, report.requests), tokens: Math.max(known.tokens, report.tokens) } },
    tasks: taskId === null ? usage.tasks : { ...usage.tasks, [taskId]: plus(usage.tasks[taskId] ?? ZERO) },
  }
}

/** The budgets overrun now (a limit of N allows N; 0 is no limit): the run's first, then the task's. */
export function overruns(limits: BudgetLimits, usage: UsageState, taskId: string | null, runSpent: boolean): Overrun[] {
  const out: Overrun[] = []
  const grants = 1 + usage.runGrants
  if (!runSpent) {
    if (limits.runRequests > 0 && usage.run.requests > limits.runRequests * grants) out.push({ kind: "requests" })
    else if (limits.runTokens > 0 && usage.run.tokens > limits.runTokens * grants) out.push({ kind: "tokens" })
  }
  const task = taskId === null ? undefined : usage.tasks[taskId]
  if (task && taskId !== null) {
    if (limits.taskRequests > 0 && task.requests > limits.taskRequests) out.push({ taskId, kind: "requests" })
    else if (limits.taskTokens > 0 && task.tokens > limits.taskTokens) out.push({ taskId, kind: "tokens" })
  }
  return out
}

/** A task's budget was spent: its next session starts afresh. */
export function resetTask(usage: UsageState, taskId: string): UsageState {
  const { [taskId]: _spent, ...tasks } = usage.tasks
  return { ...usage, tasks }
}

/** Whole minutes since the run started, at `now` (ms); the runtime's clock asks, the machine decides nothing from it. */
export function minutesSince(usage: UsageState, now: number): number {
  return usage.startedAt ? Math.floor((now - Date.parse(usage.startedAt)) / 60_000) : 0
}
