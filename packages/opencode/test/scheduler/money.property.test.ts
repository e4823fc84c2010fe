import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { transition } from "../../src/scheduler/core/machine"
import { reservedUsd } from "../../src/scheduler/core/money"
import { ACTIVE_STATUSES, type SchedulerState } from "../../src/scheduler/core/state"
import { ev, graphOf, started, steps, task, type EventInput } from "./fixtures"

/**
 * The money budget's promise, over any interleaving: whenever the machine starts a session (a dispatch or a
 * review), what was spent plus what every session in flight holds back stays within the run's limit — so
 * parallel sessions cannot overshoot together. The machine is driven by random events: sessions confirmed,
 * costs reported (any amount, above the estimates too), reports, gates, reviews and merges.
 */
const IDS = ["T-1", "T-2", "T-3", "T-4"]
const SESSION_STATUSES = ["running", "debugging", "reviewing"]

type Move = { kind: "ack" | "cost" | "report" | "gates" | "review" | "pass" | "merge"; task: number; usd: number }
const move = fc.record({
  kind: fc.constantFrom<Move["kind"]>("ack", "cost", "cost", "report", "gates", "review", "pass", "merge"),
  task: fc.integer({ min: 0, max: IDS.length - 1 }),
  usd: fc.double({ min: 0.001, max: 0.8, noNaN: true }),
})

function eventFor(s: SchedulerState, m: Move, spent: Map<string, number>): EventInput | null {
  const t = s.tasks[m.task]!
  const id = t.id
  switch (m.kind) {
    case "ack":
      return t.status === "running" && t.sessionId === null ? steps.dispatched(id, t.attempts) : t.status === "reviewing" && t.reviewSessionId === null ? steps.reviewStarted(id) : null
    case "cost": {
      const sessionId = t.status === "reviewing" ? t.reviewSessionId : t.sessionId
      if (!sessionId || !SESSION_STATUSES.includes(t.status)) return null
      const total = (spent.get(sessionId) ?? 0) + m.usd
      spent.set(sessionId, total)
      return { type: "usage.recorded", sessionId, taskId: id, role: t.status === "reviewing" ? "reviewer" : "executor", requests: Math.round(total * 1000), tokens: 1, costUsd: total }
    }
    case "report":
      return t.status === "running" && t.sessionId !== null ? steps.reported(id, t.attempts, "executor", t.sessionId) : null
    case "gates":
      return t.status === "gating" ? steps.gatesPassed(id) : null
    case "review":
      return t.status === "reviewing" && t.reviewSessionId === null ? steps.reviewStarted(id) : null
    case "pass":
      return t.status === "reviewing" && t.reviewSessionId !== null ? steps.reviewPass(id) : null
    case "merge":
      return t.status === "merging" ? steps.merged(id) : null
  }
}

describe("the money budget over any interleaving", () => {
  it("a session starts only while spent + held back stays within the limit", () => {
    fc.assert(
      fc.property(fc.double({ min: 0.5, max: 3, noNaN: true }), fc.double({ min: 0.05, max: 1.5, noNaN: true }), fc.array(move, { maxLength: 60 }), (limit, first, moves) => {
        const config = {
          concurrency: 4,
          repairBudget: 1,
          stallRetries: 1,
          sessionCostUsd: first,
          budgets: { taskRequests: 0, runRequests: 0, taskTokens: 0, runTokens: 0, runMinutes: 0, runCostUsd: limit },
        }
        let state = started(graphOf(...IDS.map((id) => task(id))), config).state
        const spent = new Map<string, number>()
        const live = (s: SchedulerState) => (id: string) => ACTIVE_STATUSES.has(s.tasks.find((t) => t.id === id)!.status)
        const check = (s: SchedulerState, starts: number) => {
          if (starts === 0) return
          expect(s.money.usd + reservedUsd(s.money, live(s))).toBeLessThanOrEqual(limit + 1e-9)
        }
        check(state, 1)
        for (const m of moves) {
          const e = eventFor(state, m, spent)
          if (!e) continue
          const before = state.money.usd
          const result = transition(state, ev(e))
          if ("refused" in result) continue
          state = result.state
          const starts = result.commands.filter((c) => c.type === "dispatch" || c.type === "review").length
          // What was spent when the session started is what the event brought: never past the limit.
          if (starts > 0) expect(Math.max(before, state.money.usd)).toBeLessThanOrEqual(limit + 1e-9)
          check(state, starts)
        }
      }),
      { numRuns: 300 },
    )
  })
})
