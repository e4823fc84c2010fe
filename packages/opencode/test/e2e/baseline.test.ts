import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, shellStep, trivialProject, type RunResult, planningArchitect } from "../support/runs"
import { legacyFailureFiles } from "../runtime/cpp-repo"

/**
 * The baseline end to end (real engine, scripted model, real cmake/ctest on generated repositories):
 * (a) a test already fails on the integration branch: the run asks once before any dispatch, the user
 *     says "go on", the task merges on its first attempt, the failing test is reported inherited and no
 *     Debugger runs;
 * (b) the integration branch does not build: the run asks before dispatching anything and stops there
 *     (headless-end.test.ts (a), on a CMake project that does not compile).
 */
const toolchain = {
  build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-on-failure"],
}

const requirement = "Document the calc helpers."
const tasks = [{ id: "T-1", title: "Comment calc.cpp", kind: "test", writeSet: [{ path: "src/calc.cpp", action: "modify" }], doneWhen: "calc.cpp starts with a comment" }]
const architect = planningArchitect("One task.", tasks)
const QUESTION = "baseline:1:question"

const goOn = {
  name: "baseline-go-on",
  scripts: [
    {
      agent: "main",
      steps: [
        { tool: "air_submit", args: { requirement } },
        { tool: "air_listen", args: {}, until: `QUESTION ${QUESTION}` },
        { tool: "air_answer", args: { questionId: QUESTION, answer: "go on" } },
        { tool: "air_listen", args: {}, until: "RUN ENDED: done" },
        { text: "Done." },
      ],
    },
    architect,
    {
      agent: "executor",
      match: "^Task T-1:",
      steps: [shellStep("sed -i '1i // calc: integer helpers' src/calc.cpp && git add -A && git commit -qm 'comment calc'"), { tool: "air_report", args: { summary: "Commented calc.cpp." } }, { text: "Reported." }],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let legacy: string
let a: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-baseline-")
  legacy = trivialProject(sandbox, legacyFailureFiles(), toolchain, "legacy")
  a = await runScenario(sandbox, legacy, goOn, { input: requirement, name: "legacy" })
}, 900_000)

afterAll(() => sandbox?.cleanup())

const types = (r: RunResult, ...wanted: string[]) => r.events.filter((e) => wanted.includes(e.type))

describe("(a) a test that already fails on the baseline", () => {
  test("the run asks once before any dispatch; after 'go on' T-1 merges on its first attempt", () => {
    expect(a.code, a.stderr.slice(-3000)).toBe(0)
    expect(a.summary.tasks.map((t: any) => [t.id, t.state, t.attempts])).toEqual([["T-1", "merged", 1]])
    const story = types(a, "baseline.done", "question.answered", "task.dispatched", "merge.succeeded").map((e) => (e.type === "task.dispatched" ? `${e.role}:${e.attempt}` : e.type))
    expect(story).toEqual(["baseline.done", "question.answered", "executor:1", "merge.succeeded"])
    const done = types(a, "baseline.done")[0]
    expect(done).toMatchObject({ status: "failed", failingTests: ["legacy_test"] })
    expect(done.message).toMatch(/ctest --test-dir \.air-build .*failed: legacy_test/)
    expect(types(a, "question.answered")).toHaveLength(1)
    // The final check knows the baseline too: the integration branch is as good as it was, and says why.
    expect(a.summary.final.passed).toBe(true)
    expect(a.summary.final.summary).toMatch(/inherited\): legacy_test/)
    expect(execFileSync("git", ["show", "main:src/calc.cpp"], { cwd: legacy, encoding: "utf8" })).toMatch(/^\/\/ calc: integer helpers\n/)
  })

  test("legacy_test is reported inherited in T-1's report, and no Debugger session ran", () => {
    const report = JSON.parse(readFileSync(join(legacy, ".air/local/evidence/T-1/attempt-1/report.json"), "utf8"))
    expect(report.passed).toBe(true)
    expect(report.inheritedTests).toEqual(["legacy_test"])
    expect(report.gates.find((g: any) => g.gate === "test").summary).toMatch(/inherited .*legacy_test/)
    expect(a.modelLog.filter((l) => l.agent === "debugger")).toEqual([])
    const commit = types(a, "baseline.done")[0].commit
    const record = JSON.parse(readFileSync(join(legacy, ".air/local/evidence/_baseline", commit, "baseline.json"), "utf8"))
    expect(record.tests).toEqual({ calc_test: "passed", legacy_test: "failed" })
  })
})
