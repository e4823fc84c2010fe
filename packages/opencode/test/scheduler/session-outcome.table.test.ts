import { describe, expect, test } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import { Event } from "../../src/scheduler/core/event.schema"
import { transition } from "../../src/scheduler/core/machine"
import type { ProviderFault } from "../../src/scheduler/core/provider-fault"
import { FAILED_OUTCOMES, PURPOSE_KINDS, SESSION_RULES, failureEvent, matchAnswer, type PurposeKind, type PurposeRef } from "../../src/scheduler/core/session-outcome"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import { MAX_FRESH_SESSIONS } from "../../src/scheduler/core/steps"
import { apply, ev, graphOf, started, steps, task, type EventInput } from "./fixtures"
import { deepFreeze } from "./invariants"
import { TEST_CONFIG } from "./simulate"

/**
 * Every (purpose × outcome) pair of a session the Scheduler starts: the event the table gives is accepted
 * by the machine in the state that waits on that session, and the machine decides something — a fresh
 * session, a consult, the safe reading of an ADR edit, or one question to the user. Nothing is left to
 * inbox text. (SESSION_RULES is typed so that a purpose without every outcome does not compile.)
 */

const one = graphOf(task("T-1"))
const two = graphOf(task("T-1"), task("T-2", { phase: 2, deps: ["T-1"], writeSet: [{ path: "src/T-2.cpp", action: "modify" }] }))

/** For each purpose: a state that waits on its session, and what the runtime knows of that session. */
const SETUPS: { [P in PurposeKind]: () => { state: SchedulerState; ref: PurposeRef[P]; spawnState?: SchedulerState } } = {
  executor: () => {
    const s = started(one).state
    return { state: apply(s, steps.dispatched("T-1")).state, ref: { taskId: "T-1", sessionId: "s-T-1-1", attempt: 1 }, spawnState: s }
  },
  debugger: () => {
    const s = apply(started(one).state, steps.dispatched("T-1"), steps.reported("T-1"), { type: "gates.started", taskId: "T-1" }, steps.gatesFailed("T-1", "build")).state
    return { state: apply(s, steps.dispatched("T-1", 2, "debugger")).state, ref: { taskId: "T-1", sessionId: "s-T-1-2", attempt: 2 }, spawnState: s }
  },
  reviewer: () => {
    const s = apply(started(one).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1")).state
    return { state: apply(s, steps.reviewStarted("T-1")).state, ref: { taskId: "T-1", sessionId: "rv-T-1", run: 1 }, spawnState: s }
  },
  architect: () => ({
    state: apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: TEST_CONFIG }).state,
    ref: {},
  }),
  change: () => ({ state: apply(started(one).state, { type: "change.requested", text: "also T-3" }).state, ref: {} }),
  consult: () => ({
    state: apply(started(one).state, steps.dispatched("T-1"), { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "stuck", blocked: { reason: "no header" } } }).state,
    ref: { taskId: "T-1", agent: "architect" },
  }),
  milestone: () => {
    const s = apply(started(two).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), steps.merged("T-1")).state
    return { state: apply(s, { type: "milestone.reached", phase: 1 }).state, ref: { phase: 1 } }
  },
  adr: () => ({
    state: apply(started(one).state, { type: "adr.recorded", adr: "ADR-0001", hash: "h1" }, { type: "adr.edited", adr: "ADR-0001", hash: "h2" }).state,
    ref: { adr: "ADR-0001", hash: "h2" },
  }),
}

/** What the machine decided, in one word per command kind that moves the work on. */
const DECISIONS = new Set<Command["type"]>(["dispatch", "review", "plan", "replan", "reviewMilestone", "consult", "ask"])

function fold(state: SchedulerState, event: EventInput) {
  const result = transition(deepFreeze(state), ev(event))
  if ("refused" in result) throw new Error(`${event.type} refused: ${result.refused}`)
  return result
}

const NOT_FOUND: ProviderFault = { class: "model-not-found", retryable: false, message: "model: claude-x", status: 404 }

describe("every purpose × outcome ends in an event the machine folds and decides on", () => {
  for (const kind of PURPOSE_KINDS)
    for (const outcome of FAILED_OUTCOMES)
      test(`${kind} × ${outcome}`, () => {
        const setup = SETUPS[kind]()
        const state = outcome === "spawn-failed" ? (setup.spawnState ?? setup.state) : setup.state
        const event = failureEvent(kind, setup.ref as never, outcome, { message: "boom" })
        expect(() => Event.parse(ev(event))).not.toThrow()
        const { state: after, commands } = fold(state, event)
        const decided = commands.some((c) => DECISIONS.has(c.type)) || (kind === "adr" && after.adrEdits.length === 0)
        expect(decided, `${kind} × ${outcome} → ${event.type}: ${commands.map((c) => c.type).join(", ")}`).toBe(true)
      })

  for (const kind of PURPOSE_KINDS)
    test(`${kind} × reported: its report tool's events are events of the machine`, () => {
      const types = new Set(Event.options.map((o) => o.shape.type.value))
      for (const type of SESSION_RULES[kind].reported) expect(types.has(type)).toBe(true)
      expect(SESSION_RULES[kind].tool).toMatch(/^air_/)
    })

  for (const kind of PURPOSE_KINDS)
    test(`${kind} × errored with a provider fault waiting cannot cure: asked at once (or, for a consult or an ADR, passed on)`, () => {
      const setup = SETUPS[kind]()
      const { state: after, commands } = fold(setup.state, failureEvent(kind, setup.ref as never, "errored", { message: "model: claude-x", fault: NOT_FOUND }))
      if (kind === "consult") return expect(commands.map((c) => c.type)).toContain("ask") // the Architect was the last to ask
      if (kind === "adr") return expect(after.adrEdits).toEqual([])
      const asks = commands.filter((c): c is Extract<Command, { type: "ask" }> => c.type === "ask")
      expect(asks).toHaveLength(1)
      expect(asks[0]!.text).toContain("the model was not found (model: claude-x)")
      expect(asks[0]!.text).toMatch(/Answer '.+'/)
      expect(asks[0]!.text).not.toMatch(/\{"|\\"/)
      expect(commands.some((c) => c.type === "dispatch" || c.type === "review" || c.type === "plan" || c.type === "replan" || c.type === "reviewMilestone")).toBe(false)
      expect(after.questions.filter((q) => q.questionId === asks[0]!.questionId)[0]?.answers?.[0]).toBe("retry")
    })
})

const STEP_KINDS = ["architect", "change", "milestone"] as const

describe("a step's session that keeps failing: fresh sessions up to the bound, then exactly one question", () => {
  for (const kind of STEP_KINDS)
    test(kind, () => {
      const setup = SETUPS[kind]()
      let state = setup.state
      const event = failureEvent(kind, setup.ref as never, "no-report", { message: "" })
      for (let i = 1; i <= MAX_FRESH_SESSIONS; i++) {
        const r = fold(state, event)
        expect(r.commands.map((c) => c.type)).toContain(kind === "architect" ? "plan" : kind === "change" ? "replan" : "reviewMilestone")
        expect(r.state.questions).toEqual([])
        state = r.state
      }
      const asked = fold(state, event)
      expect(asked.state.questions).toHaveLength(1)
      const q = asked.state.questions[0]!
      expect(q.text).toContain(`${MAX_FRESH_SESSIONS} fresh sessions tried`)
      expect(q.text).toMatch(/ended without its report/)
      // Asked once: a later outcome of the same step is refused, not asked again.
      expect(transition(asked.state, ev(event))).toEqual({ refused: expect.stringContaining("already asked") })
    })

  test("'retry' gives the step fresh bounds; 'stop' ends the run blocked; any other answer is refused with the list", () => {
    const setup = SETUPS.architect()
    let state = setup.state
    const failed: EventInput = { type: "step.failed", step: "plan", outcome: "errored", message: "the model was not found", fault: NOT_FOUND }
    state = fold(state, failed).state
    const q = state.questions[0]!
    expect(q.text).toBe("The model provider refused the Architect's request (planning): the model was not found (model: claude-x). Answer 'retry' or 'stop'.")
    expect(transition(state, ev({ type: "question.answered", questionId: q.questionId, answer: "maybe" }))).toEqual({ refused: expect.stringContaining("answer one of: retry, stop") })
    const retried = fold(state, { type: "question.answered", questionId: q.questionId, answer: "Retry." })
    expect(retried.commands.map((c) => c.type)).toContain("plan")
    expect(retried.state.steps.plan.fresh).toBe(0)
    expect(retried.state.steps.plan.deadline).not.toBeNull()
    const again = fold(retried.state, failed).state
    const stopped = fold(again, { type: "question.answered", questionId: again.questions[0]!.questionId, answer: "停止" })
    expect(stopped.state.finished).toEqual({ status: "blocked" })
    expect(stopped.commands.map((c) => c.type)).toContain("finish")
  })

  test("a milestone review the user skips passes; a change the user drops unfreezes the plan", () => {
    const m = SETUPS.milestone()
    const hopeless: EventInput = { type: "step.failed", step: "milestone", outcome: "errored", message: "x", fault: NOT_FOUND, phase: 1 }
    const asked = fold(m.state, hopeless).state
    const skipped = fold(asked, { type: "question.answered", questionId: asked.questions[0]!.questionId, answer: "skip" })
    expect(skipped.state.milestone).toBeNull()
    expect(skipped.state.currentPhase).toBe(2)
    expect(skipped.commands.map((c) => c.type)).toContain("dispatch")

    const c = SETUPS.change()
    const changeAsked = fold(c.state, { type: "step.failed", step: "change", outcome: "spawn-failed", message: "engine refused", fault: { class: "auth", retryable: false, message: "invalid x-api-key" } }).state
    expect(changeAsked.questions[0]!.text).toContain("Answer 'retry' or 'drop'")
    const dropped = fold(changeAsked, { type: "question.answered", questionId: changeAsked.questions[0]!.questionId, answer: "drop" })
    expect(dropped.state.frozen).toBeNull()
  })

  test("a task blocked by the provider: 'skip T-1' leaves it blocked with no question, 'retry' sends it back to work", () => {
    const setup = SETUPS.debugger()
    const blocked = fold(setup.state, failureEvent("debugger", setup.ref, "errored", { message: "x", fault: NOT_FOUND })).state
    const q = blocked.questions[0]!
    expect(q.text).toBe("The model provider refused the Debugger's request for T-1: the model was not found (model: claude-x). Answer 'retry' or 'skip T-1'.")
    const skipped = fold(blocked, { type: "question.answered", questionId: q.questionId, answer: "skip T-1" }).state
    expect(skipped.questions).toEqual([])
    expect(skipped.tasks[0]!.status).toBe("blocked")
    const retried = fold(blocked, { type: "question.answered", questionId: q.questionId, answer: "retry" })
    expect(retried.commands.map((c) => c.type)).toContain("dispatch")
  })
})

describe("steps have deadlines in the state, and a timer for them", () => {
  test("run.started times the plan; a proposal waiting for the user is untimed; the graph ends it", () => {
    const s = apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: TEST_CONFIG }).state
    expect(s.steps.plan.deadline).toBe(new Date(Date.parse(ev({ type: "plan.confirmed" }).at) + TEST_CONFIG.wallClockMs).toISOString())
    const proposed = apply(s, { type: "plan.proposed", summary: "p" }).state
    expect(proposed.steps.plan.deadline).toBeNull()
    expect(started(one).state.steps.plan.deadline).toBeNull()
  })

  test("a step's wall-clock timer gets a fresh session; a task-less, step-less timer is refused", () => {
    const s = SETUPS.milestone().state
    expect(s.steps.milestone.deadline).not.toBeNull()
    const r = fold(s, { type: "timer.fired", step: "milestone", kind: "wallclock" })
    expect(r.commands.map((c) => c.type)).toContain("reviewMilestone")
    expect(transition(s, ev({ type: "timer.fired", kind: "wallclock" }))).toEqual({ refused: expect.stringContaining("exactly one") })
    expect(transition(s, ev({ type: "timer.fired", step: "change", kind: "wallclock" }))).toEqual({ refused: expect.stringContaining("no change") })
  })
})

test("answers match whatever the case, quotes or language", () => {
  expect(matchAnswer("'Retry'", ["retry", "stop"])).toBe("retry")
  expect(matchAnswer("重试", ["retry", "stop"])).toBe("retry")
  expect(matchAnswer("skip", ["retry", "skip T-2"])).toBe("skip T-2")
  expect(matchAnswer("skip t-2", ["retry", "skip T-2"])).toBe("skip T-2")
  expect(matchAnswer("skip T-3", ["retry", "skip T-2"])).toBeUndefined()
  expect(matchAnswer("try harder", ["retry", "stop"])).toBeUndefined()
})

describe("a Debugger's session that fails", () => {
  test("its fresh session is still given the gate failure it was sent to fix, not only the session's end", () => {
    const gated = apply(started(one).state, steps.dispatched("T-1"), steps.reported("T-1"), { type: "gates.started", taskId: "T-1" }, steps.gatesFailed("T-1", "analysis")).state
    const debugging = apply(gated, steps.dispatched("T-1", 2, "debugger")).state
    const { state, commands } = fold(debugging, { type: "timer.fired", taskId: "T-1", kind: "inactivity" })
    expect(commands.filter((c) => c.type === "dispatch").map((c) => (c as Extract<Command, { type: "dispatch" }>).role)).toEqual(["debugger"])
    expect(state.tasks.find((t) => t.id === "T-1")!.lastFailure).toMatchObject({ source: "analysis", message: "analysis broke" })
  })
})

describe("a Debugger's repair that blocks resumes as a Debugger", () => {
  const dispatchedRoles = (commands: Command[]) => commands.filter((c) => c.type === "dispatch").map((c) => (c as Extract<Command, { type: "dispatch" }>).role)

  // Answering "retry" used to start an Executor, which redid on top of its own earlier commits what the branch
  // already held (a chaos seed ended with calc::avg3 defined twice).
  test.each([
    ["its fresh sessions all stalled", (s: SchedulerState) => fold(fold(s, { type: "timer.fired", taskId: "T-1", kind: "inactivity" }).state, { type: "timer.fired", taskId: "T-1", kind: "inactivity" }).state],
    ["the provider refused it", (s: SchedulerState) => fold(s, failureEvent("debugger", SETUPS.debugger().ref, "errored", { message: "x", fault: NOT_FOUND })).state],
  ])("when %s, 'retry' dispatches a Debugger given the build failure", (_, block) => {
    const blocked = block(SETUPS.debugger().state)
    const t = blocked.tasks.find((x) => x.id === "T-1")!
    expect(t.status).toBe("blocked")
    expect(t.resume).toBe("debugger")
    expect(t.lastFailure).toMatchObject({ source: "build" })
    const retried = fold(blocked, { type: "question.answered", questionId: blocked.questions[0]!.questionId, answer: "retry" })
    expect(dispatchedRoles(retried.commands)).toEqual(["debugger"])
    expect(retried.state.tasks.find((x) => x.id === "T-1")!.lastFailure).toMatchObject({ source: "build" })
  })

  test("an Executor that blocks still resumes as an Executor", () => {
    const s = SETUPS.executor().state
    const blocked = fold(fold(s, { type: "timer.fired", taskId: "T-1", kind: "inactivity" }).state, { type: "timer.fired", taskId: "T-1", kind: "inactivity" }).state
    expect(blocked.tasks[0]!.resume).toBe("executor")
    const retried = fold(blocked, { type: "question.answered", questionId: blocked.questions[0]!.questionId, answer: "retry" })
    expect(dispatchedRoles(retried.commands)).toEqual(["executor"])
  })
})
