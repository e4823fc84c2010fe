import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { commitStep, passingReviewer, planningArchitect, runScenario, trivialProject, type RunResult } from "../support/runs"
import { beforeStallEnds } from "../support/stall"
import { CALC_CPP, CALC_H, CALC_TEST_CPP, CMAKELISTS } from "../runtime/cpp-repo"

/**
 * A question stops only what waits on it (issue 39 item 8), with the real engine, the scripted model and real
 * gates (cmake, ctest) on a small C++ library. Two independent tasks: T-1's executor reports `blocked` at once,
 * the Architect cannot settle it, so the user is asked (T-1:blocked:1); T-2 adds mul().
 * (a) `aircoding run`: T-2 goes on and merges after the question, then the run ends blocked and exits 2 with
 *     T-1's question, the command that answers it and T-2 as merged meanwhile — while Main still listens
 *     (no listen ran out: only the Scheduler's state ended it);
 * (b) `--resume --answer "T-1:blocked:1: …"`: T-1 runs again with the answer, merges, exit 0;
 * (c) `--exit-on-question`: the exit comes at the question, before T-2 merges — T-2's executor holds its
 *     first answer far longer (the stall) than the exit may take, and the run ends before that stall does.
 * The product's window for Main to answer (AIRCODING_HEADLESS_ANSWER_MS unset): Main never answers here.
 */
const requirement = "Add mul() and check sub() with negative numbers."
const tasks = [
  { id: "T-1", title: "Check sub with negative numbers", kind: "test", writeSet: [{ path: "test/calc_test.cpp", action: "modify" }], doneWhen: "calc_test checks sub(-1, -2)" },
  { id: "T-2", title: "Add mul", kind: "test", writeSet: [{ path: "include/calc.h", action: "modify" }, { path: "src/calc.cpp", action: "modify" }], doneWhen: "mul(a, b) returns a * b" },
]
const reason = "the requirement does not say whether sub(-1, -2) should be 1 or -3"
const answer = "sub(-1, -2) is 1."
const questionId = "T-1:blocked:1"
/** How long T-2's executor holds its first answer in (c): far longer than an exit at the question may take. */
const STALL = { ms: 600_000, what: "T-2's executor's held first answer" }

const main = [
  { agent: "main", match: "^Resume the AirCoding run", steps: [{ tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
  { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
]
const blockedExecutor = { agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)", steps: [{ tool: "air_report", args: { summary: "Nothing changed yet.", blocked: reason } }, { text: "Blocked." }] }
const answeredExecutor = {
  agent: "executor",
  match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)",
  steps: [
    { tool: "edit", args: { filePath: "test/calc_test.cpp", oldString: '  check("sub(5, 3)", sub(5, 3), 2);', newString: '  check("sub(5, 3)", sub(5, 3), 2);\n  check("sub(-1, -2)", sub(-1, -2), 1);' }, expect: { lastUserIncludes: [answer] } },
    commitStep("check sub with negatives"),
    { tool: "air_report", args: { summary: "calc_test checks sub(-1, -2) == 1." } },
    { text: "Reported." },
  ],
}
const architectBlocks = {
  agent: "architect",
  match: "^Consult on task T-1:",
  steps: [{ tool: "air_decide", args: { choice: "block", reason: "only the user can say which result sub(-1, -2) should have" }, expect: { lastUserIncludes: [reason] } }, { text: "Decided." }],
}
const mulExecutor = (delayMs?: number) => ({
  agent: "executor",
  match: "^Task T-2:",
  steps: [
    { tool: "edit", args: { filePath: "include/calc.h", oldString: "int sub(int a, int b);", newString: "int sub(int a, int b);\nint mul(int a, int b);" }, ...(delayMs ? { delayMs } : {}) },
    { tool: "edit", args: { filePath: "src/calc.cpp", oldString: "int sub(int a, int b) {", newString: "int mul(int a, int b) {\n  return a * b;\n}\n\nint sub(int a, int b) {" } },
    commitStep("add mul"),
    { tool: "air_report", args: { summary: "Added mul()." } },
    { text: "Reported." },
  ],
})
const scripts = [...main, planningArchitect("Two independent tasks.", tasks), architectBlocks, blockedExecutor, answeredExecutor, passingReviewer]
const goesOn = { name: "headless-question", scripts: [...scripts, mulExecutor()] }
const exitsAtOnce = { name: "headless-question-exit", scripts: [...scripts, mulExecutor(STALL.ms)] }
const cmake = { build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"], test: ["ctest --test-dir .air-build --output-on-failure"] }
const files = { "CMakeLists.txt": CMAKELISTS, "include/calc.h": CALC_H, "src/calc.cpp": CALC_CPP, "test/calc_test.cpp": CALC_TEST_CPP }
/** The product's answer window; no inactivity timer fires on the held answer of (c). */
const env = { AIRCODING_HEADLESS_ANSWER_MS: "" }

let sandbox: Sandbox
let project: string
let other: string
const runs: RunResult[] = []
let early: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-headless-question-")
  project = trivialProject(sandbox, files, cmake, "goes-on")
  other = trivialProject(sandbox, files, cmake, "exits")
  await Promise.all([
    (async () => {
      runs.push(await runScenario(sandbox, project, goesOn, { input: requirement, name: "question", env }))
      runs.push(await runScenario(sandbox, project, goesOn, { input: "", name: "answered", args: ["--resume", "--answer", `${questionId}: ${answer}`], env }))
    })(),
    (async () => {
      early = await beforeStallEnds(
        runScenario(sandbox, other, exitsAtOnce, { input: requirement, name: "exit-on-question", args: ["--exit-on-question"], env: { ...env, AIRCODING_INACTIVITY_MS: String(STALL.ms * 2) }, timeoutMs: STALL.ms }),
        STALL,
      )
    })(),
  ])
}, 1_500_000)

afterAll(() => sandbox?.cleanup())

const git = (args: string[], cwd = project) => execFileSync("git", args, { cwd, encoding: "utf8", env: sandbox.env })
const indexOf = (r: RunResult, match: (e: any) => boolean) => r.events.findIndex(match)

describe("(a) a question on T-1 early: T-2 goes on and merges, then exit 2", () => {
  test("exit 2, blocked, with T-1's question, the command that answers it, and T-2 merged meanwhile", () => {
    const r = runs[0]!
    expect(r.code, r.stderr.slice(-3000)).toBe(2)
    expect(r.summary.status).toBe("blocked")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "blocked"], ["T-2", "merged"]])
    expect(r.summary.questions.map((q: any) => q.questionId)).toEqual([questionId])
    expect(r.summary.answerWith).toEqual([{ questionId, command: expect.stringMatching(new RegExp(`run ${project} --resume --yes --scripted \\S+ --answer "${questionId}: <your answer>"$`)) }])
    expect(r.summary.meanwhile).toEqual({ merged: ["T-2"] })
    expect(r.summary.errors).toEqual([])
    expect(git(["show", "main:src/calc.cpp"])).toContain("return a * b;")
  })

  test("T-1 was questioned before T-2 merged; the run ended on the Scheduler's state while Main still listened", () => {
    const r = runs[0]!
    const asked = indexOf(r, (e) => e.type === "consult.answered" && e.taskId === "T-1" && e.choice === "block")
    const merged = indexOf(r, (e) => e.type === "merge.succeeded" && e.taskId === "T-2")
    expect([asked > 0, merged > asked]).toEqual([true, true])
    expect(r.events.filter((e) => e.type === "task.dispatched" && e.taskId === "T-1").map((e) => e.attempt)).toEqual([1])
    const listens = r.modelLog.filter((l) => l.agent === "main" && /^No news yet/.test(l.lastToolResult ?? ""))
    expect(listens).toEqual([])
  })
})

describe("(b) the answer resumes the run", () => {
  test("T-1 runs again with the answer and merges: exit 0, done", () => {
    const r = runs[1]!
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"], ["T-2", "merged"]])
    expect(r.events.find((e) => e.type === "question.answered")).toMatchObject({ questionId, answer })
    expect(r.modelLog.filter((l) => l.failure && l.agent !== "main")).toEqual([])
    expect(git(["show", "main:test/calc_test.cpp"])).toContain("sub(-1, -2)")
  })
})

describe("(c) --exit-on-question exits at the question", () => {
  test("exit 2 with T-1's question before T-2 merged (its executor still held)", () => {
    expect(early.code, early.stderr.slice(-3000)).toBe(2)
    expect(early.summary.status).toBe("waiting")
    expect(early.summary.questions.map((q: any) => q.questionId)).toEqual([questionId])
    expect(early.summary.answerWith).toEqual([{ questionId, command: expect.stringContaining(`--resume --yes --exit-on-question --scripted`) }])
    expect(early.summary.meanwhile).toEqual({ merged: [] })
    expect(early.events.filter((e) => e.type === "merge.succeeded")).toEqual([])
    expect(early.events.filter((e) => e.type === "worker.reported" && e.taskId === "T-2")).toEqual([])
    expect(early.summary.tasks.find((t: any) => t.id === "T-2").state).toBe("running")
  })
})
