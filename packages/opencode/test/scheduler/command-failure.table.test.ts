import { describe, expect, test } from "vitest"
import type { Command, CommandType } from "../../src/scheduler/core/command"
import { commandFailure } from "../../src/scheduler/core/command-failure"
import { Event } from "../../src/scheduler/core/event.schema"
import { transition } from "../../src/scheduler/core/machine"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import { apply, ev, graphOf, started, steps, task, type EventInput } from "./fixtures"
import { deepFreeze } from "./invariants"
import { TEST_CONFIG } from "./simulate"

/**
 * A command the runtime could not carry out (it threw) becomes the event of its own failure: for each
 * command the machine issues, that event is accepted in the state that issued it, and the machine decides
 * something — a fresh session, a question, the run's end — so nothing waits on a command that is gone
 * (runtime/interpreter.ts, execute). Commands nothing waits on (a message, a question, an abort) have none.
 */

const one = graphOf(task("T-1"))
const two = graphOf(task("T-1"), task("T-2", { phase: 2, deps: ["T-1"], writeSet: [{ path: "src/T-2.cpp", action: "modify" }] }))
const through = (...events: EventInput[]) => apply(started(one).state, ...events)

/** States whose last event made the machine issue the command named. */
const ISSUED: { [T in CommandType]?: () => { state: SchedulerState; commands: Command[] } } = {
  plan: () => apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: TEST_CONFIG }),
  dispatch: () => started(one),
  runGates: () => through(steps.dispatched("T-1"), steps.reported("T-1")),
  review: () => through(steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1")),
  merge: () => through(steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1")),
  replan: () => apply(started(one).state, { type: "change.requested", text: "also T-3" }),
  reviewMilestone: () =>
    apply(started(two).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), steps.merged("T-1")),
  consult: () =>
    through(steps.dispatched("T-1"), { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "stuck", blocked: { reason: "no header" } } }),
  classifyAdr: () => apply(started(one).state, { type: "adr.recorded", adr: "ADR-0001", hash: "h1" }, { type: "adr.edited", adr: "ADR-0001", hash: "h2" }),
}

/** What moves the work on after a failure. */
const DECISIONS = new Set<CommandType>(["dispatch", "review", "plan", "replan", "reviewMilestone", "consult", "ask", "finish", "merge", "runGates"])

describe("a command that threw becomes an event the machine folds and decides on", () => {
  for (const [type, setup] of Object.entries(ISSUED) as [CommandType, () => { state: SchedulerState; commands: Command[] }][])
    test(type, () => {
      const { state, commands } = setup()
      const cmd = commands.find((c) => c.type === type)
      expect(cmd, `the setup issues ${type}: ${commands.map((c) => c.type).join(", ")}`).toBeDefined()
      const event = commandFailure(cmd!, `Scheduler error while carrying out ${type}: EACCES`)
      expect(event).toBeDefined()
      expect(() => Event.parse(ev(event!))).not.toThrow()
      const result = transition(deepFreeze(state), ev(event!))
      if ("refused" in result) throw new Error(`${event!.type} refused: ${result.refused}`)
      const decided = result.commands.some((c) => DECISIONS.has(c.type)) || (type === "classifyAdr" && result.state.adrEdits.length === 0)
      expect(decided, `${type} → ${event!.type}: ${result.commands.map((c) => c.type).join(", ")}`).toBe(true)
    })

  test("every other command's failure is a valid event, or none when nothing waits on it", () => {
    const rest: Command[] = [
      { type: "revert", id: "revert:T-1:9", taskId: "T-1", round: 1 },
      { type: "finish", id: "finish:done:9", status: "done" },
      { type: "runBaseline", id: "baseline:1" },
      { type: "deploy", id: "deploy:lab:1", target: "lab", n: 1 },
    ]
    for (const cmd of rest) expect(() => Event.parse(ev(commandFailure(cmd, "boom")!))).not.toThrow()
    const silent: Command[] = [
      { type: "notify", id: "n", text: "hi" },
      { type: "ask", id: "a", questionId: "q", text: "?" },
      { type: "abort", id: "x", taskId: "T-1", sessionId: "s" },
    ]
    for (const cmd of silent) expect(commandFailure(cmd, "boom")).toBeUndefined()
  })
})
