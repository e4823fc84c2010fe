import { describe, expect, it } from "vitest"
import { applyDelta } from "../../src/scheduler/core/graph"
import { validateDelta } from "../../src/scheduler/core/validate"
import { apply, complete, delta, graphOf, runtimeOf, started, statusOf, steps, task, passFinalReview } from "./fixtures"

/**
 * What a plan delta does to work that already landed: merged tasks it changes are reverted and done again
 * under a new round (their own tags), and merged tasks next to the change are re-verified by a task the
 * Scheduler generates.
 *
 * The graph: T-1 writes core.cpp; T-2 depends on T-1; T-3 shares core.cpp with T-1; T-4 is unrelated.
 */
const on = (path: string) => ({ path, action: "modify" as const })
const graph = graphOf(
  task("T-1", { writeSet: [on("src/core.cpp")], validation: ["ctest -R core"], keep: ["core() signature"] }),
  task("T-2", { deps: ["T-1"], writeSet: [on("src/ui.cpp")] }),
  task("T-3", { writeSet: [on("src/core.cpp"), on("src/extra.cpp")] }),
  task("T-4", { writeSet: [on("src/other.cpp")] }),
)

/** Every task merged, one after another (T-1 and T-3 share a file, so they never run together). */
function allMerged() {
  let state = started(graph, { concurrency: 4 }).state
  for (const id of ["T-1", "T-4", "T-3", "T-2"]) {
    if (runtimeOf(state, id).status === "pending") throw new Error(`${id} was not dispatched`)
    state = complete(state, id).state
  }
  return passFinalReview(state).state
}

describe("boundary tasks are re-verified by a generated task", () => {
  const statuses = (map: Record<string, string>) => (id: string) => map[id] as never

  it("a merged task that depends on, or shares a file with, a changed task gets a verify task after the new work", () => {
    const result = applyDelta(graph, statuses({ "T-1": "merged", "T-2": "merged", "T-3": "merged", "T-4": "merged" }), delta({ modify: [{ id: "T-1", patch: { doneWhen: "core() handles empty input" } }] }))
    expect(result.boundary).toEqual(["T-2", "T-3"])
    const added = result.graph.tasks.slice(4)
    expect(added.map((t) => [t.id, t.kind, t.deps, t.phase])).toEqual([
      ["T-2.rv", "verify", ["T-1"], 1],
      ["T-3.rv", "verify", ["T-1"], 1],
    ])
    expect(added[1]!.doneWhen).toBe("T-3 works — still true on the integration branch after the plan change")
    expect(added[1]!.files).toEqual(["src/core.cpp", "src/extra.cpp"])
    expect(added[1]!.writeSet).toEqual([])
    expect(result.impacts.filter((i) => i.change === "reverify").map((i) => i.id)).toEqual(["T-2.rv", "T-3.rv"])
  })

  it("a change to work that never landed needs no re-verification of its merged neighbours", () => {
    const result = applyDelta(graph, statuses({ "T-1": "running", "T-2": "pending", "T-3": "merged", "T-4": "merged" }), delta({ modify: [{ id: "T-1", patch: { title: "Core again" } }] }))
    expect(result.boundary).toEqual(["T-2", "T-3"])
    expect(result.graph.tasks).toHaveLength(4)
  })

  it("a boundary task not merged yet needs none: its own gates will run on the new code", () => {
    const result = applyDelta(graph, statuses({ "T-1": "merged", "T-2": "pending", "T-3": "running", "T-4": "merged" }), delta({ modify: [{ id: "T-1", patch: { title: "Core again" } }] }))
    expect(result.boundary).toEqual(["T-2", "T-3"])
    expect(result.graph.tasks).toHaveLength(4)
  })

  it("a removed task's neighbours wait for the delta's new tasks, and superseded ADRs are not cited", () => {
    const withAdr = graphOf(task("T-1", { writeSet: [on("src/core.cpp")], adrRefs: ["ADR-1"] }), task("T-3", { writeSet: [on("src/core.cpp")], adrRefs: ["ADR-1", "ADR-3"] }))
    const replacement = task("T-9", { writeSet: [on("src/new.cpp")], phase: 2 })
    const result = applyDelta(withAdr, statuses({ "T-1": "merged", "T-3": "merged" }), delta({ remove: ["T-1"], add: [replacement] }))
    const rv = result.graph.tasks.find((t) => t.id === "T-3.rv")!
    expect([rv.deps, rv.phase, rv.adrRefs]).toEqual([["T-9"], 2, ["ADR-1", "ADR-3"]])
    const superseding = applyDelta(withAdr, statuses({ "T-1": "merged", "T-3": "merged" }), delta({ remove: ["T-1"], supersedesAdrs: ["ADR-3"], add: [replacement] }))
    // T-3 cites ADR-3: superseded itself, so it is impacted, not boundary, and gets no verify task.
    expect(superseding.graph.tasks.map((t) => t.id)).toEqual(["T-1", "T-3", "T-9"])
  })

  it("generated ids never collide with the graph's, and the result passes validation", () => {
    const taken = graphOf(...graph.tasks, task("T-3.rv", { writeSet: [on("src/z.cpp")] }))
    const status = statuses({ "T-1": "merged", "T-2": "merged", "T-3": "merged", "T-4": "merged", "T-3.rv": "merged" })
    const checked = validateDelta(taken, delta({ modify: [{ id: "T-1", patch: { title: "Core again" } }] }), status)
    if (!checked.ok) throw new Error(JSON.stringify(checked.errors))
    expect(checked.result.graph.tasks.slice(5).map((t) => t.id)).toEqual(["T-2.rv", "T-3.rv2"])
  })

  it("in a run: the change is redone, then the verify tasks run, and the run finishes with everything merged", () => {
    let state = apply(allMerged(), { type: "change.requested", text: "core must handle empty input" }).state
    const accepted = apply(state, { type: "delta.accepted", delta: delta({ modify: [{ id: "T-1", patch: { doneWhen: "core() handles empty input" } }] }) })
    state = accepted.state
    expect(accepted.commands.map((c) => c.type)).toEqual(["revert", "notify", "dispatch"])
    expect(accepted.commands.find((c) => c.type === "notify")).toMatchObject({ text: expect.stringContaining("re-verified by T-2.rv, T-3.rv") })
    expect([statusOf(state, "T-2.rv"), statusOf(state, "T-3.rv")]).toEqual(["pending", "pending"])
    state = complete(state, "T-1").state
    expect([statusOf(state, "T-2.rv"), statusOf(state, "T-3.rv")]).toEqual(["running", "running"])
    state = complete(complete(state, "T-2.rv").state, "T-3.rv").state
    // What landed since the last final review is reviewed again before the run is done.
    expect(state.milestone).toMatchObject({ final: true })
    state = passFinalReview(state).state
    expect(state.finished).toEqual({ status: "done" })
    expect(state.tasks.every((t) => t.status === "merged")).toBe(true)
  })
})

describe("a merged task done again lands under its own round", () => {
  it("the first landing is round 1; after a revert the redo merges as round 2 and a second revert undoes round 2", () => {
    let state = allMerged()
    expect(runtimeOf(state, "T-4").merges).toBe(1)
    state = apply(state, { type: "change.requested", text: "redo T-4" }).state
    const first = apply(state, { type: "delta.accepted", delta: delta({ modify: [{ id: "T-4", patch: { title: "T-4 again" } }] }) })
    expect(first.commands[0]).toMatchObject({ type: "revert", taskId: "T-4", round: 1 })
    state = first.state
    const redo = apply(state, steps.dispatched("T-4", 2), steps.reported("T-4", 2, "executor"), steps.gatesPassed("T-4"), steps.reviewPass("T-4"))
    expect(redo.commands.find((c) => c.type === "merge")).toMatchObject({ tasks: [{ taskId: "T-4", round: 2 }] })
    state = apply(redo.state, { type: "merge.succeeded", taskId: "T-4", commit: "c2", tag: "air/done/T-4+2" }).state
    expect(runtimeOf(state, "T-4")).toMatchObject({ status: "merged", merges: 2, merged: { commit: "c2", tag: "air/done/T-4+2" } })
    state = apply(state, { type: "change.requested", text: "drop T-4" }).state
    const dropped = apply(state, { type: "delta.accepted", delta: delta({ remove: ["T-4"] }) })
    expect(dropped.commands[0]).toMatchObject({ type: "revert", taskId: "T-4", round: 2 })
  })

  it("a merge that lands after its task was reset is reverted under the round that landed", () => {
    let state = started(graph, { concurrency: 4 }).state
    state = apply(state, steps.dispatched("T-4"), steps.reported("T-4"), steps.gatesPassed("T-4"), steps.reviewPass("T-4"), { type: "change.requested", text: "x" }).state
    expect(statusOf(state, "T-4")).toBe("merging")
    state = apply(state, { type: "delta.accepted", delta: delta({ modify: [{ id: "T-4", patch: { title: "T-4 again" } }] }) }).state
    const landed = apply(state, steps.merged("T-4"))
    expect(landed.commands[0]).toMatchObject({ type: "revert", taskId: "T-4", round: 1 })
    expect(runtimeOf(landed.state, "T-4")).toMatchObject({ status: "running", merges: 1 })
    const again = apply(landed.state, steps.dispatched("T-4", 2), steps.reported("T-4", 2), steps.gatesPassed("T-4"), steps.reviewPass("T-4"))
    expect(again.commands.find((c) => c.type === "merge")).toMatchObject({ tasks: [{ round: 2 }] })
  })
})
