import { describe, expect, it } from "vitest"
import { transition } from "../../src/scheduler/core/machine"
import type { SchedulerState } from "../../src/scheduler/core/state"
import { apply, ev, graphOf, started, statusOf, steps, task, type EventInput } from "./fixtures"
import { deepFreeze } from "./invariants"
import { checkRow, showByTask, type TableRow } from "./table"

/**
 * Rows of the machine's table for `runtime.fault` (core/fault-rules.ts), the last line of defence of issue 44: a
 * command whose outcome and failure were both refused blocks the task that still waits on it, and is stale for one
 * that moved on; the watchdog's stalled run asks one question, whose "retry" carries out again what a restart would.
 */
const show = showByTask

const graph = graphOf(task("A", { writeSet: [{ path: "a.cpp", action: "create" }] }), task("B", { writeSet: [{ path: "b.cpp", action: "create" }] }))
const gating = () => apply(started(graph, { concurrency: 2 }).state, steps.dispatched("A"), steps.dispatched("B"), steps.reported("A")).state
const commandFault = (command: string, taskId: string): EventInput => ({ type: "runtime.fault", source: "command", command, commandId: `${command}:${taskId}:1`, taskId, message: "gates.passed was refused: evidence missing" })
const watchdog: EventInput = { type: "runtime.fault", source: "watchdog", message: "stage running, tasks: 1 gating, 1 running; no command in flight, no session at work" }

const rows: TableRow[] = [
  {
    rule: "a command fault for a task still waiting on it blocks the task with a question, resumed at that step",
    given: gating,
    event: commandFault("runGates", "A"),
    statuses: { A: "blocked", B: "running" },
    commands: ["ask:A:blocked:1", "notify"],
    check: (st) => {
      expect(st.tasks.find((t) => t.id === "A")!.resume).toBe("gates")
      expect(st.questions[0]!.text).toMatch(/could not carry out its runGates: gates\.passed was refused/)
    },
  },
  {
    rule: "the watchdog's stalled run asks one question with the answers retry and stop",
    given: gating,
    event: watchdog,
    commands: [`ask:fault:${gating().eventCount + 1}`, "notify"],
    check: (st) => {
      expect(st.questions).toEqual([expect.objectContaining({ taskId: null, fault: true, answers: ["retry", "stop"] })])
      expect(st.questions[0]!.text).toMatch(/nothing at work and nothing waiting for you.*1 gating/)
    },
  },
  {
    rule: "retry carries out again what the state waits on: the gates of the gating task, as a restart would",
    given: () => apply(gating(), watchdog).state,
    event: { type: "question.answered", questionId: `fault:${gating().eventCount + 1}`, answer: "retry" },
    commands: ["runGates:A", "notify"],
    check: (st) => expect(st.questions).toEqual([]),
  },
  {
    rule: "stop ends the run blocked, the pending work parked",
    given: () => apply(started(graphOf(task("A"), task("C", { deps: ["A"] })), { concurrency: 1 }).state, steps.dispatched("A"), steps.reported("A"), watchdog).state,
    event: { type: "question.answered", questionId: "fault:7", answer: "stop" },
    commands: ["notify", "finish", "notify"],
    statuses: { C: "blocked" },
    check: (st) => expect(st.finished).toEqual({ status: "blocked" }),
  },
]

describe("machine: runtime.fault (issue 44)", () => {
  for (const row of rows) it(row.rule, () => checkRow(row, show))

  const refused = (state: SchedulerState, e: EventInput) => {
    const r = transition(deepFreeze(state), ev(e))
    return "refused" in r ? r.refused : undefined
  }

  it("a command fault for a task that moved on is stale: refused, nothing changes", () => {
    // A is gating; a fault of its dispatch (running) concerns a step it has left.
    expect(refused(gating(), commandFault("dispatch", "A"))).toMatch(/A is gating: it no longer waits on dispatch/)
    expect(refused(gating(), { type: "runtime.fault", source: "command", command: "finish", message: "x" })).toMatch(/no task waits/)
  })

  it("the watchdog is refused while a person is asked, and after the end", () => {
    const asked = apply(gating(), watchdog).state
    expect(refused(asked, watchdog)).toMatch(/already asked/)
    expect(statusOf(asked, "A")).toBe("gating")
  })

  it("any other answer is refused with the list", () => {
    const asked = apply(gating(), watchdog).state
    expect(refused(asked, { type: "question.answered", questionId: asked.questions[0]!.questionId, answer: "maybe" })).toMatch(/answer one of: retry, stop/)
  })
})
