import type { BudgetLimits } from "../../core/event.schema"
import type { SchedulerState } from "../../core/state"
import { minutesSince } from "../../core/usage"

/**
 * Budgets per task and per run: model requests and tokens (decided by the machine from `usage.recorded`
 * events, see core/usage.ts) and minutes. A limit of 0 means no limit. The minutes are the one budget
 * time decides: the clock reports it (`budget.spent`, kind minutes), as it reports a task's wall-clock cap.
 * Each answer to the run's budget question grants the run one more budget's worth.
 */
export namespace Budget {
  export type Spent = {
    run: { requests: number; tokens: number; minutes: number }
    tasks: Record<string, { requests: number; tokens: number }>
  }

  /** What the current run spent, from its state (tasks: since each one's budget was last spent). */
  export function spent(state: SchedulerState, now: number): Spent {
    return { run: { ...state.usage.run, minutes: minutesSince(state.usage, now) }, tasks: state.usage.tasks }
  }

  /** The run's minutes are spent (a limit of N allows N minutes per grant). */
  export function minutesOver(limits: BudgetLimits, state: SchedulerState, now: number): boolean {
    if (limits.runMinutes <= 0 || state.runBudgetSpent) return false
    return minutesSince(state.usage, now) > limits.runMinutes * (1 + state.usage.runGrants)
  }
}
