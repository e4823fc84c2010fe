import { describe, expect, it } from "vitest"
import { entriesConflict, findConflicts, tasksConflict } from "../../src/scheduler/core/conflicts"
import { adrImpact, applyDelta, readySet } from "../../src/scheduler/core/graph"
import type { TaskStatus } from "../../src/scheduler/core/task.schema"
import { graphOf, task } from "./fixtures"

const on = (path: string, action: "create" | "modify" | "delete" | "keep" = "modify", region?: string) => ({ path, action, ...(region ? { region } : {}) })
const statuses = (map: Record<string, TaskStatus>) => (id: string) => map[id]

describe("write-set conflicts", () => {
  it.each([
    ["same file, same region", on("a", "modify", "f"), on("a", "modify", "f"), true],
    ["same file, other regions", on("a", "modify", "f"), on("a", "modify", "g"), false],
    ["same file, one without region", on("a", "modify", "f"), on("a"), true],
    ["create against a region", on("a", "create"), on("a", "modify", "g"), true],
    ["delete against a region", on("a", "modify", "f"), on("a", "delete"), true],
    ["overlapping line ranges", on("a", "modify", "L10-L40"), on("a", "modify", "L30-L50"), true],
    ["disjoint line ranges", on("a", "modify", "L10-L20"), on("a", "modify", "L21-L30"), false],
    ["keep against keep", on("a", "keep"), on("a", "keep"), false],
    ["keep against a change of the same region", on("a", "keep", "f"), on("a", "modify", "f"), true],
  ])("%s → conflict: %s", (_name, a, b, expected) => {
    expect(entriesConflict(a, b) !== null).toBe(expected)
  })

  it("tasks that share no file never conflict", () => {
    expect(tasksConflict(task("A", { writeSet: [on("x")] }), task("B", { writeSet: [on("y")] }))).toBeNull()
  })

  it("finds each conflicting pair once, through the files they share", () => {
    const graph = graphOf(
      task("A", { writeSet: [on("x", "modify", "f"), on("y")] }),
      task("B", { writeSet: [on("x", "modify", "f"), on("y")] }),
      task("C", { writeSet: [on("x", "modify", "g")] }),
      task("D", { writeSet: [on("z")] }),
    )
    expect(findConflicts(graph).map((c) => `${c.a}-${c.b}`)).toEqual(["A-B"])
  })

  // Its speed is a figure of `bun run bench`, not a timed test.
  it("finds the conflicts among 10,000 tasks that share files", () => {
    const tasks = Array.from({ length: 10_000 }, (_, i) => task(`T-${i}`, { writeSet: [on(`f${i % 5000}.cpp`, "modify", `r${i % 3}`)] }))
    const conflicts = findConflicts(graphOf(...tasks))
    expect(conflicts.length).toBe(0) // i and i+5000 share a file but (5000 % 3 ≠ 0) not a region
  })
})

describe("readySet", () => {
  const graph = graphOf(
    task("T-1", { writeSet: [on("a", "modify", "f")] }),
    task("T-2", { deps: ["T-1"] }),
    task("T-3", { writeSet: [on("a", "modify", "f")] }),
    task("T-4", { writeSet: [on("a", "modify", "g")] }),
    task("T-10"),
    task("T-5", { phase: 2 }),
  )

  it("offers pending tasks of the earliest open phase whose deps are merged, in id order", () => {
    expect(readySet(graph, statuses({}))).toEqual(["T-1", "T-3", "T-4", "T-10"])
  })

  it("holds back a task that conflicts with one in flight, but not one in another region", () => {
    expect(readySet(graph, statuses({ "T-1": "running" }))).toEqual(["T-4", "T-10"])
  })

  it("releases dependents once their dependency is merged, and the next phase once a phase is merged", () => {
    expect(readySet(graph, statuses({ "T-1": "merged" }))).toEqual(["T-2", "T-3", "T-4", "T-10"])
    const phase1 = { "T-1": "merged", "T-2": "merged", "T-3": "merged", "T-4": "merged", "T-10": "merged" } as const
    expect(readySet(graph, statuses(phase1))).toEqual(["T-5"])
  })
})

describe("applyDelta", () => {
  const graph = graphOf(
    task("T-1", { writeSet: [on("a")] }),
    task("T-2", { deps: ["T-1"], adrRefs: ["ADR-2"] }),
    task("T-3", { writeSet: [on("b")] }),
    task("T-4", { writeSet: [on("c")] }),
  )
  const status = statuses({ "T-1": "merged", "T-2": "running", "T-3": "merging", "T-4": "pending" })

  it("says what to undo for each task it reaches, given its status", () => {
    const result = applyDelta(graph, status, { schemaVersion: 1, add: [], remove: ["T-3"], modify: [{ id: "T-1", patch: { title: "Add T-1 again" } }], supersedesAdrs: ["ADR-2"] })
    expect(result.impacts).toEqual([
      expect.objectContaining({ id: "T-1", change: "modified", becomes: "pending", undo: "revert" }),
      expect.objectContaining({ id: "T-2", change: "superseded", becomes: "invalidated", undo: "abort" }),
      expect.objectContaining({ id: "T-3", change: "removed", becomes: "invalidated", undo: "revert-after-merge" }),
    ])
    expect(result.graph.tasks.map((t) => t.status ?? "live")).toEqual(["live", "invalidated", "invalidated", "live"])
    expect(result.graph.tasks[0]!.title).toBe("Add T-1 again")
  })

  it("leaves every task the delta does not name untouched, and never mutates the graph it was given", () => {
    const before = structuredClone(graph)
    const result = applyDelta(graph, status, { schemaVersion: 1, add: [task("T-5")], remove: [], modify: [], supersedesAdrs: [] })
    expect(graph).toEqual(before)
    expect(result.graph.tasks.slice(0, 4)).toEqual(graph.tasks)
    expect(result.graph.tasks.slice(0, 4).every((t, i) => t === graph.tasks[i])).toBe(true)
    expect(result.impacts).toEqual([expect.objectContaining({ id: "T-5", change: "added" })])
  })
})

describe("adrImpact", () => {
  it("splits tasks into impacted (cite the ADR), boundary (depend on or share a file with one) and safe", () => {
    const graph = graphOf(
      task("T-1", { adrRefs: ["ADR-1"], writeSet: [on("core.cpp")] }),
      task("T-2", { deps: ["T-1"] }),
      task("T-3", { writeSet: [on("core.cpp", "modify", "other")] }),
      task("T-4"),
    )
    expect(adrImpact(graph, "ADR-1")).toEqual({ impacted: ["T-1"], boundary: ["T-2", "T-3"], safe: ["T-4"] })
  })
})
