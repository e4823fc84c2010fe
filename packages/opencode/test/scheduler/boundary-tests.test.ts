import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { changesPublicInterface, validateDelta, validateGraph } from "../../src/scheduler/core/validate"
import { delta, graphOf, task } from "./fixtures"

/** Tests at the boundary: a task that changes a public header (include/…) needs a test task depending on it, or its own tests. */
const header = (path = "include/calc.h") => ({ writeSet: [{ path, action: "modify" as const, region: "mul" }, { path: "src/calc.cpp", action: "modify" as const, region: "mul" }] })
const testOf = (id: string, deps: string[]) => task(id, { kind: "test", deps, writeSet: [{ path: "tests/test_calc.cpp", action: "modify", region: id }] })

function refusal(input: unknown) {
  const result = validateGraph(input)
  if (result.ok) throw new Error("expected the graph to be refused")
  return result.errors
}

describe("boundary tests: validateGraph", () => {
  it("refuses a task that changes a public header with no test task depending on it, saying what to add", () => {
    const [error, ...rest] = refusal(graphOf(task("T-1", header())))
    expect(rest).toEqual([])
    expect(error).toMatchObject({ path: "tasks[0].writeSet", taskId: "T-1" })
    expect(error!.message).toMatch(/T-1 changes a public interface \(include\/calc\.h\) but no test task depends on it/)
    expect(error!.fix).toMatch(/add a task of kind "test" with "T-1" in its deps/)
  })

  it("accepts it once a test task depends on it", () => {
    expect(validateGraph(graphOf(task("T-1", header()), testOf("T-2", ["T-1"]))).ok).toBe(true)
  })

  it("a test task that depends on something else does not count", () => {
    const errors = refusal(graphOf(task("T-1", header()), task("T-3"), testOf("T-2", ["T-3"])))
    expect(errors.map((e) => e.taskId)).toEqual(["T-1"])
  })

  it("accepts a task that writes its own tests (tests/…, test_x.cpp, x_test.cpp)", () => {
    for (const path of ["tests/test_calc.cpp", "src/calc_test.cpp", "test_calc.cpp", "libs/calc/test/mul.cpp"])
      expect(validateGraph(graphOf(task("T-1", { writeSet: [...header().writeSet, { path, action: "modify" }] }))).ok, path).toBe(true)
  })

  it("a header under a library's include/ is an interface; a private header beside the sources is not", () => {
    expect(changesPublicInterface(task("T-1", header("libs/net/include/net/socket.hpp")))).toBe(true)
    expect(changesPublicInterface(task("T-1", header("src/detail.h")))).toBe(false)
    expect(changesPublicInterface(task("T-1", { writeSet: [{ path: "include/calc.h", action: "keep" }, { path: "src/calc.cpp", action: "modify" }] }))).toBe(false)
  })

  it("tests, docs and builds never need boundary tests of their own", () => {
    for (const kind of ["test", "docs", "build"] as const) expect(changesPublicInterface(task("T-1", { ...header(), kind }))).toBe(false)
    for (const kind of ["code", "fix", "refactor"] as const) expect(changesPublicInterface(task("T-1", { ...header(), kind }))).toBe(true)
  })

  it("the demo's graph (T-1, T-2 change include/calc.h; T-3 tests both) still validates", () => {
    const scenario = JSON.parse(readFileSync(new URL("../../scenarios/demo.json", import.meta.url), "utf8")) as { scripts: { steps: { tool?: string; args?: { tasks?: unknown[] } }[] }[] }
    const plan = scenario.scripts.flatMap((s) => s.steps).find((step) => step.tool === "air_plan")!
    expect(plan.args!.tasks!.length).toBe(3)
    const result = validateGraph({ schemaVersion: 1, tasks: plan.args!.tasks })
    expect(result.ok ? [] : result.errors).toEqual([])
  })
})

describe("boundary tests: validateDelta", () => {
  const base = graphOf(task("T-1"), task("T-2", header()), testOf("T-3", ["T-2"]))

  it("refuses a delta that adds an interface change without its test", () => {
    const result = validateDelta(base, delta({ add: [task("T-4", header("include/calc/extra.h"))] }))
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.errors[0]).toMatchObject({ path: "add[0].writeSet", taskId: "T-4" })
  })

  it("refuses a delta that makes an existing task change a header, pointing at the patch", () => {
    const result = validateDelta(base, delta({ modify: [{ id: "T-1", patch: header() }] }))
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.errors[0]).toMatchObject({ path: "modify[0].patch.writeSet", taskId: "T-1" })
  })

  it("accepts the interface change with a test task in the same delta", () => {
    expect(validateDelta(base, delta({ add: [task("T-4", header("include/calc/extra.h")), testOf("T-5", ["T-4"])] })).ok).toBe(true)
  })

  it("does not judge again the tasks the delta leaves alone", () => {
    const legacy = { schemaVersion: 1 as const, tasks: [task("T-1", header())] } // accepted before the rule, say
    expect(validateDelta(legacy, delta({ add: [task("T-9")] })).ok).toBe(true)
  })
})

describe("the chaos check's 4-task scenario", () => {
  it("its graph (two phases) and its replan's delta (T-4 with its own test file) validate", () => {
    const scenario = JSON.parse(readFileSync(new URL("../../scenarios/chaos-four.json", import.meta.url), "utf8")) as { scripts: { steps: { tool?: string; args?: { tasks?: unknown[]; delta?: unknown } }[] }[] }
    const steps = scenario.scripts.flatMap((s) => s.steps)
    const plan = steps.find((step) => step.tool === "air_plan")!
    const graph = { schemaVersion: 1, tasks: plan.args!.tasks } as Parameters<typeof validateGraph>[0]
    const result = validateGraph(graph)
    expect(result.ok ? [] : result.errors).toEqual([])
    expect((plan.args!.tasks as { phase: number }[]).map((t) => t.phase)).toEqual([1, 1, 2])
    const replan = validateDelta(graphOf(...(plan.args!.tasks as Parameters<typeof graphOf>)), steps.find((step) => step.tool === "air_delta")!.args!.delta as Parameters<typeof validateDelta>[1])
    expect(replan.ok ? [] : replan.errors).toEqual([])
  })
})
