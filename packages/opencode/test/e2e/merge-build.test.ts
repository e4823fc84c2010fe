import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { buildAndTestAt, commitStep, passingReviewer, runScenario, trivialProject, type RunResult, submittingMain, planningArchitect } from "../support/runs"
import { CALC_CPP, CALC_H, CALC_TEST_CPP, CMAKELISTS } from "../runtime/cpp-repo"

/**
 * What is merged is what was gated (issue 12, item 4): two tasks that each pass alone but break the build
 * together. T-1 renames add() to plus(); T-2, branched before T-1 landed, adds src/twice.cpp calling add().
 * T-2's gates pass on its own branch; its merge builds the candidate (T-2 on top of T-1), which fails, so it
 * never lands: merge.rejected sends it to the Debugger with the build log, the Debugger fixes the call on the
 * rebased branch, and it lands. Every commit on the integration branch builds and passes its tests.
 */
const requirement = "Rename add to plus, and add twice()."
const tasks = [
  {
    id: "T-1",
    title: "Rename add to plus",
    kind: "test",
    writeSet: [
      { path: "include/calc.h", action: "modify" },
      { path: "src/calc.cpp", action: "modify" },
      { path: "test/calc_test.cpp", action: "modify" },
    ],
    doneWhen: "add is called plus everywhere",
  },
  {
    id: "T-2",
    title: "Add twice()",
    kind: "test",
    writeSet: [
      { path: "src/twice.cpp", action: "create" },
      { path: "CMakeLists.txt", action: "modify" },
    ],
    doneWhen: "twice(a) returns a + a",
  },
]
/** The Debugger's reproduction and verification: the merge build's commands. */
const BUILD = "cmake -S . -B .air-build -G Ninja >/dev/null && cmake --build .air-build"
const TWICE = (call: string) => `#include "calc.h"\n\nint twice(int a) {\n  return ${call}(a, a);\n}\n`
const scenario = {
  name: "merge-build",
  scripts: [
    submittingMain(requirement),
    planningArchitect("Two independent tasks.", tasks),
    {
      agent: "executor",
      match: "^Task T-1:",
      steps: [
        { tool: "edit", args: { filePath: "include/calc.h", oldString: "int add(", newString: "int plus(" } },
        { tool: "edit", args: { filePath: "src/calc.cpp", oldString: "int add(", newString: "int plus(" } },
        { tool: "edit", args: { filePath: "test/calc_test.cpp", oldString: 'check("add(2, 3)", add(2, 3), 5)', newString: 'check("plus(2, 3)", plus(2, 3), 5)' } },
        commitStep("rename add to plus"),
        { tool: "air_report", args: { summary: "Renamed add to plus." } },
        { text: "Reported." },
      ],
    },
    {
      // Written on a branch from before the rename, handed in once the rename has landed.
      agent: "executor",
      match: "^Task T-2:",
      steps: [
        { tool: "write", args: { filePath: "src/twice.cpp", content: TWICE("add") } },
        { tool: "edit", args: { filePath: "CMakeLists.txt", oldString: "add_library(calc src/calc.cpp)", newString: "add_library(calc src/calc.cpp src/twice.cpp)" } },
        commitStep("add twice"),
        { tool: "bash", args: { command: "git tag --list 'air/done/T-1'", description: "wait for the rename to land" }, until: "air/done/T-1", delayMs: 1000 },
        { tool: "air_report", args: { summary: "Added twice()." } },
        { text: "Reported." },
      ],
    },
    {
      agent: "debugger",
      match: "^Task T-2:",
      steps: [
        { tool: "bash", args: { command: BUILD, description: "reproduce the merge build" }, expect: { lastUserIncludes: ["What failed before (merge-build)", "was not declared"] } },
        { tool: "edit", args: { filePath: "src/twice.cpp", oldString: "return add(a, a);", newString: "return plus(a, a);" } },
        { tool: "bash", args: { command: BUILD, description: "verify: the failing build passes" } },
        commitStep("call plus"),
        {
          tool: "air_report",
          args: {
            summary: "add was renamed to plus on the integration branch; twice() calls plus.",
            debug: {
              symptom: "the merge build fails: add was not declared in src/twice.cpp",
              reproduction: { command: BUILD, output: "src/twice.cpp: error: 'add' was not declared in this scope" },
              rootCause: { file: "src/twice.cpp", line: 4, explanation: "twice() calls add(), which T-1 renamed to plus() on the integration branch" },
              fix: "twice() calls plus()",
              verification: { command: BUILD, output: "the build passes" },
              pattern: "none",
            },
          },
        },
        { text: "Fixed." },
      ],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-merge-build-")
  project = trivialProject(
    sandbox,
    { "CMakeLists.txt": CMAKELISTS, "include/calc.h": CALC_H, "src/calc.cpp": CALC_CPP, "test/calc_test.cpp": CALC_TEST_CPP },
    { build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"], test: ["ctest --test-dir .air-build --output-on-failure"] },
  )
  r = await runScenario(sandbox, project, scenario, { input: requirement })
}, 900_000)

afterAll(() => sandbox?.cleanup())

const git = (args: string[], cwd = project) => execFileSync("git", args, { cwd, encoding: "utf8", env: sandbox.env })

describe("two tasks that pass alone but break the build together", () => {
  test("the run finishes done with both merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"], ["T-2", "merged"]])
    expect(git(["show", "main:src/twice.cpp"])).toBe(TWICE("plus"))
  })

  test("T-2 never lands broken: its merge build fails, the Debugger fixes it on the rebased branch, then it lands", () => {
    const story = r.events
      .filter((e) => e.taskId === "T-2" && ["task.dispatched", "gates.passed", "merge.rejected", "merge.succeeded"].includes(e.type))
      .map((e) => (e.type === "task.dispatched" ? `${e.role}:${e.attempt}` : e.type))
    expect(story).toEqual(["executor:1", "gates.passed", "merge.rejected", "debugger:2", "gates.passed", "merge.succeeded"])
    const rejected = r.events.find((e) => e.type === "merge.rejected")
    expect(rejected.message).toMatch(/merge build failed/)
    expect(rejected.message).toMatch(/twice\.cpp/)
    expect(readFileSync(rejected.evidencePath, "utf8")).toMatch(/.add. was not declared/)
    expect(existsSync(join(project, ".air/local/evidence/T-2/merge-1/candidate.diff"))).toBe(true)
    // The merge that T-1 made and the final one of T-2 were not built again: their trees were the gated ones.
    expect(existsSync(join(project, ".air/local/evidence/T-1/merge-1/build.log"))).toBe(false)
    expect(existsSync(join(project, ".air/local/evidence/T-2/merge-2/build.log"))).toBe(false)
    expect(git(["log", "--format=%H", "--grep=^Air-Task: T-2$", "main"]).trim().split("\n")).toHaveLength(1)
  })

  test("every commit on the integration branch builds and passes its tests", () => {
    // The sample project's commit and the two squash merges (the empty first commit has nothing to build).
    const commits = git(["rev-list", "--first-parent", "main"]).trim().split("\n").slice(0, -1)
    expect(commits).toHaveLength(3)
    for (const commit of commits) expect(buildAndTestAt(project, commit, sandbox.env)).toMatch(/100% tests passed/)
  })
})
