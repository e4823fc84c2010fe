import fc from "fast-check"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { transition } from "../../src/scheduler/core/machine"
import { TASK_KINDS, type TaskKind } from "../../src/scheduler/core/task.schema"
import { gatesOutcomeEvent } from "../../src/scheduler/runtime/gates/index.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { apply, ev, graphOf, started, statusOf, steps, task } from "../scheduler/fixtures"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { firstGates } from "./task-branch.ts"

/**
 * Issue 44 item 1: the pipeline's evidence gate and the machine judge evidence by one rule. For every task kind and
 * any mix of changed-file classes, the real gate pipeline (real git, real cppcheck, the OS sandbox) runs on a real
 * task branch, its report becomes the event the runtime would apply (`gatesOutcomeEvent`), and the real machine, with
 * a task of that kind at its gates, must agree: a pipeline pass is never refused; a pipeline failure is never a pass —
 * and when the evidence gate failed it, a `gates.passed` forged from the same report is refused too.
 */
const CLASSES = {
  source: { path: "src/extra.cpp", text: '#include "calc.h"\nint twice(int a) { return add(a, a); }\n' },
  header: { path: "include/extra.h", text: "#pragma once\nint twice(int a);\n" },
  cmake: { path: "CMakeLists.txt", text: null },
  python: { path: "tools/gen.py", text: 'print("2 3 5")\n' },
  markdown: { path: "docs/notes.md", text: "# Notes\n" },
  other: { path: "data/cases.txt", text: "2 3 5\n" },
} as const
type FileClass = keyof typeof CLASSES
const CLASS_NAMES = Object.keys(CLASSES) as FileClass[]

let repo: CppRepo
let n = 0
beforeAll(async () => {
  repo = await createCppRepo()
})
afterAll(async () => {
  await repo?.cleanup()
})

/** A task branch holding one change of each class given (none: a branch with no change), gated as `kind`. */
async function gateRun(kind: TaskKind, classes: readonly FileClass[]) {
  const taskId = `P-${++n}`
  const wt = await Worktrees.create(repo.root, taskId, "main")
  const ws = repo.at(wt.path)
  for (const c of classes) {
    const { path: file, text } = CLASSES[c]
    await ws.write(file, text ?? `${await ws.read(file)}# ${taskId}\n`)
  }
  if (classes.length > 0) await ws.commitAll(`${kind}: ${classes.join(", ")}`)
  const report = await firstGates(repo.root, taskId, wt.path, { kind, toolchain: { schemaVersion: 1, build: ["true"], test: ["true"] } })
  return { report, reportPath: path.join(report.evidenceDir, "report.json") }
}

/** The machine with one task of `kind` at its gates (a verify task reports with no change, as the runtime lets it). */
function gatingState(kind: TaskKind) {
  const program = kind === "ui" ? { ui: { command: ".air-build/app" } } : kind === "service" ? { service: { service: { command: ".air-build/server" }, ports: [7000] } } : {}
  const node = task("T-1", kind === "verify" ? { kind, writeSet: [] } : { kind, ...program })
  return apply(started(graphOf(node), { concurrency: 1 }).state, steps.dispatched("T-1"), steps.reported("T-1")).state
}

async function agree(kind: TaskKind, classes: readonly FileClass[]): Promise<void> {
  const { report, reportPath } = await gateRun(kind, classes)
  const state = gatingState(kind)
  const event = gatesOutcomeEvent("T-1", report, reportPath)
  const result = transition(state, ev(event))
  const what = `${kind} changing [${classes.join(", ")}]: pipeline ${report.passed ? "passed" : `failed at ${report.failedGate}`} (${report.message.split("\n")[0]})`
  if ("refused" in result) throw new Error(`${what}; the machine refused ${event.type}: ${result.refused}`)
  expect(event.type, what).toBe(report.passed ? "gates.passed" : "gates.failed")
  expect(statusOf(result.state, "T-1") === "reviewing", what).toBe(report.passed)
  if (!report.passed && report.failedGate === "evidence") {
    const forged = transition(state, ev({ type: "gates.passed", taskId: "T-1", evidence: { ...report.evidence }, requires: report.requires, ...(report.notApplicable ? { notApplicable: report.notApplicable } : {}) }))
    expect("refused" in forged, `${what}; a gates.passed forged from its evidence was accepted`).toBe(true)
  }
}

describe("the pipeline and the machine judge evidence alike (issue 44)", () => {
  test("the commonest tasks with no C/C++ source pass both: CMakeLists.txt, Markdown, Python, a header, a data file", async () => {
    for (const c of ["cmake", "markdown", "python", "header", "other"] as const) await agree("code", [c])
    await agree("test", ["other"])
    await agree("docs", ["markdown"])
  })

  test("every kind × any mix of changed-file classes: a pass is never refused, a failure never passes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TASK_KINDS), fc.subarray(CLASS_NAMES), async (kind, classes) => agree(kind, classes)),
      { numRuns: 12, seed: 44 },
    )
  })
})
