import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { evidenceGate } from "../../src/scheduler/runtime/gates/evidence.ts"
import { gatesFailedEvent, REGISTRY, requiredEvidence, runGates, type Gate, type GateContext, type Route } from "../../src/scheduler/runtime/gates/index.ts"
import { transition } from "../../src/scheduler/core/machine.ts"
import { requiredEvidence as coreRequiredEvidence } from "../../src/scheduler/core/required-evidence.ts"
import { TASK_KINDS } from "../../src/scheduler/core/task.schema.ts"
import { RunView } from "../../src/read/view.ts"
import { ViewText } from "../../src/read/view-text.ts"
import { EventText } from "../../src/read/event-text.ts"
import { apply, ev, graphOf, runtimeOf, started, steps, task, type EventInput } from "../scheduler/fixtures.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"

/**
 * A new gate is its own file and a registry line, and nothing else: this test defines one that no shipped file
 * knows (not the registry, not the core, not the words catalogue, not the views' gate list) and follows it from
 * the pipeline through the machine to the views.
 */
function todoGate(route: Route): Gate {
  return {
    id: "no-todo",
    route,
    logs: ["no-todo.log"],
    async run(ctx: GateContext) {
      const text = await readFile(path.join(ctx.worktree, "notes.txt"), "utf8").catch(() => "")
      const todos = text.split("\n").filter((line) => line.includes("TODO"))
      const logPath = await ctx.write("no-todo.log", todos.join("\n"))
      if (todos.length === 0) return { ran: true, summary: "no TODO left", logPath }
      return { ran: true, summary: `${todos.length} TODO left`, logPath, failure: { summary: `${todos.length} TODO left`, message: `${ctx.label}: notes.txt still says: ${todos[0]}` } }
    },
  }
}

describe("a gate added in a temporary registry: runs, fails, routes and shows with no other file touched", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
    await repo.write("notes.txt", "TODO: handle overflow\n")
    await repo.commitAll("a note")
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  /** The gates run (a registry of the new gate and the evidence rule), and the failure goes to the machine as the runtime sends it. */
  async function failAt(route: Route) {
    const evidenceDir = path.join(repo.root, ".air", "local", "evidence", "T1", `attempt-${route}`)
    const report = await runGates({ root: repo.root, worktree: repo.root, taskId: "T1", base: "main", kind: "docs", attempt: 1, evidenceDir, requires: [], toolchain: { schemaVersion: 1 }, sandbox: "off", gates: [todoGate(route), evidenceGate] })
    const event = gatesFailedEvent("T1", report, path.join(evidenceDir, "report.json"))
    const { state, commands } = apply(started(graphOf(task("T1"))).state, steps.dispatched("T1"), steps.reported("T1"), event as EventInput)
    return { report, event, state, commands }
  }

  test("it fails under its own id, and the machine sends the failure where the gate declared", async () => {
    const toDebugger = await failAt("debugger")
    expect(toDebugger.report).toMatchObject({ passed: false, failedGate: "no-todo", failedRoute: "debugger" })
    expect(toDebugger.report.message).toContain("TODO: handle overflow")
    expect(toDebugger.event).toMatchObject({ type: "gates.failed", gate: "no-todo", route: "debugger" })
    expect(runtimeOf(toDebugger.state, "T1")).toMatchObject({ status: "debugging", role: "debugger", lastFailure: { source: "no-todo" } })
    expect(toDebugger.commands.map((c) => c.id)).toContain("dispatch:T1:debugger:2")

    // The same gate declaring another route: the machine follows the route, not the id.
    const toExecutor = await failAt("executor")
    expect(runtimeOf(toExecutor.state, "T1")).toMatchObject({ status: "running", role: "executor" })
    const toPerson = await failAt("user")
    expect(runtimeOf(toPerson.state, "T1")).toMatchObject({ status: "blocked", resume: "gates" })
  })

  test("the views name it by its id (no words of its own) in every language", async () => {
    const { report, event, state } = await failAt("debugger")
    const view = RunView.build({ state, gateReports: { T1: report } })
    const t1 = view.tasks.find((t) => t.id === "T1")!
    for (const lang of ["en", "zh-CN"] as const) {
      expect(ViewText.gatesText(lang, t1.gates)).toBe("no-todo ✗")
      expect(ViewText.lastFailureText(lang, t1.lastFailure!)).toContain("no-todo")
      expect(EventText.describeEvent({ ...event, at: "2026-01-01T00:00:00.000Z", seq: 1 }, lang)).toContain("no-todo")
    }
    expect(ViewText.lastFailureText("en", t1.lastFailure!)).toBe("no-todo gate failed: see the evidence")
  })
})

/** A gate that brings an evidence kind of its own, required of `docs` tasks: declared in its file, nowhere else. */
function coverageGate(covered: boolean): Gate {
  return {
    id: "coverage",
    route: "debugger",
    provides: "coverage",
    requiredFor: ["docs"],
    logs: ["coverage.log"],
    async run(ctx: GateContext) {
      if (!covered) return { ran: false, summary: "no coverage tool configured" }
      const logPath = await ctx.write("coverage.log", "lines: 92%\n")
      return { ran: true, summary: "92% of lines", logPath }
    },
  }
}

describe("a gate that provides a new evidence kind: required, enforced and checked with no other file touched", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  const gatesOf = (covered: boolean, n: number) =>
    runGates({ root: repo.root, worktree: repo.root, taskId: "T1", base: "main", kind: "docs", attempt: n, evidenceDir: path.join(repo.root, ".air", "local", "evidence", "T1", `attempt-${n}`), toolchain: { schemaVersion: 1 }, sandbox: "off", gates: [coverageGate(covered), evidenceGate] })

  test("the task kinds it names cannot pass without it; the others are not asked for it", async () => {
    expect(requiredEvidence("docs", [coverageGate(true), evidenceGate])).toEqual(["coverage"])
    expect(requiredEvidence("code", [coverageGate(true), evidenceGate])).toEqual([])
    const missing = await gatesOf(false, 1)
    expect(missing).toMatchObject({ passed: false, failedGate: "evidence", requires: ["coverage"] })
    expect(missing.message).toContain("coverage: the coverage gate did not run and pass")
    const present = await gatesOf(true, 2)
    expect(present).toMatchObject({ passed: true, requires: ["coverage"], evidence: { coverage: expect.stringMatching(/coverage\.log$/) } })
  })

  test("the machine checks the evidence against what the gates required, knowing no evidence kind", () => {
    const { state } = apply(started(graphOf(task("T1", { kind: "docs" }))).state, steps.dispatched("T1"), steps.reported("T1"))
    const passed = (evidence: Record<string, string>, requires?: string[]) => transition(state, ev({ type: "gates.passed", taskId: "T1", evidence, ...(requires ? { requires } : {}) }))
    expect(passed({ coverage: "c.log" }, ["coverage"])).toMatchObject({ state: { tasks: expect.arrayContaining([expect.objectContaining({ id: "T1", status: "reviewing" })]) } })
    expect(passed({ diff: "d.patch" }, ["coverage"])).toMatchObject({ refused: expect.stringContaining("without evidence for: coverage") })
    // An event of an old log, written before it carried `requires`, is checked as the core checked it then.
    expect(passed({ coverage: "c.log" })).toMatchObject({ refused: expect.stringContaining("without evidence for: diff") })
  })

  test("the shipped gates require of each task kind what the core required before they declared it", () => {
    // ui and service came after the gates declared their kinds: no old log holds them.
    for (const kind of TASK_KINDS.filter((k) => k !== "ui" && k !== "service")) expect(requiredEvidence(kind, REGISTRY)).toEqual(coreRequiredEvidence(undefined, kind))
  })

  test("for every task kind the required evidence is exactly what the registry declares: a program's only for its kind", () => {
    const declared = (kind: string) => (REGISTRY as readonly Gate[]).filter((g) => g.provides && (g.requiredFor as readonly string[] | undefined)?.includes(kind)).map((g) => g.provides!)
    for (const kind of TASK_KINDS) expect(requiredEvidence(kind, REGISTRY)).toEqual([...new Set(declared(kind))])
    expect(requiredEvidence("service", REGISTRY)).toContain("probe")
    expect(requiredEvidence("ui", REGISTRY)).toContain("screenshot")
    // A code task never needs a screenshot or a capture (no false blocks); a ui task never passes without one.
    for (const kind of TASK_KINDS.filter((k) => k !== "service")) expect(requiredEvidence(kind, REGISTRY), kind).not.toContain("probe")
    for (const kind of TASK_KINDS.filter((k) => k !== "ui")) expect(requiredEvidence(kind, REGISTRY), kind).not.toContain("screenshot")
  })
})
