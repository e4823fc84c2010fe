import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, planningArchitect, runScenario, trivialProject, writeAndReport, type RunResult } from "../support/runs"

/**
 * The money budget with two tasks that could run in parallel. The scripted model is priced ($100 per million
 * tokens): each request costs about $0.01, except T-1's first, which reads 9,000 tokens ($0.90). A session is
 * first estimated at 10,000 tokens ($1.00); the run may spend $1.20. So T-1 starts with $1.00 held back, T-2
 * is held (it would overshoot beside it), and once T-1 merged an executor is estimated at what T-1 cost: the
 * $0.93 left to spend plus that passes $1.20, so T-2 is never dispatched and the run asks once.
 */
const requirement = "Write the two notes."
const tasks = [
  { id: "T-1", title: "Write note a", kind: "docs", writeSet: [{ path: "a.md", action: "create" }], doneWhen: "a.md exists" },
  { id: "T-2", title: "Write note b", kind: "docs", writeSet: [{ path: "b.md", action: "create" }], doneWhen: "b.md exists" },
]
const [first, ...rest] = writeAndReport("a.md", "a\n", "note a")
const scenario = {
  name: "money-budget",
  defaults: { usage: { promptTokens: 100, completionTokens: 10 }, price: { input: 100, output: 100 } },
  scripts: [
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "The run stopped." }] },
    planningArchitect("Two notes.", tasks),
    { agent: "executor", match: "^Task T-1:", steps: [{ ...first, usage: { promptTokens: 9000 } }, ...rest] },
    { agent: "executor", match: "^Task T-2:", steps: writeAndReport("b.md", "b\n", "note b") },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-money-")
  const project = trivialProject(sandbox, {
    "README.md": "# Notes\n",
    ".air/shared/config.json": JSON.stringify({ concurrency: 2, runCostUsd: 1.2, costEstimateTokens: 10_000 }),
  })
  r = await runScenario(sandbox, project, scenario, { input: requirement })
}, 600_000)

afterAll(() => sandbox?.cleanup())

describe("a money budget shared by parallel sessions", () => {
  test("the engine's prices reach the log: every usage event carries its session's cost", () => {
    const usage = r.events.filter((e) => e.type === "usage.recorded")
    expect(usage.length).toBeGreaterThan(0)
    for (const e of usage) expect(e.costUsd, JSON.stringify(e)).toBeGreaterThan(0)
    expect(usage.every((e) => (e.unpriced ?? 0) === 0)).toBe(true)
    const run = r.events.find((e) => e.type === "run.started")!
    expect(run.config.sessionCostUsd).toBeCloseTo(1.0)
    expect(run.config.budgets.runCostUsd).toBe(1.2)
  })

  test("T-1 merged; T-2 is never dispatched, and the run asks once", () => {
    const dispatched = r.events.filter((e) => e.type === "task.dispatched").map((e) => e.taskId)
    expect(dispatched).toEqual(["T-1"])
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "merged"],
      ["T-2", "blocked"],
    ])
    const asked = r.summary.questions.filter((q: any) => q.questionId.startsWith("run:cost:"))
    expect(asked).toHaveLength(1)
    expect(asked[0].text).toMatch(/money budget of \$1\.2 is spent/)
    expect(r.summary.questions).toHaveLength(1)
  })

  test("each reservation is an event: T-1's executor ($1.00 held back) and its reviewer (what was left), none for T-2", () => {
    const reserved = r.events.filter((e) => e.type === "cost.reserved")
    expect(reserved.map((e) => [e.taskId, e.role])).toEqual([
      ["T-1", "executor"],
      ["T-1", "reviewer"],
    ])
    expect(reserved[0].usd).toBeCloseTo(1.0)
    for (const e of reserved) expect(e.spentUsd + e.usd).toBeLessThanOrEqual(1.2 + 1e-9)
  })

  test("the cost never passed the budget, and the summary rolls it up per task and role", () => {
    const money = r.summary.money
    expect(money.usd).toBeGreaterThan(0.9)
    expect(money.usd).toBeLessThanOrEqual(1.2)
    expect(money.limitUsd).toBe(1.2)
    expect(money.unpriced).toBe(0)
    expect(money.byTask["T-1"]).toBeGreaterThan(0.9)
    expect(money.byTask["T-2"]).toBeUndefined()
    expect(money.byRole.executor).toBeGreaterThan(0.9)
    expect(money.byRole.reviewer).toBeGreaterThan(0)
  })
})
