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

  it("is refused when no plan waits for confirmation", async () => {
    await runAt(proposed.slice(0, 1))
    await expect(Answer.record(dir, "yes")).rejects.toThrow(/waits for no plan confirmation \(stage: planning\)/)
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
    await expect(Answer.record(dir, "go on")).rejects.toThrow(/neither "yes" nor/)
  })
})
