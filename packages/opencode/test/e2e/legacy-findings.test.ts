import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, writeAndReport, type RunResult, submittingMain, planningArchitect } from "../support/runs"

/**
 * Legacy code a correct task touches: the file already has a cppcheck error and a clang-tidy finding on
 * the integration branch. Judged against the task's base, both are inherited: the task merges on its first
 * gate run and no Debugger is sent (issue 12: "a correct task merges on its first attempt").
 */
const LEGACY = `int legacy() {
  int a[2] = {0, 0};
  a[5] = 1;
  return a[0];
}

int* none() {
  int* p = 0;
  return p;
}
`
const requirement = "Document legacy()."
const tasks = [{ id: "T-1", title: "Comment legacy()", kind: "code", writeSet: [{ path: "src/legacy.cpp", action: "modify" }], doneWhen: "legacy() has a comment" }]
const scenario = {
  name: "legacy-findings",
  scripts: [
    submittingMain(requirement),
    planningArchitect("One comment.", tasks),
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("src/legacy.cpp", "// legacy(): kept as it was, known to be wrong\n" + LEGACY, "comment legacy") },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-legacy-")
  project = trivialProject(sandbox, {
    "src/legacy.cpp": LEGACY,
    ".clang-tidy": "Checks: '-*,modernize-use-nullptr'\n",
    ".air/shared/rules/toolchain.json": JSON.stringify({ schemaVersion: 1, build: ["true"], test: ["true"] }),
  })
  r = await runScenario(sandbox, project, scenario, { input: requirement })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("a correct task on legacy code", () => {
  test("merges on its first gate run, with no Debugger, and the inherited findings recorded", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(r.events.filter((e) => e.type === "gates.failed")).toEqual([])
    expect(r.events.filter((e) => e.type === "task.dispatched" && e.role === "debugger")).toEqual([])
    const report = JSON.parse(readFileSync(join(project, ".air/local/evidence/T-1/attempt-1/report.json"), "utf8"))
    expect(report.passed).toBe(true)
    expect(report.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: "src/legacy.cpp", line: 4, id: "arrayIndexOutOfBounds", tool: "cppcheck", inherited: true }),
        expect.objectContaining({ file: "src/legacy.cpp", line: 9, id: "modernize-use-nullptr", tool: "clang-tidy", inherited: true }),
      ]),
    )
  })

  test("the run leaves no helper worktree behind: the base tree the analysis compared with is gone", () => {
    const listed = execFileSync("git", ["worktree", "list", "--porcelain"], { cwd: project, encoding: "utf8", env: sandbox.env })
    expect(listed.split("\n").filter((line) => line.startsWith("worktree "))).toEqual([`worktree ${project}`])
    expect(existsSync(join(project, ".air", "local", "base-tree"))).toBe(false)
  })
})
