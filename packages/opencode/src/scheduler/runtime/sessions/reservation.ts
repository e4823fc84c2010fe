import { runLimit } from "../../core/money"
import type { LogPort } from "../ports"

/**
 * Records in the log the money the machine held back for a task's session (core/money-rules.ts) as the
 * session is started, so every reservation is an event beside the costs (usage.recorded). Once per
 * reservation: the machine refuses a second, so a command carried out again after a restart adds nothing.
 */
export async function recordReservation(log: LogPort, taskId: string, role: string): Promise<void> {
  const state = log.state()
  const r = state?.money.reserved[taskId]
  if (!state || !r || r.logged) return
  await log.apply({ type: "cost.reserved", taskId, role, usd: r.usd, spentUsd: state.money.usd, limitUsd: runLimit(state.money, state.config?.budgets?.runCostUsd) })
}
