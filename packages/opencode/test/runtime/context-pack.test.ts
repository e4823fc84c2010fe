import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { newTaskRuntime, type TaskRuntime } from "../../src/scheduler/core/state"
import { ContextPack } from "../../src/scheduler/runtime/sessions/context-pack"
import { HouseRules } from "../../src/scheduler/runtime/house/rules"
import { task } from "../scheduler/fixtures"

// The prompts are the only thing a session knows of its task: each test names what a session could not do
// without (its files, what failed before, the tool it must call), so a prompt that loses it fails here.

const root = mkdtempSync(join(tmpdir(), "air-context-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const adrDir = join(root, ".air", "shared", "plan", "adr")
mkdirSync(adrDir, { recursive: true })
writeFileSync(join(adrDir, "ADR-1.md"), "# ADR-1: Integers only\n\nStatus: accepted\n\nEvery calc function takes and returns int.\n")
writeFileSync(join(adrDir, "ADR-2.md"), "# ADR-2: Old choice\n\nStatus: superseded\n")

const worktree = { path: "/repo/.air/local/worktrees/T-2", branch: "air/T-2" }
const node = task("T-2", {
  title: "Add calc::avg3",
  writeSet: [
    { path: "src/calc.cpp", action: "modify", region: "avg3" },
    { path: "tests/avg3_test.cpp", action: "create" },
  ],
  keep: ["calc::add keeps its signature"],
  validation: ["ctest -R avg3"],
  adrRefs: ["ADR-1", "ADR-9"],
})
const failed: TaskRuntime = {
  ...newTaskRuntime("T-2", 0),
  lastFailure: { source: "cppcheck", message: "src/calc.cpp:12: error: Uninitialized variable: s", evidencePath: ".air/local/evidence/T-2/1/cppcheck.log" },
  findings: ["avg3 divides by 2, not 3 (src/calc.cpp:14)"],
}

describe("the worker's prompt", () => {
  test("the executor's first line names the task; it lists its write-set, keep-constraints, validation and cited ADRs", () => {
    const prompt = ContextPack.worker(root, "executor", node, undefined, worktree, 1)
    expect(prompt.split("\n")[0]).toBe("Task T-2: Add calc::avg3")
    expect(prompt).toContain("- src/calc.cpp (modify, region: avg3)")
    expect(prompt).toContain("- tests/avg3_test.cpp (create)")
    expect(prompt).toContain("- calc::add keeps its signature")
    expect(prompt).toContain("- ctest -R avg3")
    expect(prompt).toContain("Every calc function takes and returns int.")
    // A cited ADR that does not exist is said, not silently dropped.
    expect(prompt).toContain("(ADR-9 not found in .air/shared/plan/adr/)")
    expect(prompt).toContain(`Your git worktree is ${worktree.path} on branch ${worktree.branch}`)
    expect(prompt).toContain("air_report")
    expect(prompt).not.toContain("What failed before")
  })

  test("a task that writes nothing says so instead of an empty list", () => {
    const prompt = ContextPack.worker(root, "executor", task("T-3", { writeSet: [] }), undefined, worktree, 1)
    expect(prompt).toContain("- (none: this task changes no files)")
  })

  test("the debugger gets what failed, where its evidence is, and the review findings, before its instructions", () => {
    const prompt = ContextPack.worker(root, "debugger", node, failed, worktree, 2)
    const failure = prompt.indexOf("What failed before (cppcheck):")
    expect(failure).toBeGreaterThan(0)
    expect(prompt).toContain("src/calc.cpp:12: error: Uninitialized variable: s")
    expect(prompt).toContain("Evidence: .air/local/evidence/T-2/1/cppcheck.log")
    expect(prompt).toContain("- avg3 divides by 2, not 3 (src/calc.cpp:14)")
    expect(prompt.indexOf("You are the debugger of this task (attempt 2)")).toBeGreaterThan(failure)
    expect(prompt).toContain("Collect evidence first")
  })

  test("a verify task's executor is told to change nothing", () => {
    const prompt = ContextPack.worker(root, "executor", task("T-1.rv", { kind: "verify" }), undefined, worktree, 1)
    expect(prompt).toContain("You are the executor of this verify task")
    expect(prompt).toContain("Change nothing and commit nothing")
  })
})

describe("the reviewer's prompt", () => {
  test("a first review asks for the table, the C++ checklist and air_review, without earlier findings", () => {
    const prompt = ContextPack.reviewer(root, node, worktree.path, { ...failed, reviewRuns: 1 })
    expect(prompt.split("\n")[0]).toBe("Review task T-2: Add calc::avg3")
    expect(prompt).toContain("air_diff")
    expect(prompt).toContain("air_review")
    expect(prompt).toContain("lifetimes and ownership; raw pointers; concurrency; exceptions across boundaries; integer overflow; undefined behaviour; key paths logged (start-up, network, file I/O, errors); one logging library and format")
    expect(prompt).not.toContain("an earlier review found")
    // No house.json here: the logging rows have nothing to be judged against.
    expect(prompt).toContain("name no logging library: answer the checklist's logging rows not-applicable")
  })

  test("the logging rows are judged against the library the house rules name", () => {
    const project = mkdtempSync(join(tmpdir(), "air-context-house-"))
    try {
      mkdirSync(dirname(join(project, HouseRules.RULES_PATH)), { recursive: true })
      writeFileSync(join(project, HouseRules.RULES_PATH), JSON.stringify({ schemaVersion: 1, logging: { library: "glog" } }))
      const prompt = ContextPack.reviewer(project, node, worktree.path)
      expect(prompt).toMatch(/name glog as the one logging library, logging through LOG\(INFO\)[^\n]*: judge the checklist's logging rows against it/)
    } finally {
      rmSync(project, { recursive: true, force: true })
    }
  })

  test("a second review lists what the first found, to check each is fixed", () => {
    const prompt = ContextPack.reviewer(root, node, worktree.path, { ...failed, reviewRuns: 2 })
    expect(prompt).toContain("This is review 2; an earlier review found (check that each is fixed):")
    expect(prompt).toContain("- avg3 divides by 2, not 3 (src/calc.cpp:14)")
  })
})

describe("the Architect's prompts", () => {
  test("a headless pre-confirmed run writes the graph at once; otherwise it stops for the user", () => {
    expect(ContextPack.architect("add avg3", true)).toContain("write the task graph with air_plan right away")
    const asking = ContextPack.architect("add avg3", false)
    expect(asking).toContain("Requirement:\nadd avg3")
    expect(asking).toContain("the user must confirm through Main before air_plan is accepted")
  })

  test("a new Architect after a restart gets the proposal and the user's answer, confirmed or revised", () => {
    const confirmed = ContextPack.architectAgain("add avg3", "Three tasks.", { confirmed: true, notes: "keep it small" })
    expect(confirmed).toContain("Three tasks.")
    expect(confirmed).toContain("The user confirmed this plan (they said: keep it small)")
    const revised = ContextPack.architectAgain("add avg3", "Three tasks.", { confirmed: false, revision: "no new files" })
    expect(revised).toContain('in their words: "no new files"')
    expect(revised).toContain("Do not call air_plan before the confirmation.")
  })

  test("a requirement change shows the graph as it runs and every ADR with its status", () => {
    const prompt = ContextPack.change(root, "use long instead of int", { tasks: [node, task("T-4", { deps: ["T-2"], writeSet: [] })] }, (id) => (id === "T-2" ? "done" : undefined))
    expect(prompt).toContain("- T-2 · done · phase 1 · code · Add calc::avg3 · src/calc.cpp(modify), tests/avg3_test.cpp(create) · ADR-1, ADR-9")
    expect(prompt).toContain("- T-4 · pending · phase 1 · code · Add T-4 · no files · after T-2")
    expect(prompt).toContain("- ADR-1 (accepted): ADR-1: Integers only")
    expect(prompt).toContain("- ADR-2 (superseded): ADR-2: Old choice")
    expect(prompt).toContain("air_delta")
  })

  test("a consult offers exactly the options given, and the Architect may answer with a delta", () => {
    const architect = ContextPack.consult("T-2", "The repair budget is spent.", ["debug-again", "block"], "architect")
    expect(architect).toContain("Options (choose exactly one with air_decide):\n- debug-again\n- block")
    expect(architect).toContain(".air/local/evidence/T-2/")
    expect(architect).toContain("air_delta")
    expect(ContextPack.consult("T-2", "q", ["block"], "scheduler")).toContain("the Architect is consulted next")
  })

  test("a final milestone review covers the whole requirement and carries the user's answer after failed rounds", () => {
    const final = ContextPack.milestone(2, "add avg3", [node], { final: true, adrs: ["ADR-1 (accepted)"], answer: "ship it" })
    expect(final).toContain("Final milestone review of phase 2")
    expect(final).toContain("Merged tasks (the whole run):")
    expect(final).toContain("- T-2: Add calc::avg3 (done when: T-2 works) · ADR-1, ADR-9")
    expect(final).toContain("Their answer: ship it")
    const phase = ContextPack.milestone(1, "add avg3", [node])
    expect(phase).toContain("Merged tasks of this phase:")
    expect(phase).toContain("- (none)")
    expect(phase).toContain("air_milestone")
  })

  test("an edited ADR is shown as accepted and as it is now, with the tasks citing it", () => {
    const prompt = ContextPack.adrEdit("ADR-1", "int only", "int or long", ["- T-2 · done · Add calc::avg3"])
    expect(prompt).toContain("As accepted:\nint only")
    expect(prompt).toContain("As it is now:\nint or long")
    expect(prompt).toContain("- T-2 · done · Add calc::avg3")
    expect(ContextPack.adrEdit("ADR-1", null, "x", [])).toContain("(no copy was kept")
  })
})
