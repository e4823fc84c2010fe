import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { foldEvents } from "../../src/scheduler/core/fold"
import { questionText } from "../../src/text/question-text"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { commitStep, passingReviewer, runScenario, trivialProject, type RunResult, planningArchitect } from "../support/runs"
import { CALC_CPP, CALC_H, CALC_TEST_CPP, CMAKELISTS } from "../runtime/cpp-repo"

/**
 * Issue 38, item 3, with the real binary, real cmake, g++ and ctest: the model provider answers a worker's or a
 * reviewer's request with its context-length error (HTTP 400, context_length_exceeded).
 * 1. Once at the Executor (after it committed half the work), once at the Debugger (after it reproduced the
 *    failing test), once at the Reviewer: each time a fresh session of the same role goes on from the task's
 *    context pack and what the worktree holds (the diff so far, the gate failure, the Debugger's steps), and the
 *    run merges with no question.
 * 2. At the Executor, then again at its fresh session: one question, in words, with what to do next.
 */
const requirement = "Add mul(a, b) to the calculator, with a test."
const tasks = [
  {
    id: "T-1",
    title: "Add mul",
    kind: "test",
    writeSet: [
      { path: "include/calc.h", action: "modify" },
      { path: "src/calc.cpp", action: "modify" },
      { path: "test/calc_test.cpp", action: "modify" },
    ],
    doneWhen: "mul(a, b) returns a * b and calc_test checks it",
  },
]
const TOOLCHAIN = { build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"], test: ["ctest --test-dir .air-build --output-on-failure"] }
const FILES = { "CMakeLists.txt": CMAKELISTS, "include/calc.h": CALC_H, "src/calc.cpp": CALC_CPP, "test/calc_test.cpp": CALC_TEST_CPP }
const CHECK = "cmake -S . -B .air-build -G Ninja >/dev/null && cmake --build .air-build >/dev/null && ctest --test-dir .air-build --output-on-failure"
const PROVIDER_MESSAGE = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens. Please reduce the length of the messages."
const overflow = { httpError: { status: 400, body: { error: { message: PROVIDER_MESSAGE, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } } } }
const FRESH = "ran out of the model's context"

/** The Executor's first half: mul declared and (wrongly) defined, committed; then its context overflows. */
const halfExecutor = {
  name: "executor-overflows",
  agent: "executor",
  match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)",
  steps: [
    { tool: "edit", args: { filePath: "include/calc.h", oldString: "int sub(int a, int b);", newString: "int sub(int a, int b);\nint mul(int a, int b);" } },
    { tool: "edit", args: { filePath: "src/calc.cpp", oldString: "int sub(int a, int b) {", newString: "int mul(int a, int b) {\n  return a + b;\n}\n\nint sub(int a, int b) {" } },
    commitStep("declare and define mul"),
    overflow,
  ],
}
const merged = {
  name: "scenario-merges",
  scripts: [
    {
      agent: "main",
      steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }],
    },
    planningArchitect("One task.", tasks),
    halfExecutor,
    {
      // The fresh Executor is told why it is fresh and sees the diff so far: it adds the test only.
      name: "executor-fresh",
      agent: "executor",
      match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)",
      steps: [
        {
          tool: "edit",
          args: { filePath: "test/calc_test.cpp", oldString: '  check("sub(5, 3)", sub(5, 3), 2);', newString: '  check("sub(5, 3)", sub(5, 3), 2);\n  check("mul(2, 3)", mul(2, 3), 6);' },
          expect: { lastUserIncludes: [FRESH, "The task's diff so far", "+int mul(int a, int b) {", "declare and define mul"] },
        },
        commitStep("test mul"),
        { tool: "air_report", args: { summary: "Added mul and its check." } },
        { text: "Reported." },
      ],
    },
    {
      // The Debugger reproduces the failing check, then its context overflows.
      name: "debugger-overflows",
      agent: "debugger",
      match: "^Task T-1:[\\s\\S]*\\(attempt 3\\)",
      steps: [{ tool: "bash", args: { command: CHECK, description: "reproduce the failing test" } }, overflow],
    },
    {
      name: "debugger-fresh",
      agent: "debugger",
      match: "^Task T-1:[\\s\\S]*\\(attempt 4\\)",
      steps: [
        { tool: "bash", args: { command: CHECK, description: "reproduce the failing test" }, expect: { lastUserIncludes: [FRESH, "The steps the previous Debugger session took", "ctest --test-dir .air-build"] } },
        { tool: "edit", args: { filePath: "src/calc.cpp", oldString: "int mul(int a, int b) {\n  return a + b;", newString: "int mul(int a, int b) {\n  return a * b;" } },
        { tool: "bash", args: { command: CHECK, description: "verify: the test passes" } },
        commitStep("mul multiplies"),
        {
          tool: "air_report",
          args: {
            summary: "mul added instead of multiplying; it multiplies now.",
            debug: {
              symptom: "calc_test fails: mul(2, 3) expected 6, got 5",
              reproduction: { command: CHECK, output: "FAIL: mul(2, 3): expected 6, got 5" },
              rootCause: { file: "src/calc.cpp", line: 4, explanation: "mul returned a + b" },
              fix: "mul returns a * b",
              verification: { command: CHECK, output: "100% tests passed" },
              pattern: "none",
            },
          },
        },
        { text: "Fixed." },
      ],
    },
    {
      name: "reviewer-fresh",
      agent: "reviewer",
      match: `^Review task (?<id>T-1):[\\s\\S]*${FRESH}`,
      steps: passingReviewer.steps,
    },
    { name: "reviewer-overflows", agent: "reviewer", match: "^Review task T-1:", steps: [overflow] },
  ],
}

const asked = {
  name: "scenario-asks",
  scripts: [
    {
      agent: "main",
      steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "T-1 is too large for the model; I asked you." }],
    },
    planningArchitect("One task.", tasks),
    halfExecutor,
    { name: "executor-fresh-overflows", agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)", steps: [overflow] },
  ],
}

let sandbox: Sandbox
let mergedProject: string
let runMerged: RunResult
let runAsked: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-overflow-")
  mergedProject = trivialProject(sandbox, FILES, TOOLCHAIN, "merges")
  const askedProject = trivialProject(sandbox, FILES, TOOLCHAIN, "asks")
  // Two runs at once: each is mostly waiting on its engine and its scripted model.
  ;[runMerged, runAsked] = await Promise.all([
    runScenario(sandbox, mergedProject, merged, { input: requirement, name: "merges" }),
    runScenario(sandbox, askedProject, asked, { input: requirement, name: "asks" }),
  ])
}, 900_000)

afterAll(() => sandbox?.cleanup())

const types = (r: RunResult, ...only: string[]) => r.events.filter((e) => only.includes(e.type))

describe("one context overflow at the Executor, the Debugger and the Reviewer: fresh sessions, no question", () => {
  test("the run ends done with T-1 merged, and nobody was asked", () => {
    expect(runMerged.code, runMerged.stderr.slice(-3000)).toBe(0)
    expect(runMerged.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(runMerged.summary.questions ?? []).toEqual([])
    expect(types(runMerged, "question.answered", "worker.failed", "session.errored")).toEqual([])
    expect(execFileSync("git", ["show", "main:src/calc.cpp"], { cwd: mergedProject, encoding: "utf8" })).toContain("return a * b;")
  })

  test("the log says what happened: each overflow, then the fresh session with what it carried", () => {
    const story = types(runMerged, "task.dispatched", "review.started", "session.overflowed", "session.refreshed", "gates.failed", "merge.succeeded").map((e) =>
      e.type === "task.dispatched" ? `${e.role}:${e.attempt}` : e.type === "session.overflowed" || e.type === "session.refreshed" ? `${e.type}:${e.role}` : e.type,
    )
    expect(story).toEqual([
      "executor:1",
      "session.overflowed:executor",
      "executor:2",
      "session.refreshed:executor",
      "gates.failed",
      "debugger:3",
      "session.overflowed:debugger",
      "debugger:4",
      "session.refreshed:debugger",
      "review.started",
      "session.overflowed:reviewer",
      "review.started",
      "session.refreshed:reviewer",
      "merge.succeeded",
    ])
    const refreshed = types(runMerged, "session.refreshed")
    expect(refreshed[0].carried).toMatchObject({ diffFiles: 2, diffCut: false, gateFailure: false, steps: 0 })
    expect(refreshed[1].carried).toMatchObject({ diffFiles: 3, gateFailure: true, steps: 1 })
    expect(refreshed[2].carried).toMatchObject({ diffFiles: 3 })
    for (const e of types(runMerged, "session.overflowed")) expect(e.message).toBe(PROVIDER_MESSAGE)
  })

  test("no repair and no stall was spent on an overflow: one repair, for the failing test", () => {
    const { state } = foldEvents(runMerged.events)
    const t = state.tasks.find((x) => x.id === "T-1")!
    expect([t.repairs, t.stalls]).toEqual([1, 0])
  })
})

describe("the Executor's fresh session overflows too: one clear question", () => {
  test("the run waits on one question for T-1 (exit 2), and the model was asked no more", () => {
    expect(runAsked.code, runAsked.stderr.slice(-3000)).toBe(2)
    expect(types(runAsked, "session.overflowed").map((e) => e.role)).toEqual(["executor", "executor"])
    expect(types(runAsked, "session.refreshed")).toHaveLength(1)
    const executor = runAsked.modelLog.filter((l) => l.agent === "executor").map((l) => l.script)
    expect(executor.filter((s) => s === "executor-fresh-overflows")).toHaveLength(1)
    expect(executor.at(-1)).toBe("executor-fresh-overflows")
  })

  test("the question says what happened and what to do next, in English and in Chinese", () => {
    const { state, refused } = foldEvents(runAsked.events)
    expect(refused).toEqual([])
    expect(state.questions).toHaveLength(1)
    const q = state.questions[0]!
    const said = PROVIDER_MESSAGE.replace(/\.$/, "")
    expect(q.text).toBe(
      `The Executor's session for T-1 ran out of the model's context again: a fresh session started from the task's context pack and its worktree overflowed too (${said}). The task is likely too large for one session: split it with a requirement change or use a model with a longer context. Answer 'retry' or 'skip T-1'.`,
    )
    expect(runAsked.summary.questions).toMatchObject([{ questionId: q.questionId, text: q.text }])
    expect(questionText(q, "zh-CN")).toBe(
      `执行者的会话（任务 T-1）再次超出了模型的上下文长度：从任务的上下文包和工作树重新开始的新会话也超出了（${said}）。这个任务对一个会话来说可能太大：请通过需求变更拆分它，或换用上下文更长的模型，然后回答 「retry」 或 「skip T-1」。`,
    )
  })
})
