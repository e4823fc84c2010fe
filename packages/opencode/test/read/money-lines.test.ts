import { describe, expect, it } from "vitest"
import { MoneyLines } from "../../src/text/money-lines"
import { RunReport } from "../../src/scheduler/runtime/report/run-report"
import { RunView } from "../../src/read/view"
import { ViewText } from "../../src/read/view-text"
import { TuiView } from "../../src/tui/view"
import type { BudgetLimits } from "../../src/scheduler/core/event.schema"
import type { EventInput } from "../scheduler/fixtures"
import { apply, graphOf, started, steps, task } from "../scheduler/fixtures"

/**
 * The money as people and tools read it, from recorded events: `aircoding status` (the budget lines, also
 * the dashboard's), `--json` (the view's budgets.money), and the end-of-run summary and its JSON.
 */
const limits = { taskRequests: 0, runRequests: 0, taskTokens: 0, runTokens: 0, runMinutes: 0 }
const usage = (sessionId: string, role: string, taskId: string | undefined, requests: number, costUsd: number, unpriced = 0): EventInput => ({
  type: "usage.recorded",
  sessionId,
  ...(taskId ? { taskId } : {}),
  role,
  requests,
  tokens: requests * 100,
  costUsd,
  unpriced,
})

function recorded(budgets: BudgetLimits = { ...limits, runCostUsd: 5 }) {
  const graph = graphOf(task("T-1"), task("T-2"))
  return apply(
    started(graph, { concurrency: 2, sessionCostUsd: 1, budgets }).state,
    steps.dispatched("T-1"),
    steps.dispatched("T-2"),
    usage("arch-1", "architect", undefined, 3, 0.05),
    usage("s-T-1-1", "executor", "T-1", 2, 0.4),
    usage("s-T-1-1", "executor", "T-1", 4, 0.75),
    usage("s-T-2-1", "executor", "T-2", 1, 0.2),
  ).state
}

const view = (state: ReturnType<typeof recorded>) => RunView.build({ state })

describe("the run's cost rolled up from usage.recorded", () => {
  it("per run, task, role and session; the sessions in flight hold back what is left of their estimates", () => {
    const money = MoneyLines.of(recorded())
    expect(money.usd).toBeCloseTo(1.0)
    expect(money.byTask).toEqual({ "T-1": 0.75, "T-2": 0.2 })
    expect(money.byRole).toEqual({ architect: 0.05, executor: 0.95 })
    expect(money.bySession["s-T-1-1"]).toEqual({ usd: 0.75, unpriced: 0, role: "executor", taskId: "T-1" })
    expect(money.limitUsd).toBe(5)
    // T-1 holds 1 − 0.75, T-2 holds 1 − 0.2.
    expect(money.reservedUsd).toBeCloseTo(0.25 + 0.8)
  })

  it("aircoding status says the cost against the limit, by role, in English and Chinese", () => {
    const v = view(recorded())
    expect(v.budgets.money?.usd).toBeCloseTo(1.0)
    expect(ViewText.budgetLines("en", v)).toContain("Cost: $1.00 of $5.00, $1.05 held back for sessions in flight (architect $0.05, executor $0.95)")
    expect(ViewText.budgetLines("zh-CN", v).find((l) => l.startsWith("费用："))).toMatch(/^费用：\$1\.00，上限 \$5\.00，为进行中的会话预留 \$1\.05/)
  })

  it("the TUI's sidebar (and the dashboard, through the same budget lines) shows the cost", () => {
    expect(TuiView.sidebar(view(recorded()), "en").tasks.map((l) => l.text)).toContain("Cost: $1.00")
    expect(TuiView.sidebar(view(recorded()), "zh-CN").tasks.map((l) => l.text)).toContain("费用：$1.00")
  })

  it("requests of a model with no price are said as such, never as $0", () => {
    const state = apply(recorded({ ...limits }), usage("s-T-2-1", "executor", "T-2", 3, 0.2, 2)).state
    const lines = ViewText.budgetLines("en", view(state))
    expect(lines).toContain("2 requests to a model with no price: their cost is unknown (not counted as $0)")
    expect(lines.some((l) => l.startsWith("Cost: $1.00 (architect"))).toBe(true)
    expect(MoneyLines.short("en", MoneyLines.of(state))).toBe("$1.00 + 2 unpriced")
  })

  it("the summary's JSON carries the roll-up and its text a cost line", () => {
    const summary = RunReport.summary("/nonexistent", recorded())
    expect(summary.money?.byTask["T-1"]).toBe(0.75)
    expect(RunReport.summaryText(summary, "en")).toMatch(/^ {2}Cost: \$1\.00$/m)
    expect(RunReport.summaryText(summary, "zh-CN")).toMatch(/^ {2}费用：\$1\.00$/m)
  })

  it("a run with no cost reported says nothing of money in the summary", () => {
    const summary = RunReport.summary("/nonexistent", started(graphOf(task("T-1"))).state)
    expect(RunReport.summaryText(summary, "en")).not.toMatch(/Cost/)
  })
})
