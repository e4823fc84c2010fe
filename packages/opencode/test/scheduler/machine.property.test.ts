import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { transition } from "../../src/scheduler/machine"
import { initialState } from "../../src/scheduler/state"
import { checkStep } from "./invariants"
import { DEFAULT_SIM, FINAL_STATUSES, randomGraph, rngFrom, Simulator, TEST_CONFIG } from "./simulate"

describe("the machine under random DAGs and random event orders", () => {
  it("keeps every invariant and ends each run with every task merged, blocked or invalidated", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 14 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        (seed, tasks, phases, files, concurrency, trouble) => {
          const rng = rngFrom(seed)
          const graph = randomGraph(rng, { tasks, phases, files, maxDeps: 2 })
          const sim = new Simulator(rng, { ...DEFAULT_SIM, trouble }, checkStep)
          sim.start(graph, { ...TEST_CONFIG, concurrency })
          sim.runToEnd(20_000)
          expect(sim.idle).toBe(true)
          expect(sim.state.stage).toBe("finished")
          for (const t of sim.state.tasks) expect(FINAL_STATUSES.has(t.status), `${t.id} ended ${t.status}`).toBe(true)
          if (sim.state.finished?.status === "done")
            for (const t of sim.state.tasks) expect(["merged", "invalidated"]).toContain(t.status)
          // Merged at most once per time it was (re)started.
          for (const t of sim.state.tasks) {
            const merges = sim.accepted.filter((e) => e.type === "merge.succeeded" && e.taskId === t.id).length
            const resets = t.history.filter((h) => h.event === "delta.accepted").length
            expect(merges).toBeLessThanOrEqual(1 + resets)
          }
          // Replaying the accepted events gives the same state: the fold is deterministic.
          let replay = initialState()
          for (const event of sim.accepted) {
            const result = transition(replay, event)
            if ("refused" in result) throw new Error(`replay refused ${event.type}: ${result.refused}`)
            replay = result.state
          }
          expect(replay).toEqual(sim.state)
        },
      ),
      { numRuns: 400 },
    )
  })

  it("with no trouble, every task of every random DAG is merged", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 20 }), (seed, tasks) => {
        const rng = rngFrom(seed)
        const sim = new Simulator(rng, { trouble: 0, answers: 0, changes: 0, milestoneFixes: 0 }, checkStep)
        sim.start(randomGraph(rng, { tasks, phases: 2, files: 5, maxDeps: 3 }))
        sim.runToEnd()
        expect(sim.state.finished).toEqual({ status: "done" })
        expect(sim.state.tasks.every((t) => t.status === "merged")).toBe(true)
        expect(sim.refused).toEqual([])
      }),
      { numRuns: 200 },
    )
  })

  it("a refused event leaves the state exactly as it was", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        const rng = rngFrom(seed)
        const sim = new Simulator(rng, DEFAULT_SIM, checkStep)
        sim.start(randomGraph(rng, { tasks: 8, phases: 2, files: 3, maxDeps: 2 }))
        for (let n = 0; n < 200 && sim.step(); n++) {
          const frozen = structuredClone(sim.state)
          const before = sim.refused.length
          sim.step()
          if (sim.refused.length > before) expect(sim.state).toEqual(frozen)
        }
      }),
      { numRuns: 100 },
    )
  })
})
