import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, shellStep, trivialProject, type RunResult, planningArchitect } from "../support/runs"
import { CALC_CPP, legacyFailureFiles } from "../runtime/cpp-repo"

/**
 * The baseline end to end (real engine, scripted model, real cmake/ctest on generated repositories):
 * (a) a test already fails on the integration branch: the run asks once before any dispatch, the user
 *     says "go on", the task merges on its first attempt, the failing test is reported inherited and no
 *     Debugger runs;
 * (b) the integration branch does not build: the run asks before dispatching anything and stops there.
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

const stopAtQuestion = {
  name: "baseline-broken",
  scripts: [
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: `QUESTION ${QUESTION}` }, { text: "The integration branch does not build; I asked you." }] },
    architect,
  ],
}

let sandbox: Sandbox
let legacy: string
let broken: string
let a: RunResult
let b: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-baseline-")
  legacy = trivialProject(sandbox, legacyFailureFiles(), toolchain, "legacy")
  broken = trivialProject(sandbox, legacyFailureFiles({ calc: CALC_CPP.replace("return a + b;", "return a + missing_b;") }), toolchain, "broken")
  ;[a, b] = await Promise.all([
    runScenario(sandbox, legacy, goOn, { input: requirement, name: "legacy" }),
    runScenario(sandbox, broken, stopAtQuestion, { input: requirement, name: "broken" }),
  ])
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

describe("(b) a baseline that does not build", () => {
  test("the run stops for the user before dispatching anything: one question with the command and the first error", () => {
    expect(b.code, b.stderr.slice(-3000)).toBe(2)
    expect(types(b, "task.dispatched")).toEqual([])
    expect(types(b, "baseline.done")[0]).toMatchObject({ status: "failed", buildFailed: true, failingTests: [] })
    expect(b.summary.questions).toEqual([{ questionId: QUESTION, text: expect.stringMatching(/does not build: `cmake --build \.air-build` failed: .*calc\.cpp:\d+:\d+: error: .*missing_b[\s\S]*"go on"/) }])
    expect(b.modelLog.filter((l) => l.agent === "debugger" || l.agent === "executor")).toEqual([])
  })
})
