import { afterEach, describe, expect, it } from "vitest"
import { Watchdog } from "../../src/scheduler/runtime/watchdog"
import { headlessEnd } from "../../src/text/run-status"
import { apply, graphOf, started, steps, task } from "../scheduler/fixtures"
import { FakeWorld } from "./fake-ports"

/**
 * Issue 44 item 4: the last line of defence. A state with nothing in flight, nothing waiting for a person and work
 * left is planted (a task at its gates whose gate command the runtime lost); the watchdog, driven by the test's own
 * clock, records it as a fault with what it saw, the machine asks, and a headless run would exit on the question.
 */
const graph = graphOf(task("T-1"), task("T-2", { deps: ["T-1"] }))
const worlds: FakeWorld[] = []
afterEach(() => {
  for (const w of worlds.splice(0)) w.cleanup()
})

/** The world with the watchdog started on a clock the test ticks by hand. */
function watched(state = apply(started(graph, { concurrency: 1 }).state, steps.dispatched("T-1"), steps.reported("T-1")).state, inFlight = () => 0) {
  const w = new FakeWorld(state)
  worlds.push(w)
  let tick: (() => void) | undefined
  w.ports.clock.every = (_ms, fn) => {
    tick = fn
    return () => (tick = undefined)
  }
  Watchdog.start(w.ports, inFlight)
  const look = async (times: number) => {
    for (let i = 0; i < times; i++) {
      tick!()
      // Each look is asynchronous (it may apply events): let it finish before the next.
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  }
  return { w, look }
}

describe("the watchdog (issue 44)", () => {
  it("a planted stall — a task at its gates, no gate command in flight, no session — becomes a fault and one question", async () => {
    const { w, look } = watched()
    await look(Watchdog.STALLED_LOOKS - 1)
    expect(w.accepted.filter((e) => e.type === "runtime.fault")).toEqual([])
    await look(1)
    const faults = w.accepted.filter((e) => e.type === "runtime.fault")
    expect(faults).toEqual([expect.objectContaining({ source: "watchdog", state: expect.stringMatching(/stage running, tasks: 1 gating, 1 pending/) })])
    expect(w.state.questions).toEqual([expect.objectContaining({ fault: true, answers: ["retry", "stop"] })])
    expect(headlessEnd(w.state)).toBe("waits")
    // Asked once: the open question is what the run waits on now, not nothing.
    await look(Watchdog.STALLED_LOOKS * 2)
    expect(w.accepted.filter((e) => e.type === "runtime.fault")).toHaveLength(1)
    // "retry" carries out what the state waits on: the lost gates.
    w.take("runGates")
    await w.ports.log.apply({ type: "question.answered", questionId: w.state.questions[0]!.questionId, answer: "retry" })
    expect(w.take("runGates").map((c) => c.taskId)).toEqual(["T-1"])
  })

  it("a command in flight, a session at work, a question or a pause is not a stall", async () => {
    const busy = watched(undefined, () => 1)
    await busy.look(Watchdog.STALLED_LOOKS * 2)
    expect(busy.w.accepted.filter((e) => e.type === "runtime.fault")).toEqual([])
    const paused = watched(apply(started(graph, { concurrency: 1 }).state, steps.dispatched("T-1"), steps.reported("T-1"), { type: "run.paused" }).state)
    await paused.look(Watchdog.STALLED_LOOKS * 2)
    expect(paused.w.accepted.filter((e) => e.type === "runtime.fault")).toEqual([])
    const state = apply(started(graph, { concurrency: 1 }).state, steps.dispatched("T-1")).state
    expect(Watchdog.stalled(state, { inFlight: 0, sessions: ["s-T-1-1"], now: 0 })).toBeUndefined()
    expect(Watchdog.stalled(state, { inFlight: 0, sessions: [], now: 0 })).toMatch(/1 running/)
  })

  it("a task whose session the runtime no longer has is reported lost, as a restart would: recovery, not a question", async () => {
    const { w, look } = watched(apply(started(graph, { concurrency: 1 }).state, steps.dispatched("T-1")).state)
    await look(Watchdog.STALLED_LOOKS)
    expect(w.accepted.map((e) => e.type)).toContain("session.lost")
    expect(w.accepted.filter((e) => e.type === "runtime.fault")).toEqual([])
    expect(w.take("dispatch").map((c) => c.taskId)).toEqual(["T-1"])
  })

  it("the run's own waits are not stalls: the plan awaiting confirmation, a finished run", () => {
    const confirming = apply(started(graph).state).state
    expect(Watchdog.stalled({ ...confirming, stage: "confirming" }, { inFlight: 0, sessions: [], now: 0 })).toBeUndefined()
    expect(Watchdog.stalled({ ...confirming, finished: { status: "done" } }, { inFlight: 0, sessions: [], now: 0 })).toBeUndefined()
  })
})
