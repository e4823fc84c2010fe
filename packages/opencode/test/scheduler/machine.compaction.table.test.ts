import { describe, expect, it } from "vitest"
import { transition } from "../../src/scheduler/core/machine"
import { initialState } from "../../src/scheduler/core/state"
import { CompactionCheck } from "../../src/scheduler/core/compaction-check"
import { apply, ev, graphOf, started, steps, task, type EventInput } from "./fixtures"

/**
 * Issue 38, item 4: a checked compaction of Main's or the Architect's conversation is recorded; the state does
 * not change, and only a summary the record had to repair is the user's news.
 */
const counts = (lostPaths: number) =>
  Object.fromEntries(CompactionCheck.CLASSES.map((c) => [c, c === "path" ? { kept: 3 - lostPaths, lost: lostPaths } : { kept: 1, lost: 0 }])) as Record<CompactionCheck.KeptClass, { kept: number; lost: number }>
const compacted = (outcome: CompactionCheck.Outcome, appended: string[] = []): EventInput => ({
  type: "context.compacted",
  sessionId: "ses-main",
  role: "main",
  outcome,
  attempts: outcome === "kept" ? 1 : 2,
  counts: counts(appended.length),
  appended,
})
const running = () => apply(started(graphOf(task("T-1"))).state, steps.dispatched("T-1")).state

describe("context.compacted", () => {
  const rows: [string, EventInput, number][] = [
    ["a summary that kept what matters is recorded in silence", compacted("kept"), 0],
    ["a retry that kept it is recorded in silence", compacted("retried"), 0],
    ["a summary repaired from the record tells the user", compacted("repaired", ["src/a.cpp", "src/b.cpp"]), 1],
  ]
  for (const [name, event, notices] of rows)
    it(name, () => {
      const before = running()
      const result = transition(before, ev(event))
      if ("refused" in result) throw new Error(result.refused)
      const notes = result.commands.filter((c) => c.type === "notify")
      expect(notes).toHaveLength(notices)
      if (notices) expect((notes[0] as { text: string }).text).toContain("src/a.cpp, src/b.cpp")
      expect(result.commands.filter((c) => c.type !== "notify")).toEqual([])
      expect(result.state.tasks).toEqual(before.tasks)
      expect(result.state.stage).toBe(before.stage)
    })

  it("before any run it concerns nothing and is refused", () => {
    const result = transition(initialState(), ev(compacted("kept")))
    expect("refused" in result && result.refused).toContain("no run")
  })
})
