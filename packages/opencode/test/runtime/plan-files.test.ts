import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, describe, expect, it, vi } from "vitest"
import { Orchestrators } from "../../src/scheduler/runtime/orchestrator"
import { PlanFiles } from "../../src/scheduler/runtime/sessions/proposal"
import { Store } from "../../src/scheduler/runtime/store/store"
import { JsonLines } from "../../src/scheduler/runtime/store/jsonl"
import { apply, graphOf, started, task } from "../scheduler/fixtures"
import { TEST_CONFIG } from "../scheduler/simulate"

/**
 * plan.md and task-graph.json are views of the log: written after the event that makes them true is
 * stored. A failing append (the disk full, the process dying) leaves no file claiming a plan the log does
 * not have; a file missing after a crash is derived from the state.
 */
const roots: string[] = []
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})
afterEach(() => vi.restoreAllMocks())

function project(): string {
  const root = mkdtempSync(join(tmpdir(), "air-planfiles-"))
  roots.push(root)
  return root
}
const planFile = (root: string) => join(PlanFiles.dir(root), "plan.md")
const logged = (root: string) => JsonLines.read<{ type: string }>(join(root, ".air", "local", "state", "events.jsonl")).map((e) => e.type)

describe("the plan's files are written after their event", () => {
  it("an append that fails leaves no plan.md; the same proposal once stored writes it", async () => {
    const root = project()
    const store = await Store.open(join(root, ".air"))
    store.append({ type: "run.started", at: new Date().toISOString(), runId: "r1", requirement: "Add tabs.", config: TEST_CONFIG })
    store.close()
    // No engine in this test: the Architect's session cannot start (the interpreter tells Main), which is beside the point.
    Orchestrators.attach(root, {} as never)
    const orchestrator = Orchestrators.forRoot(root)
    await orchestrator.start()
    expect(readFileSync(join(PlanFiles.dir(root), "requirements.md"), "utf8")).toBe("# Requirement\n\nAdd tabs.\n")

    vi.spyOn(Store.prototype, "append").mockImplementationOnce(() => {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
    })
    await expect(orchestrator.propose("architect-1", "Two tasks: A, then B.")).rejects.toThrow(/ENOSPC/)
    expect(existsSync(planFile(root))).toBe(false)
    expect(logged(root)).not.toContain("plan.proposed")

    vi.restoreAllMocks()
    await orchestrator.propose("architect-1", "Two tasks: A, then B.")
    expect(logged(root)).toContain("plan.proposed")
    expect(readFileSync(planFile(root), "utf8")).toBe("# Plan\n\nTwo tasks: A, then B.\n")
  })

  it("a refused event writes nothing either", async () => {
    const root = project()
    const store = await Store.open(join(root, ".air"))
    store.close()
    Orchestrators.attach(root, {} as never)
    // No run: plan.proposed is refused by the machine.
    expect(await Orchestrators.forRoot(root).propose("architect-1", "A plan for no run.")).toMatch(/Proposal refused/)
    expect(existsSync(planFile(root))).toBe(false)
  })

  it("files missing or stale are derived from the state; files in line are not rewritten", () => {
    const root = project()
    const graph = graphOf(task("A"), task("B", { deps: ["A"] }))
    const state = apply(started(graph).state).state
    expect(PlanFiles.sync(root, state).sort()).toEqual(["plan.md", "requirements.md", "task-graph.json"])
    expect(JSON.parse(readFileSync(join(PlanFiles.dir(root), "task-graph.json"), "utf8"))).toEqual(state.graph)
    expect(PlanFiles.sync(root, state)).toEqual([])
    rmSync(planFile(root))
    expect(PlanFiles.sync(root, state)).toEqual(["plan.md"])
    // The accepted graph's tasks, each with its files (issue 39 item 7).
    expect(readFileSync(planFile(root), "utf8")).toBe(`# Plan\n\n${state.planSummary}\n\n## Tasks (2)\n\nA  Add A\n   code · phase 1 · no dependencies\n   modifies src/A.cpp\nB  Add B\n   code · phase 1 · after A\n   modifies src/B.cpp\n`)
  })

  it("plan.md carries the decisions (ADRs) on disk, like the dialog; an ADR written later is added at the next sync", () => {
    const root = project()
    const state = apply(started(graphOf(task("A"))).state).state
    PlanFiles.sync(root, state)
    expect(readFileSync(planFile(root), "utf8")).not.toContain("ADR-1")
    mkdirSync(join(PlanFiles.dir(root), "adr"), { recursive: true })
    writeFileSync(join(PlanFiles.dir(root), "adr", "ADR-1.md"), "# ADR-1: Integer arithmetic stays in namespace calc\n\nStatus: accepted\n")
    expect(PlanFiles.sync(root, state)).toEqual(["plan.md"])
    expect(readFileSync(planFile(root), "utf8")).toMatch(/\n\n## Decisions \(ADRs\)\n\n {2}ADR-1 Integer arithmetic stays in namespace calc\n$/)
    expect(PlanFiles.EVENTS.has("adr.recorded")).toBe(true)
  })
})
