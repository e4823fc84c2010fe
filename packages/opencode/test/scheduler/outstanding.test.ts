import type { Command } from "../../src/scheduler/core/command"
import { describe, expect, it } from "vitest"
import { outstanding } from "../../src/scheduler/core/outstanding"
import { DEFAULT_RUN_CONFIG } from "../../src/scheduler/core/event.schema"
import { initialState, SchedulerState } from "../../src/scheduler/core/state"
import { apply, complete, graphOf, started, steps, task } from "./fixtures"

describe("outstanding: what a restarted runtime must carry out again", () => {
  const graph = graphOf(task("T-1"), task("T-2"), task("T-3"), task("T-4"))

  it("re-issues unconfirmed dispatches, gates, reviews and merges with the ids first issued", () => {
    const first = started(graph, { concurrency: 4 })
    const issued = new Map(first.commands.map((c) => [c.id, c]))
    let state = first.state
    const later = apply(state, steps.dispatched("T-2"), steps.reported("T-2"))
    for (const c of later.commands) issued.set(c.id, c)
    state = later.state
    const more = apply(state, steps.dispatched("T-3"), steps.reported("T-3"), steps.gatesPassed("T-3"))
    for (const c of more.commands) issued.set(c.id, c)
    state = more.state
    const merge = apply(state, steps.dispatched("T-4"), steps.reported("T-4"), steps.gatesPassed("T-4"), steps.reviewPass("T-4"))
    for (const c of merge.commands) issued.set(c.id, c)
    state = merge.state

    const again = outstanding(state)
    expect(again.map((c) => c.id)).toEqual(["dispatch:T-1:executor:1", "gates:T-2:1", "review:T-3:1", "merge:T-4:1"])
    const who = (c: Command) => (c.type === "merge" ? c.tasks : "taskId" in c ? c.taskId : undefined)
    for (const command of again) expect([issued.get(command.id)?.type, who(issued.get(command.id)!)]).toEqual([command.type, who(command)])
  })

  it("a merge cut short during its merge build is merged again after a restart (its second run, after a rejection, too)", () => {
    const inFlight = apply(started(graph, { concurrency: 4 }).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), { type: "merge.started", taskId: "T-1" })
    expect(outstanding(inFlight.state).filter((c) => c.type === "merge")).toEqual([{ type: "merge", id: "merge:T-1:1", tasks: [{ taskId: "T-1", round: 1 }] }])
    // Rejected once, repaired, merged again: the restart re-issues the second run, not the first.
    const again = apply(inFlight.state, { type: "merge.rejected", taskId: "T-1", message: "build failed", evidencePath: "/e" }, steps.dispatched("T-1", 2, "debugger"), steps.reported("T-1", 2, "debugger"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), { type: "merge.started", taskId: "T-1" })
    expect(outstanding(again.state).filter((c) => c.type === "merge")).toEqual([{ type: "merge", id: "merge:T-1:2", tasks: [{ taskId: "T-1", round: 1 }] }])
    // Once it landed, nothing is re-issued: the merge is never made twice.
    expect(outstanding(apply(again.state, steps.merged("T-1")).state).filter((c) => c.type === "merge")).toEqual([])
  })

  it("a batch cut short is merged again as the same batch, with the id first issued; a task that landed meanwhile leaves it", () => {
    const three = graphOf(task("A"), task("B"), task("C"), task("D"))
    let state = apply(started(three, { concurrency: 4, mergeBatch: 3 }).state, ...["A", "B", "C", "D"].map((id) => steps.dispatched(id))).state
    // A merges alone; B, C and D queue behind it and go as one batch once A landed.
    state = apply(state, ...["A", "B", "C", "D"].flatMap((id) => [steps.reported(id), steps.gatesPassed(id), steps.reviewPass(id)]), steps.merged("A")).state
    expect(state.merging).toEqual(["B", "C", "D"])
    expect(outstanding(state).filter((c) => c.type === "merge")).toEqual([{ type: "merge", id: "merge:B:1", tasks: ["B", "C", "D"].map((taskId) => ({ taskId, round: 1 })) }])
    const partly = apply(state, steps.merged("B")).state
    expect(outstanding(partly).filter((c) => c.type === "merge")).toEqual([{ type: "merge", id: "merge:C:1", tasks: ["C", "D"].map((taskId) => ({ taskId, round: 1 })) }])
  })

  it("a snapshot written before batches (one task id, or null, in flight) reads as a batch of one", () => {
    const { state } = apply(started(graph, { concurrency: 4 }).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"))
    const { mergeSplits: _, ...old } = { ...state, merging: "T-1" as unknown }
    const read = SchedulerState.parse(JSON.parse(JSON.stringify(old)))
    expect([read.merging, read.mergeSplits]).toEqual([["T-1"], []])
    expect(SchedulerState.parse({ ...old, merging: null }).merging).toEqual([])
  })

  it("does not re-dispatch a task whose session is running, nor anything merged", () => {
    const { state } = apply(started(graph, { concurrency: 1 }).state, steps.dispatched("T-1"))
    expect(outstanding(state)).toEqual([])
  })

  it("re-asks open questions and the pending milestone review or replan", () => {
    const blocked = apply(started(graphOf(task("T-1")), {}).state, steps.dispatched("T-1"), { type: "worker.failed", taskId: "T-1", sessionId: "s-T-1-1", reason: "aborted", message: "" })
    // The run finished blocked and its final check was never recorded: it is outstanding too.
    expect(outstanding(blocked.state).map((c) => c.id)).toEqual(["ask:T-1:blocked:1", "finish:blocked:6"])
    const checked = apply(blocked.state, { type: "finalCheck.done", status: "failed", message: "ctest failed" })
    expect(outstanding(checked.state).map((c) => c.id)).toEqual(["ask:T-1:blocked:1"])
    const frozen = apply(started(graphOf(task("T-1")), {}).state, { type: "change.requested", text: "x" })
    expect(outstanding(frozen.state).map((c) => c.type)).toEqual(["dispatch", "replan"])
  })

  it("restarts the Architect's planning session while the run is planning or confirmed", () => {
    const planning = apply(initialState(), { type: "run.started", runId: "r9", requirement: "add tabs", config: { ...DEFAULT_RUN_CONFIG, autoConfirm: true } })
    expect(planning.commands.find((c) => c.type === "plan")).toMatchObject({ id: "plan:r9", requirement: "add tabs", autoConfirm: true })
    expect(outstanding(planning.state)).toEqual([{ type: "plan", id: "plan:r9", requirement: "add tabs", autoConfirm: true }])
    const confirmed = apply(planning.state, { type: "plan.proposed", summary: "p" })
    expect(outstanding(confirmed.state).map((c) => c.type)).toEqual(["plan"])
  })

  it("restarts a milestone review whether or not it was recorded as started", () => {
    const phased = graphOf(task("T-1"), task("T-2", { phase: 2 }))
    const due = apply(started(phased, {}).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), steps.merged("T-1"))
    expect(outstanding(due.state).map((c) => c.type)).toEqual(["reviewMilestone"])
    const reviewing = apply(due.state, { type: "milestone.reached", phase: 1 })
    expect(outstanding(reviewing.state).map((c) => c.type)).toEqual(["reviewMilestone"])
  })

  // Pending reverts: ordered by a delta, kept in the state until revert.done.
  it("lists a revert the machine ordered and nobody reported done, first and with the id first issued; revert.done takes it off", () => {
    const merged = complete(started(graph, { concurrency: 4 }).state, "T-1").state
    const ordered = apply(merged, { type: "change.requested", text: "x" }, { type: "delta.accepted", delta: { schemaVersion: 1, add: [], remove: [], modify: [{ id: "T-1", patch: { doneWhen: "T-1 twice" } }], supersedesAdrs: [] } })
    const revert = ordered.commands.find((c) => c.type === "revert")!
    const again = outstanding(ordered.state)
    expect(again[0]).toEqual(revert)
    expect(again[0]).toMatchObject({ type: "revert", taskId: "T-1", round: 1 })
    // The redone task's dispatch follows it: the runtime carries the revert out before it branches.
    expect(again.map((c) => c.type)).toContain("dispatch")
    const done = apply(ordered.state, { type: "revert.done", taskId: "T-1", round: 1, status: "reverted" })
    expect(outstanding(done.state).filter((c) => c.type === "revert")).toEqual([])
    // A conflicted revert is done too (the user was told): not carried out again on every restart.
    const conflicted = apply(ordered.state, { type: "revert.done", taskId: "T-1", round: 1, status: "conflicted" })
    expect(outstanding(conflicted.state).filter((c) => c.type === "revert")).toEqual([])
  })

  it("re-issues a baseline that never reported, with the id first issued, and nothing once it did", () => {
    const first = started(graph, { baseline: true })
    // Issued at the user's confirmation, while the Architect writes the graph (core/baseline.ts startBaselineOnce).
    const issued = { type: "runBaseline", id: "baseline:1" }
    expect(outstanding(first.state)).toEqual([issued])
    const done = apply(first.state, { type: "baseline.done", commit: "c1", status: "passed", failingTests: [], message: "" })
    expect(outstanding(done.state).some((c) => c.type === "runBaseline")).toBe(false)
  })
})
