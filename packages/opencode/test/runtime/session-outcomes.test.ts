import { afterEach, describe, expect, it } from "vitest"
import { FAILED_OUTCOMES, PURPOSE_KINDS, type FailedOutcome, type PurposeKind } from "../../src/scheduler/core/session-outcome"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import type { Purpose } from "../../src/scheduler/runtime/sessions/supervisor"
import { apply, graphOf, started, steps, task } from "../scheduler/fixtures"
import { TEST_CONFIG } from "../scheduler/simulate"
import { FakeWorld } from "./fake-ports"

/**
 * The supervisor with fakes: for each purpose and each way its session can end, the session's outcome as
 * the engine reports it (an error payload, two idle turns, silence, a refused session) becomes one event
 * the machine accepts, and no text goes to Main's inbox in its place.
 */

const one = graphOf(task("T-1"))
const two = graphOf(task("T-1"), task("T-2", { phase: 2, deps: ["T-1"], writeSet: [{ path: "src/T-2.cpp", action: "modify" }] }))

/** A state waiting on the purpose's session, the purpose as the supervisor records it, and its session id. */
/** `before`: the state before the session was recorded (what a session that cannot start leaves). */
const SETUPS: Record<PurposeKind, () => { state: SchedulerState; purpose: Purpose; sessionId: string; before?: SchedulerState }> = {
  executor: () => {
    const before = started(one).state
    return { before, state: apply(before, steps.dispatched("T-1")).state, purpose: { kind: "worker", taskId: "T-1", role: "executor", nudged: false, attempt: 1 }, sessionId: "s-T-1-1" }
  },
  debugger: () => {
    const before = apply(started(one).state, steps.dispatched("T-1"), steps.reported("T-1"), { type: "gates.started", taskId: "T-1" }, steps.gatesFailed("T-1", "test")).state
    return { before, state: apply(before, steps.dispatched("T-1", 2, "debugger")).state, purpose: { kind: "worker", taskId: "T-1", role: "debugger", nudged: false, attempt: 2 }, sessionId: "s-T-1-2" }
  },
  reviewer: () => {
    const before = apply(started(one).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1")).state
    return { before, state: apply(before, steps.reviewStarted("T-1")).state, purpose: { kind: "reviewer", taskId: "T-1", nudged: false, run: 1 }, sessionId: "rv-T-1" }
  },
  architect: () => ({ state: apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: TEST_CONFIG }).state, purpose: { kind: "architect", nudged: false }, sessionId: "arch-1" }),
  change: () => ({ state: apply(started(one).state, { type: "change.requested", text: "more" }).state, purpose: { kind: "change", nudged: false }, sessionId: "chg-1" }),
  consult: () => ({
    state: apply(started(one).state, steps.dispatched("T-1"), { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "stuck", blocked: { reason: "no header" } } }).state,
    purpose: { kind: "consult", taskId: "T-1", agent: "architect", options: ["executor-again", "block"], nudged: false },
    sessionId: "con-1",
  }),
  milestone: () => ({
    state: apply(started(two).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), steps.merged("T-1"), { type: "milestone.reached", phase: 1 }).state,
    purpose: { kind: "milestone", phase: 1, nudged: false },
    sessionId: "ms-1",
  }),
  adr: () => ({
    state: apply(started(one).state, { type: "adr.recorded", adr: "ADR-0001", hash: "h1" }, { type: "adr.edited", adr: "ADR-0001", hash: "h2" }).state,
    purpose: { kind: "adr", adr: "ADR-0001", hash: "h2", nudged: false },
    sessionId: "adr-1",
  }),
}

/** The engine's payload of a 400 context-length error, as session.error carries it. */
const CONTEXT_400 = {
  name: "APIError",
  data: { message: "Bad Request", statusCode: 400, isRetryable: false, responseBody: JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens", code: "context_length_exceeded" } }) },
}

const COMMAND_OF: Record<PurposeKind, string> = {
  executor: "dispatch",
  debugger: "dispatch",
  reviewer: "review",
  architect: "plan",
  change: "replan",
  consult: "consult",
  milestone: "reviewMilestone",
  adr: "classifyAdr",
}

let worlds: FakeWorld[] = []
afterEach(() => {
  for (const w of worlds) w.cleanup()
  worlds = []
})

/** Carries the outcome out the way the engine and the runtime would, and returns the world. */
async function end(kind: PurposeKind, outcome: FailedOutcome): Promise<{ w: FakeWorld; sessionId: string }> {
  const setup = SETUPS[kind]()
  const w = new FakeWorld(outcome === "spawn-failed" ? (setup.before ?? setup.state) : setup.state)
  worlds.push(w)
  const purpose = setup.purpose
  const sessionId = setup.sessionId
  if (outcome === "spawn-failed") {
    // The command that starts the session, carried out by the interpreter, with an engine that refuses sessions.
    const command = w.issued.find((c) => c.type === COMMAND_OF[kind])
    if (!command) throw new Error(`no ${COMMAND_OF[kind]} command outstanding for ${kind}`)
    w.issued.length = 0
    w.ports.sessions.create = async () => {
      throw new Error("the engine refused the session")
    }
    await w.interpreter.run(command)
    return { w, sessionId }
  }
  w.supervisor.purposes.set(sessionId, purpose)
  if (outcome === "errored") await w.supervisor.onOutcome(sessionId, { kind: "error", message: "APIError: {...}", error: CONTEXT_400 })
  else if (outcome === "no-report") {
    await w.supervisor.onOutcome(sessionId, { kind: "idle" })
    expect(w.calls).toContain(`session.prompt ${sessionId}`) // the nudge, naming the tool
    await w.supervisor.onOutcome(sessionId, { kind: "idle" })
  } else {
    w.ports.sessions.stalled = () => [sessionId]
    await w.supervisor.checkStalled(15_000)
  }
  return { w, sessionId }
}

describe("supervisor: every purpose × outcome becomes one accepted event, never inbox text alone", () => {
  for (const kind of PURPOSE_KINDS)
    for (const outcome of FAILED_OUTCOMES)
      it(`${kind} × ${outcome}`, async () => {
        const { w } = await end(kind, outcome)
        expect(w.refused).toEqual([])
        const failures = w.accepted.filter((e) => e.type !== "session.nudged" && e.type !== "usage.recorded")
        expect(failures).toHaveLength(1)
        const inbox = w.inbox.take()
        // Whatever the inbox got came from the machine's commands, not in place of an event.
        expect(inbox.filter((t) => /needs attention|session .* failed|stalled .* aborted/.test(t))).toEqual([])
        if (outcome === "errored" && (kind === "executor" || kind === "debugger" || kind === "reviewer")) {
          // A 400 context-too-long of a task's session: its work is in the worktree, so a fresh session of the same role goes on (core/overflow.ts).
          expect(failures[0]).toMatchObject({ type: "session.overflowed", role: kind, message: expect.stringContaining("maximum context length is 8192 tokens") })
          expect(w.issued.filter((c) => c.type === "ask")).toEqual([])
          expect(w.issued.filter((c) => c.type === "dispatch" || c.type === "review")).toHaveLength(1)
        } else if (outcome === "errored" && kind !== "consult" && kind !== "adr") {
          // A 400 context-too-long of a step's session (the Architect's, to be compacted, not thrown away): the class, and one question at once.
          const asks = w.issued.filter((c) => c.type === "ask")
          expect(asks).toHaveLength(1)
          expect(JSON.stringify(failures[0])).toContain("context-too-long")
          const text = (asks[0] as { text: string }).text
          expect(text).toContain("the conversation is longer than the model's context (This model's maximum context length is 8192 tokens)")
          expect(text).not.toMatch(/\{"|\\"/)
        }
      })

  it("a step's session past its wall-clock cap is aborted when the fresh one starts", async () => {
    const setup = SETUPS.milestone()
    const w = new FakeWorld(setup.state)
    worlds.push(w)
    w.supervisor.purposes.set("old", setup.purpose)
    w.now = Date.parse(w.state.steps.milestone.deadline!) + 1
    await w.clock.checkDeadlines()
    expect(w.accepted.map((e) => e.type)).toEqual(["timer.fired"])
    const fresh = w.take("reviewMilestone").filter((c) => c.id !== setup.state.milestone!.commandId)
    expect(fresh).toHaveLength(1)
    await w.interpreter.run(fresh[0]!)
    expect(w.calls).toContain("session.abort old")
    expect(w.calls.filter((c) => c.startsWith("session.create architect"))).toHaveLength(1)
    // Fired once per deadline, whatever the ticks.
    await w.clock.checkDeadlines()
    expect(w.accepted.filter((e) => e.type === "timer.fired")).toHaveLength(1)
  })

  it("a confirmation no Architect can take (the engine refuses the session) is the plan step's spawn failure", async () => {
    const state = apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: TEST_CONFIG }, { type: "plan.proposed", summary: "p" }, { type: "plan.confirmed" }).state
    const w = new FakeWorld(state)
    worlds.push(w)
    w.ports.sessions.create = async () => {
      throw new Error("engine refused: 500")
    }
    await w.supervisor.toArchitect("confirmed", "fresh architect")
    expect(w.accepted.map((e) => e.type)).toEqual(["step.failed"])
    expect(w.take("plan").length).toBeGreaterThan(0)
  })

  it("the Architect's planning session that cannot start is step.failed, and the machine starts a fresh one", async () => {
    const setup = SETUPS.architect()
    const w = new FakeWorld(setup.state)
    worlds.push(w)
    w.ports.sessions.create = async () => {
      throw new Error("engine refused: 500")
    }
    const plan = w.take("plan")
    await w.interpreter.run(plan[0]!)
    expect(w.accepted.map((e) => e.type)).toEqual(["step.failed"])
    expect(w.take("plan")).toHaveLength(1)
  })
})
