import * as fs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Answer } from "../../src/cli/answer"
import { Store } from "../../src/scheduler/runtime/store/store"
import { ev } from "../scheduler/fixtures"
import { TEST_CONFIG } from "../scheduler/simulate"

let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(join(tmpdir(), "air-answer-"))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

async function runAt(events: Parameters<typeof ev>[0][]) {
  const store = await Store.open(join(dir, ".air"))
  for (const e of events) expect(store.append(ev(e))).not.toHaveProperty("refused")
  await store.close()
}

async function stateNow() {
  const store = await Store.open(join(dir, ".air"))
  try {
    return store.state
  } finally {
    await store.close()
  }
}

const proposed: Parameters<typeof ev>[0][] = [
  { type: "run.started", runId: "r1", requirement: "req", config: TEST_CONFIG },
  { type: "plan.proposed", summary: "two tasks" },
]

describe("aircoding run --resume --answer", () => {
  it("reads yes as a confirmation and change: as a revision, and refuses anything else", () => {
    expect(Answer.parse("yes")).toEqual({ kind: "confirm" })
    expect(Answer.parse(" Go ahead! ")).toEqual({ kind: "confirm" })
    expect(Answer.parse("change: split T-2 in two")).toEqual({ kind: "change", text: "split T-2 in two" })
    expect(() => Answer.parse("maybe")).toThrow(/neither "yes" nor "change:/)
    expect(() => Answer.parse("change:   ")).toThrow()
  })

  it("yes confirms the plan the run stopped at", async () => {
    await runAt(proposed)
    expect(await Answer.record(dir, "yes")).toBe("plan confirmed")
    expect((await stateNow()).stage).toBe("confirmed")
  })

  it("a change goes back to planning with the user's words kept for the Architect", async () => {
    await runAt(proposed)
    await Answer.record(dir, "change: use SQLite")
    const state = await stateNow()
    expect([state.stage, state.planRevision]).toEqual(["planning", "use SQLite"])
  })

  it("is refused when neither a plan nor a question waits", async () => {
    await runAt(proposed.slice(0, 1))
    await expect(Answer.record(dir, "yes")).rejects.toThrow(/waits for no answer \(stage: planning\)/)
  })

  it("answers a blocked task's question in the user's words: the oldest open one, or the one named by its id", async () => {
    const { graphOf, task, steps } = await import("../scheduler/fixtures")
    const failed = (id: string) => ({ type: "worker.failed" as const, taskId: id, sessionId: `s-${id}-1`, reason: "aborted" as const, message: "" })
    await runAt([
      { type: "run.started", runId: "r1", requirement: "req", config: { ...TEST_CONFIG, autoConfirm: true } },
      { type: "plan.proposed", summary: "two tasks" },
      { type: "graph.accepted", graph: graphOf(task("T-1"), task("T-2")) },
      steps.dispatched("T-1"),
      steps.dispatched("T-2"),
      failed("T-1"),
      failed("T-2"),
    ])
    expect((await stateNow()).questions.map((q) => q.questionId)).toEqual(["T-1:blocked:1", "T-2:blocked:1"])
    expect(await Answer.record(dir, "T-2:blocked:1: skip T-2")).toBe("answered T-2:blocked:1: skip T-2")
    expect(await Answer.record(dir, "retry")).toBe("answered T-1:blocked:1: retry")
    expect((await stateNow()).questions).toEqual([])
  })

  it("picks its question by id or age", () => {
    const open = [{ questionId: "T-1:blocked:1" }, { questionId: "T-2:blocked:1" }]
    expect(Answer.target(open, " T-2:blocked:1:  retry ")).toEqual({ questionId: "T-2:blocked:1", answer: "retry" })
    expect(Answer.target(open, "T-3: retry")).toEqual({ questionId: "T-1:blocked:1", answer: "T-3: retry" })
    expect(Answer.target([], "retry")).toBeUndefined()
  })

  it("answers a failed baseline's question in the user's words: 'go on' records the failures as known", async () => {
    const { graphOf, task } = await import("../scheduler/fixtures")
    await runAt([
      { type: "run.started", runId: "r1", requirement: "req", config: { ...TEST_CONFIG, autoConfirm: true, baseline: true } },
      { type: "plan.proposed", summary: "one task" },
      { type: "graph.accepted", graph: graphOf(task("T-1")) },
      { type: "baseline.done", commit: "c0ffee", status: "failed", failingTests: ["old"], message: "ctest failed" },
    ])
    expect(await Answer.record(dir, "go on")).toMatch(/baseline's question: go on/)
    const state = await stateNow()
    expect([state.baseline?.accepted, state.questions]).toEqual([true, []])
    await expect(Answer.record(dir, "go on")).rejects.toThrow(/waits for no answer/)
  })
})
