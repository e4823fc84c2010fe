import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { foldEventsFast } from "../../src/scheduler/core/fold"
import { Folder, transition } from "../../src/scheduler/core/machine"
import type { Event } from "../../src/scheduler/core/event.schema"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
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
          sim.start(graph, { ...TEST_CONFIG, concurrency, baseline: seed % 2 === 0 })
          sim.runToEnd(20_000)
          expect(sim.idle).toBe(true)
          expect(sim.state.stage).toBe("finished")
          for (const t of sim.state.tasks) expect(FINAL_STATUSES.has(t.status), `${t.id} ended ${t.status}`).toBe(true)
          if (sim.state.finished?.status === "done")
            for (const t of sim.state.tasks) expect(["merged", "invalidated"]).toContain(t.status)
          // Merged at most once per time it was (re)started.
          for (const t of sim.state.tasks) {
            const merges = sim.accepted.filter((e) => e.type === "merge.succeeded" && e.taskId === t.id).length
            // A plan delta, or an ADR's decision change, may send merged or merging work back to be done again.
            const resets = t.history.filter((h) => h.event === "delta.accepted" || h.event === "adr.classified").length
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
          // The in-place fold used for replays gives the very same state.
          expect(JSON.stringify(foldEventsFast(sim.accepted).state)).toBe(JSON.stringify(sim.state))
        },
      ),
      // Regression: a blocked task whose dependency a delta reset must wait for it again once unblocked.
      { numRuns: 400, examples: [[102606153, 13, 1, 1, 2, 0.4519924812484532]] },
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

  it("a refused event leaves the state exactly as it was, whatever the state", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        const rng = rngFrom(seed)
        const sim = new Simulator(rng, DEFAULT_SIM, checkStep)
        sim.start(randomGraph(rng, { tasks: 8, phases: 2, files: 3, maxDeps: 2 }))
        for (let n = 0; n < 300 && sim.step(); n++) {
          const event = randomEvent(rng, sim.state)
          // The state is JSON (it is persisted as such): its text is the cheapest exact copy to compare with.
          const before = JSON.stringify(sim.state)
          const result = transition(sim.state, event)
          if ("refused" in result) {
            expect(result.refused.length).toBeGreaterThan(10)
            expect(JSON.stringify(sim.state)).toBe(before)
          }
          // The in-place folder too: rules refuse before they write.
          const folder = new Folder(sim.state)
          if (folder.apply(event) !== null) expect(JSON.stringify(folder.state)).toBe(before)
        }
      }),
      { numRuns: 100 },
    )
  })

  it("the runtime's fault events (gates.errored, merge.blocked, merge.rejected, session.errored, finalCheck.done) are generated and accepted", () => {
    const seen = new Set<string>()
    for (let seed = 1; seed <= 40; seed++) {
      const rng = rngFrom(seed)
      const sim = new Simulator(rng, { ...DEFAULT_SIM, trouble: 0.5 }, checkStep)
      sim.start(randomGraph(rng, { tasks: 8, phases: 1, files: 4, maxDeps: 1 }), TEST_CONFIG)
      sim.runToEnd(20_000)
      expect(sim.state.stage).toBe("finished")
      for (const e of sim.accepted) seen.add(e.type)
    }
    expect([...seen].filter((t) => ["gates.errored", "merge.blocked", "merge.rejected", "session.errored", "finalCheck.done"].includes(t)).sort()).toEqual(["finalCheck.done", "gates.errored", "merge.blocked", "merge.rejected", "session.errored"])
  })

  it("usage and reverts are in the log: the run's totals are the sum of each session's last report, and ordered reverts are reported done", () => {
    const seen = new Set<string>()
    for (let seed = 1; seed <= 40; seed++) {
      const rng = rngFrom(seed)
      const sim = new Simulator(rng, { ...DEFAULT_SIM, changes: 2 }, checkStep)
      sim.start(randomGraph(rng, { tasks: 8, phases: 1, files: 4, maxDeps: 1 }), TEST_CONFIG)
      sim.runToEnd(20_000)
      for (const e of sim.accepted) seen.add(e.type)
      const sessions = Object.values(sim.state.usage.sessions)
      expect(sim.state.usage.run).toEqual({ requests: sessions.reduce((n, u) => n + u.requests, 0), tokens: sessions.reduce((n, u) => n + u.tokens, 0) })
      expect(new Set(sim.state.reverts.map((r) => r.commandId)).size).toBe(sim.state.reverts.length)
    }
    expect([...seen].filter((t) => t === "usage.recorded" || t === "revert.done").sort()).toEqual(["revert.done", "usage.recorded"])
  })
})

/** Any event at all, mostly out of place: the machine must refuse it cleanly or apply it. */
function randomEvent(rng: () => number, state: SchedulerState): Event {
  const ids = [...(state.graph?.tasks.map((t) => t.id) ?? []), "T-404"]
  const taskId = ids[Math.floor(rng() * ids.length)]!
  const at = "2026-01-01T00:00:00.000Z"
  const sessionId = `s-${Math.floor(rng() * 50)}`
  const events: Event[] = [
    { type: "task.dispatched", at, taskId, role: "executor", sessionId, attempt: 1 + Math.floor(rng() * 3) },
    { type: "worker.reported", at, taskId, sessionId, result: { taskId, role: "executor", summary: "" } },
    { type: "worker.failed", at, taskId, sessionId, reason: "error", message: "" },
    { type: "session.lost", at, taskId, sessionId },
    { type: "gates.started", at, taskId },
    { type: "gates.passed", at, taskId, evidence: {} },
    { type: "gates.failed", at, taskId, gate: "build", message: "", evidencePath: "" },
    { type: "review.reported", at, taskId, report: { taskId, verdict: "pass", rows: [], findings: [] } },
    { type: "merge.succeeded", at, taskId, commit: "c", tag: "t" },
    { type: "merge.conflicted", at, taskId, files: [] },
    { type: "merge.rejected", at, taskId, message: "", evidencePath: "" },
    { type: "milestone.reached", at, phase: 1 + Math.floor(rng() * 2) },
    { type: "milestone.reviewed", at, phase: 1, verdict: "fail" },
    { type: "consult.answered", at, taskId, choice: "nonsense", by: "scheduler" },
    { type: "consult.answered", at, taskId, choice: "block", by: rng() < 0.5 ? "scheduler" : "architect" },
    { type: "consult.unanswered", at, taskId, by: rng() < 0.5 ? "scheduler" : "architect", reason: "" },
    { type: "dispatch.failed", at, taskId, role: rng() < 0.5 ? "executor" : "reviewer", run: 1 + Math.floor(rng() * 3), message: "" },
    { type: "question.answered", at, questionId: "q", answer: "" },
    { type: "delta.accepted", at, delta: { schemaVersion: 1, add: [], remove: ["T-404"], modify: [], supersedesAdrs: [] } },
    { type: "run.resumed", at },
    { type: "plan.confirmed", at },
    { type: "usage.recorded", at, sessionId, taskId, role: "executor", requests: Math.floor(rng() * 3), tokens: Math.floor(rng() * 300) },
    { type: "revert.done", at, taskId, round: 1, status: "reverted" },
  ]
  return events[Math.floor(rng() * events.length)]!
}
