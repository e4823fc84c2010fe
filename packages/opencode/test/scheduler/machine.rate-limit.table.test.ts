import { describe, expect, it } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import { transition } from "../../src/scheduler/core/machine"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import { apply, complete, ev, graphOf, started, steps, task, type EventInput } from "./fixtures"
import { deepFreeze } from "./invariants"
import { checkRow, type TableRow } from "./table"

/**
 * Rows of the machine's table for the run's provider rate limit: a 429 on any session (rate.limited) lowers
 * the number of tasks at work until calls succeed again (rate.eased), one step at a time; views read
 * `rateLimit` for "paused until …". The pause itself is the runtime's (it holds every new model call).
 */

function show(command: Command): string {
  if (command.type === "dispatch") return `dispatch:${command.taskId}:${command.role}:${command.attempt}`
  if ("taskId" in command) return `${command.type}:${command.taskId}`
  return command.type
}

/** Four independent tasks in one phase, concurrency 4: all four start at once. */
const four = graphOf(task("A", { writeSet: [{ path: "a.cpp", action: "create" }] }), task("B", { writeSet: [{ path: "b.cpp", action: "create" }] }), task("C", { writeSet: [{ path: "c.cpp", action: "create" }] }), task("D", { writeSet: [{ path: "d.cpp", action: "create" }] }), task("E", { writeSet: [{ path: "e.cpp", action: "create" }] }))
const limited = (cap: number, until = "2026-01-01T00:00:02.000Z"): EventInput => ({ type: "rate.limited", until, cap, sessionId: "s-A-1", message: "Rate limit reached" })
const eased = (cap: number): EventInput => ({ type: "rate.eased", cap })
const retrying: EventInput = { type: "model.retrying", sessionId: "s-A-1", role: "executor", taskId: "A", attempt: 1, nextAt: "2026-01-01T00:00:08.000Z", message: "Service Unavailable" }

const s = {
  /** A, B, C, D at work; E ready. */
  running: () => apply(started(four, { concurrency: 4 }).state, steps.dispatched("A"), steps.dispatched("B"), steps.dispatched("C"), steps.dispatched("D")).state,
  limited: () => apply(s.running(), limited(1)).state,
}

const rows: TableRow[] = [
  {
    rule: "a rate limit records the advised time and the lowered cap for the views",
    given: s.running,
    event: limited(2),
    commands: ["notify"],
    check: (st) => expect(st.rateLimit).toEqual({ until: "2026-01-01T00:00:02.000Z", cap: 2 }),
  },
  {
    rule: "a later rate limit keeps the later of the two advised times",
    given: () => apply(s.running(), limited(2, "2026-01-01T00:00:09.000Z")).state,
    event: limited(1, "2026-01-01T00:00:03.000Z"),
    commands: ["notify"],
    check: (st) => expect(st.rateLimit).toEqual({ until: "2026-01-01T00:00:09.000Z", cap: 1 }),
  },
  {
    rule: "a cap above the configured concurrency is the concurrency",
    given: s.running,
    event: limited(9),
    commands: ["notify"],
    check: (st) => expect(st.rateLimit?.cap).toBe(4),
  },
  {
    rule: "a task that goes to the merge queue under a lowered cap starts no new task while the others still work",
    given: () => apply(s.limited(), steps.reported("A"), steps.gatesPassed("A")).state,
    event: steps.reviewPass("A"),
    statuses: { A: "merging", E: "pending" },
    commands: ["merge"],
  },
  {
    rule: "the same review without a rate limit starts the next task",
    given: () => apply(s.running(), steps.reported("A"), steps.gatesPassed("A")).state,
    event: steps.reviewPass("A"),
    statuses: { A: "merging", E: "running" },
    commands: ["merge", "dispatch:E:executor:1"],
  },
  {
    rule: "a step up that still leaves the working tasks at the cap starts nothing",
    given: s.limited,
    event: eased(2),
    commands: [],
    check: (st) => expect(st.rateLimit?.cap).toBe(2),
  },
  {
    rule: "a step up under which a ready task fits starts it",
    given: () => complete(complete(apply(s.limited()).state, "A").state, "B").state,
    event: eased(3),
    statuses: { E: "running" },
    commands: ["dispatch:E:executor:1"],
    check: (st) => expect(st.rateLimit?.cap).toBe(3),
  },
  {
    rule: "back at the configured concurrency the rate limit is over",
    given: () => apply(s.limited(), eased(2), eased(3)).state,
    event: eased(4),
    commands: [],
    check: (st) => expect(st.rateLimit).toBeNull(),
  },
  {
    rule: "the engine's retry of a session's call is for the views: the run goes on as it was",
    given: s.running,
    event: retrying,
    statuses: { A: "running", E: "pending" },
    commands: [],
    check: (st) => expect({ rateLimit: st.rateLimit, active: st.active }).toEqual({ rateLimit: null, active: ["A", "B", "C", "D"] }),
  },
]

describe("provider rate limit: every rule", () => {
  for (const row of rows) it(row.rule, () => checkRow(row, show))
})

const refusals: { rule: string; given: () => SchedulerState; event: EventInput; reason: RegExp }[] = [
  { rule: "a rate limit before any run", given: initialState, event: limited(1), reason: /no run has started/ },
  { rule: "a step up with no rate limit in force", given: s.running, event: eased(2), reason: /no rate limit/ },
  { rule: "a retry before any run", given: initialState, event: retrying, reason: /no run has started/ },
]

describe("provider rate limit: refusals change nothing", () => {
  for (const row of refusals) {
    it(row.rule, () => {
      const given = deepFreeze(row.given())
      const result = transition(given, ev(row.event))
      expect("refused" in result && result.refused).toMatch(row.reason)
    })
  }
})
