import { describe, expect, it } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import type { BudgetLimits } from "../../src/scheduler/core/event.schema"
import { apply, complete, graphOf, runtimeOf, started, steps, task, type EventInput } from "./fixtures"
import { checkRow, type TableRow } from "./table"

/**
 * The money budget as a table. T-1 and T-5 are independent, the cap is 2. The run may spend $1; a session is
 * estimated at $0.6 before any of its role reported a cost, so the two cannot start together.
 */
const graph = graphOf(task("T-1"), task("T-5"))
const limits = (set: Partial<BudgetLimits>): BudgetLimits => ({ taskRequests: 0, runRequests: 0, taskTokens: 0, runTokens: 0, runMinutes: 0, ...set })
const config = { concurrency: 2, repairBudget: 1, stallRetries: 1, sessionCostUsd: 0.6, budgets: limits({ runCostUsd: 1 }) }
const cost = (sessionId: string, taskId: string | undefined, requests: number, costUsd: number, unpriced = 0): EventInput => ({
  type: "usage.recorded",
  sessionId,
  ...(taskId ? { taskId } : {}),
  role: taskId ? "executor" : "architect",
  requests,
  tokens: requests * 100,
  costUsd,
  unpriced,
})

function show(command: Command): string {
  if (command.type === "dispatch") return `dispatch:${command.taskId}:${command.role}:${command.attempt}`
  if (command.type === "ask") return `ask:${command.questionId}`
  if ("taskId" in command) return `${command.type}:${command.taskId}`
  if (command.type === "finish") return `finish:${command.status}`
  return command.type
}

const s = {
  /** T-1 dispatched with $0.6 held back; T-5 held. */
  fresh: () => started(graph, config).state,
  running: () => apply(s.fresh(), steps.dispatched("T-1")).state,
  /** T-1's session cost $0.9 and it merged: nothing in flight, T-5 (estimated $0.9 now) cannot fit. */
  asked: () => apply(complete(apply(s.running(), cost("s-T-1-1", "T-1", 3, 0.9)).state, "T-1").state).state,
}

describe("the money budget: the first dispatch", () => {
  it("holds back one estimate and starts only what fits: T-1, not T-5", () => {
    const { state, commands } = started(graph, config)
    expect(commands.map(show).filter((c) => c.startsWith("dispatch"))).toEqual(["dispatch:T-1:executor:1"])
    expect(state.money.reserved["T-1"]).toEqual({ usd: 0.6, from: 0 })
    expect(state.ready).toEqual(["T-5"])
  })

  it("without a money limit both start", () => {
    const { commands } = started(graph, { ...config, budgets: limits({}) })
    expect(commands.map(show).filter((c) => c.startsWith("dispatch"))).toEqual(["dispatch:T-1:executor:1", "dispatch:T-5:executor:1"])
  })
})

const rows: TableRow[] = [
  {
    rule: "a cost report lowers the estimate to the role's average: $0.3 spent + $0.3 still held + $0.3 fits, T-5 starts",
    given: s.running,
    event: cost("s-T-1-1", "T-1", 1, 0.3),
    statuses: { "T-5": "running" },
    commands: ["dispatch:T-5:executor:1"],
    check: (st) => {
      expect(st.money.usd).toBeCloseTo(0.3)
      expect(st.money.reserved["T-5"]!.usd).toBeCloseTo(0.3)
    },
  },
  {
    rule: "a cost report that keeps the estimate high holds T-5 while T-1 is in flight (no question yet)",
    given: s.running,
    event: cost("s-T-1-1", "T-1", 2, 0.5),
    statuses: { "T-5": "pending" },
    commands: [],
    check: (st) => expect(st.questions).toEqual([]),
  },
  {
    rule: "the same totals again add nothing",
    given: () => apply(s.running(), cost("s-T-1-1", "T-1", 2, 0.5)).state,
    event: { type: "usage.recorded", sessionId: "s-T-1-1", taskId: "T-1", role: "executor", requests: 3, tokens: 300, costUsd: 0.5 },
    commands: [],
    check: (st) => expect(st.money.usd).toBeCloseTo(0.5),
  },
  {
    rule: "spending past the run's limit blocks what is in flight and asks once, with its answers",
    given: s.running,
    event: cost("s-T-1-1", "T-1", 4, 1.2),
    statuses: { "T-1": "blocked", "T-5": "blocked" },
    commands: ["abort:T-1", "ask:run:cost:6", "finish:blocked", "notify"],
    check: (st) => {
      expect(st.runBudgetSpent).toBe(true)
      expect(st.questions.map((q) => [q.questionId, q.answers])).toEqual([["run:cost:6", ["raise to N", "stop"]]])
      expect(st.usage.runGrants).toBe(0)
    },
  },
  {
    rule: "a task's cost budget spent blocks that task alone and asks about it",
    given: () => apply(started(graph, { ...config, budgets: limits({ taskCostUsd: 0.5 }) }).state, steps.dispatched("T-1")).state,
    event: cost("s-T-1-1", "T-1", 2, 0.7),
    statuses: { "T-1": "blocked", "T-5": "running" },
    commands: ["abort:T-1", "ask:T-1:blocked:1", "notify"],
    check: (st) => expect(st.money.tasks["T-1"]).toBeUndefined(),
  },
  {
    rule: "requests of a model with no price are counted as unpriced, never as $0 spent: the estimate stays, T-5 still held",
    given: s.running,
    event: cost("s-T-1-1", "T-1", 3, 0, 3),
    statuses: { "T-5": "pending" },
    commands: [],
    check: (st) => {
      expect(st.money.unpriced).toBe(3)
      expect(st.money.usd).toBe(0)
    },
  },
  {
    rule: 'the answer "raise to 3" lifts the run\'s limit and starts T-5',
    given: s.asked,
    event: { type: "question.answered", questionId: s.asked().questions[0]?.questionId ?? "?", answer: "raise to 3" },
    statuses: { "T-5": "running" },
    commands: ["notify", "dispatch:T-5:executor:1"],
    check: (st) => {
      expect(st.money.runLimitUsd).toBe(3)
      expect(st.questions).toEqual([])
      expect(st.stage).toBe("running")
    },
  },
  {
    rule: 'the answer "stop" leaves the run stopped, the question answered',
    given: s.asked,
    event: { type: "question.answered", questionId: s.asked().questions[0]?.questionId ?? "?", answer: "stop" },
    statuses: { "T-5": "blocked" },
    commands: ["notify"],
    check: (st) => {
      expect(st.questions).toEqual([])
      expect(st.stage).toBe("finished")
    },
  },
]

describe("the money budget as a table", () => {
  for (const row of rows) it(row.rule, () => checkRow(row, show))
})

describe("a reservation recorded by the runtime (cost.reserved)", () => {
  const reserved: EventInput = { type: "cost.reserved", taskId: "T-1", role: "executor", usd: 0.6, spentUsd: 0, limitUsd: 1 }
  it("is accepted once, as the machine made it, and changes nothing else", () => {
    const { state, commands } = apply(s.running(), reserved)
    expect(commands).toEqual([])
    expect(state.money.reserved["T-1"]).toEqual({ usd: 0.6, from: 0, logged: true })
    expect(() => apply(state, reserved)).toThrow(/already recorded/)
  })
  it("is refused for a sum the machine did not hold back, or a task that holds none", () => {
    expect(() => apply(s.running(), { ...reserved, usd: 0.5 })).toThrow(/holds back \$0.6, not \$0.5/)
    expect(() => apply(s.running(), { ...reserved, taskId: "T-5" })).toThrow(/T-5 holds no money back/)
  })
})

describe("the money budget spent with nothing in flight", () => {
  it("T-1 merged at $0.9: T-5 (estimated $0.9) is not dispatched and the run asks once", () => {
    const st = s.asked()
    expect(runtimeOf(st, "T-5").attempts).toBe(0)
    expect(st.questions.filter((q) => q.questionId.startsWith("run:cost:"))).toHaveLength(1)
    expect(st.runBudgetSpent).toBe(true)
    expect(st.finished?.status).toBe("blocked")
  })

  it("an answer that is neither is refused with the two that work", () => {
    const st = s.asked()
    const refused = apply.bind(null, st, { type: "question.answered", questionId: st.questions[0]!.questionId, answer: "more please" })
    expect(refused).toThrow(/raise to N.*"stop"/)
  })

  it("a raise that is not above the limit is refused", () => {
    const st = s.asked()
    expect(() => apply(st, { type: "question.answered", questionId: st.questions[0]!.questionId, answer: "raise to 0.5" })).toThrow(/needs N above it/)
  })
})
