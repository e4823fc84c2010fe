import { ACTIVE_STATUSES, type SchedulerState } from "../scheduler/core/state"
import { reservedUsd, runLimit } from "../scheduler/core/money"
import { t, tOr, type Lang } from "./words"

/**
 * What the run cost in USD, rolled up per session, task, role and run from the folded `usage.recorded`
 * events (the engine's own prices). Requests of a model with no price are counted apart, never as $0.
 */
export namespace MoneyLines {
  export type Money = {
    usd: number
    /** Requests whose model has no price: their cost is unknown. */
    unpriced: number
    /** The run's limit in force (0: none), and what the sessions in flight hold back against it. */
    limitUsd: number
    reservedUsd: number
    taskLimitUsd: number
    byTask: Record<string, number>
    byRole: Record<string, number>
    bySession: Record<string, { usd: number; unpriced: number; role: string; taskId?: string }>
  }

  export function of(state: SchedulerState): Money {
    const m = state.money
    const byTask: Record<string, number> = {}
    const byRole: Record<string, number> = {}
    for (const s of Object.values(m.sessions)) {
      if (s.taskId) byTask[s.taskId] = (byTask[s.taskId] ?? 0) + s.usd
      byRole[s.role] = (byRole[s.role] ?? 0) + s.usd
    }
    const live = (id: string) => ACTIVE_STATUSES.has(state.tasks.find((x) => x.id === id)?.status ?? "")
    return {
      usd: m.usd,
      unpriced: m.unpriced,
      limitUsd: runLimit(m, state.config?.budgets?.runCostUsd),
      reservedUsd: reservedUsd(m, live),
      taskLimitUsd: state.config?.budgets?.taskCostUsd ?? 0,
      byTask,
      byRole,
      bySession: { ...m.sessions },
    }
  }

  /** Dollars as people read them: cents, or four places below a cent so a cheap run is not shown as $0.00. */
  export function usd(n: number): string {
    return n > 0 && n < 0.01 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`
  }

  /** A run that spent nothing priced, has no unpriced requests and no money limit has nothing to say about money. */
  export function worthSaying(money: Money): boolean {
    return money.usd > 0 || money.unpriced > 0 || money.limitUsd > 0 || money.taskLimitUsd > 0
  }

  /** The status lines: the run's cost against its limit, by role, and the unpriced requests said as such. */
  export function lines(lang: Lang, money: Money): string[] {
    const out: string[] = []
    const roles = Object.entries(money.byRole)
      .filter(([, n]) => n > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([r, n]) => `${tOr(lang, `role.${r}`, r)} ${usd(n)}`)
    const detail = roles.length ? ` (${roles.join(lang === "zh-CN" ? "，" : ", ")})` : ""
    if (money.limitUsd > 0) out.push(t(lang, "money.limited", { spent: usd(money.usd), limit: usd(money.limitUsd), held: usd(money.reservedUsd), detail }))
    else out.push(t(lang, "money.spent", { spent: usd(money.usd), detail }))
    if (money.taskLimitUsd > 0) out.push(t(lang, "money.task", { limit: usd(money.taskLimitUsd) }))
    if (money.unpriced > 0) out.push(t(lang, "money.unpriced", { n: money.unpriced }))
    return out
  }

  /** One short phrase for the TUI's sidebar and the summary's end line: "$0.42" or "$0.42 + 3 unpriced". */
  export function short(lang: Lang, money: Money): string {
    return money.unpriced > 0 ? t(lang, "money.short.unpriced", { spent: usd(money.usd), n: money.unpriced }) : usd(money.usd)
  }
}
