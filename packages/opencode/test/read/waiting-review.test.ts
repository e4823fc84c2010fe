import { describe, expect, test } from "vitest"
import { waitingFor } from "../../src/text/run-status"
import { ViewText } from "../../src/read/view-text"
import { apply, complete, graphOf, started, steps, task } from "../scheduler/fixtures"

/** What a run says it waits for during the Architect's final review and while an ADR edit is classified, in both languages. */
describe("waiting on the Architect", () => {
  test("the final review is named as such, not as one more milestone", () => {
    const state = complete(apply(started(graphOf(task("A"))).state, steps.dispatched("A")).state, "A").state
    const waits = waitingFor(state)
    expect(waits).toContainEqual({ kind: "milestone", phase: 1, final: true })
    expect(ViewText.waitingText("en", waits.find((w) => w.kind === "milestone")!)).toBe("the Architect's final review of the whole requirement (phase 1)")
    expect(ViewText.waitingText("zh-CN", waits.find((w) => w.kind === "milestone")!)).toBe("架构师对整个需求的最终评审（阶段 1）")
  })

  test("an edited ADR waiting for its classification is named with the tasks it holds", () => {
    const graph = graphOf(task("A", { adrRefs: ["ADR-1"] }), task("B"))
    const state = apply(started(graph).state, { type: "adr.recorded", adr: "ADR-1", hash: "h1" }, { type: "adr.edited", adr: "ADR-1", hash: "h2" }).state
    const wait = waitingFor(state).find((w) => w.kind === "adr")!
    expect(wait).toEqual({ kind: "adr", adr: "ADR-1" })
    expect(ViewText.waitingText("en", wait)).toMatch(/edit of ADR-1/)
    expect(ViewText.waitingText("zh-CN", wait)).toMatch(/ADR-1/)
  })
})
