import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { commitStep, runScenario, trivialProject, writeAndReport, type RunResult, submittingMain, planningArchitect } from "../support/runs"

/**
 * The design loop closing from the field, two real runs on tiny docs/test repositories:
 * - replan: T-1's executor finds the plan wrong (a missing dependency) and says so in air_report's
 *   planIssue; the Architect is consulted first and answers with a plan delta (a new task T-0, T-1 now
 *   depends on it); T-0 runs, T-1 runs again, both merge, and the user is never asked.
 * - review: T-1's reviewer says "pass" but its C++ checklist has an integer-overflow finding at a file and
 *   line: the merge is refused and the executor repairs it; T-2's reviewer says block-release: the merge
 *   stops and the Architect (not the scheduler agent) decides; the executor reworks it and it merges.
 */
const checklist = (overrides: Record<string, unknown> = {}) => ({
  lifetimes: { status: "not-applicable" },
  rawPointers: { status: "not-applicable" },
  concurrency: { status: "not-applicable" },
  exceptions: { status: "not-applicable" },
  integerOverflow: { status: "checked", note: "no arithmetic beyond int range" },
  undefinedBehaviour: { status: "checked" },
  loggingKeyPaths: { status: "not-applicable" },
  loggingFormat: { status: "not-applicable" },
  ...overrides,
})
const row = { designRef: "{{id}}: done when", code: "the diff of {{id}}", status: "match", note: "" }
const reviewer = (match: string, args: Record<string, unknown>) => ({
  agent: "reviewer",
  match,
  steps: [{ tool: "air_diff", args: {} }, { tool: "air_review", args: { rows: [row], findings: [], checklist: checklist(), ...args } }, { text: "Reviewed {{id}}." }],
})
/** Every phase, the last included, may end with the Architect's milestone review. */
const milestone = { agent: "architect", match: "^Milestone review of phase 1\\.", steps: [{ tool: "air_milestone", args: { phase: 1, verdict: "pass", findings: [] } }, { text: "Pass." }] }

const replanRequirement = "Write a usage guide that links a glossary of the terms."
const replan = {
  name: "field-replan",
  scripts: [
    submittingMain(replanRequirement),
    planningArchitect("As listed.", [{ id: "T-1", title: "Write the usage guide", kind: "docs", writeSet: [{ path: "docs/usage.md", action: "create" }], doneWhen: "docs/usage.md explains usage and links docs/glossary.md" }]),
    {
      agent: "architect",
      match: "^Consult on task T-1:",
      steps: [
        {
          tool: "air_delta",
          args: {
            delta: {
              schemaVersion: 1,
              add: [{ id: "T-0", title: "Write the glossary", kind: "docs", writeSet: [{ path: "docs/glossary.md", action: "create" }], doneWhen: "docs/glossary.md defines every term the guide uses" }],
              modify: [{ id: "T-1", patch: { deps: ["T-0"] } }],
            },
          },
          expect: { lastUserIncludes: ["finds the plan wrong (missing-dependency)", "docs/glossary.md", "air_delta"] },
        },
        { text: "Added T-0 before T-1." },
      ],
    },
    milestone,
    {
      agent: "executor",
      match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)",
      steps: [
        { tool: "air_report", args: { summary: "Stopped before writing.", planIssue: { kind: "missing-dependency", detail: "docs/usage.md must link docs/glossary.md, which no task writes: a glossary task must come first" } } },
        { text: "Reported the plan issue." },
      ],
    },
    { agent: "executor", match: "^Task T-0:", steps: writeAndReport("docs/glossary.md", "# Glossary\n\n- run: one requirement carried out\n", "Write the glossary") },
    { agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)", steps: writeAndReport("docs/usage.md", "# Usage\n\nStart a run (see [glossary](glossary.md)).\n", "Write the usage guide") },
    reviewer("^Review task (?<id>T-[01]):", { verdict: "pass" }),
  ],
}

const reviewRequirement = "Test calc::mul at the int limits and document it."
const overflowing = '#include "calc.h"\nint main() { const int big = 2147483647; return calc::mul(big, 2) == big * 2 ? 0 : 1; }\n'
const fixed = '#include "calc.h"\nint main() { const int big = 1073741823; return calc::mul(big, 2) == 2147483646 ? 0 : 1; }\n'
const review = {
  name: "field-review",
  scripts: [
    submittingMain(reviewRequirement),
    planningArchitect("As listed.", [
      { id: "T-1", title: "Test calc::mul at the int limits", kind: "test", writeSet: [{ path: "tests/test_mul.cpp", action: "create" }], doneWhen: "tests/test_mul.cpp checks mul next to INT_MAX without overflowing" },
      { id: "T-2", title: "Document calc::mul", kind: "docs", writeSet: [{ path: "docs/mul.md", action: "create" }], doneWhen: "docs/mul.md documents calc::mul as declared" },
    ]),
    {
      agent: "architect",
      match: "^Consult on task T-2:",
      steps: [
        { tool: "air_decide", args: { choice: "executor-again", reason: "there is no alias: document calc::mul only" }, expect: { lastUserIncludes: ["blocks its release", "calc::times"] } },
        { text: "Decided." },
      ],
    },
    milestone,
    { agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)", steps: writeAndReport("tests/test_mul.cpp", overflowing, "Test mul at INT_MAX") },
    {
      agent: "executor",
      match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)",
      steps: [
        { tool: "write", args: { filePath: "tests/test_mul.cpp", content: fixed }, expect: { lastUserIncludes: ["checklist integer overflow: tests/test_mul.cpp:2"] } },
        commitStep("Test mul below INT_MAX without overflow"),
        { tool: "air_report", args: { summary: "The expected value no longer overflows." } },
        { text: "Reported." },
      ],
    },
    { agent: "executor", match: "^Task T-2:[\\s\\S]*\\(attempt 1\\)", steps: writeAndReport("docs/mul.md", "# calc::mul\n\nAlso callable as calc::times.\n", "Document mul") },
    { agent: "executor", match: "^Task T-2:[\\s\\S]*\\(attempt 2\\)", steps: writeAndReport("docs/mul.md", "# calc::mul\n\nReturns a * b.\n", "Document mul without the alias") },
    // Second reviews see what the first one found; they pass.
    reviewer("^Review task (?<id>T-[12]):[\\s\\S]*an earlier review found", { verdict: "pass" }),
    reviewer("^Review task (?<id>T-1):", {
      verdict: "pass",
      checklist: checklist({ integerOverflow: { status: "finding", file: "tests/test_mul.cpp", line: 2, note: "big * 2 overflows int: the test itself has undefined behaviour" } }),
    }),
    reviewer("^Review task (?<id>T-2):", {
      verdict: "block-release",
      rows: [{ designRef: "ADR-1: no aliases in namespace calc", code: "docs/mul.md", status: "divergent", note: "" }],
      findings: ["docs/mul.md documents calc::times, which does not exist"],
    }),
  ],
}

let sandbox: Sandbox
let a: RunResult
let b: RunResult
let reviewProject: string

beforeAll(async () => {
  sandbox = makeSandbox("air-field-")
  const replanProject = trivialProject(sandbox, { "README.md": "# Tool\n" }, {}, "replan")
  reviewProject = trivialProject(sandbox, { "README.md": "# calc\n", "include/calc.h": "namespace calc { int mul(int a, int b); }\n" }, {}, "review")
  ;[a, b] = await Promise.all([
    runScenario(sandbox, replanProject, replan, { input: replanRequirement, name: "replan" }),
    runScenario(sandbox, reviewProject, review, { input: reviewRequirement, name: "review" }),
  ])
}, 900_000)

afterAll(() => sandbox?.cleanup())

const failures = (r: RunResult) => r.modelLog.filter((l) => l.failure).map((l) => `${l.agent}/${l.script}#${l.step}: ${l.failure}`)

describe("a worker's plan issue reaches the Architect, who replans without the user", () => {
  test("the run finishes done: T-0 (added by the Architect) and T-1 merged", () => {
    expect(failures(a)).toEqual([])
    expect(a.code, a.stderr.slice(-3000)).toBe(0)
    expect(a.summary.status).toBe("done")
    expect(a.summary.tasks.map((t: any) => [t.id, t.state]).sort()).toEqual([["T-0", "merged"], ["T-1", "merged"]])
  })

  test("report with planIssue → consult.replanned → T-0 → T-1 again; no question, no scheduler agent", () => {
    const story = a.events
      .filter((e) => ["worker.reported", "consult.replanned", "task.dispatched", "merge.succeeded", "question.answered", "consult.answered"].includes(e.type))
      .map((e) => (e.type === "task.dispatched" ? `${e.taskId}:${e.role}:${e.attempt}` : e.type === "worker.reported" ? `${e.taskId}:${e.result.planIssue ? `planIssue:${e.result.planIssue.kind}` : "report"}` : `${e.type}${e.taskId ? `:${e.taskId}` : ""}`))
    expect(story).toEqual(["T-1:executor:1", "T-1:planIssue:missing-dependency", "consult.replanned:T-1", "T-0:executor:1", "T-0:report", "merge.succeeded:T-0", "T-1:executor:2", "T-1:report", "merge.succeeded:T-1"])
    expect(a.modelLog.filter((l) => l.agent === "scheduler")).toEqual([])
    expect(a.modelLog.filter((l) => l.agent === "main" && /QUESTION/.test(l.lastToolResult ?? ""))).toEqual([])
    const graph = a.events.find((e) => e.type === "consult.replanned").delta
    expect(graph.modify).toEqual([{ id: "T-1", patch: { deps: ["T-0"] } }])
  })
})

describe("the reviewer's checklist and block-release", () => {
  test("the run finishes done with both tasks merged, the overflow fixed", () => {
    expect(failures(b)).toEqual([])
    expect(b.code, b.stderr.slice(-3000)).toBe(0)
    expect(b.summary.status).toBe("done")
    expect(b.summary.tasks.map((t: any) => [t.id, t.state]).sort()).toEqual([["T-1", "merged"], ["T-2", "merged"]])
    expect(execFileSync("git", ["show", "main:tests/test_mul.cpp"], { cwd: reviewProject, encoding: "utf8" })).toBe(fixed)
    expect(execFileSync("git", ["show", "main:docs/mul.md"], { cwd: reviewProject, encoding: "utf8" })).not.toContain("calc::times")
  })

  const storyOf = (id: string) =>
    b.events
      .filter((e) => e.taskId === id && ["task.dispatched", "review.reported", "consult.answered", "merge.started"].includes(e.type))
      .map((e) => (e.type === "task.dispatched" ? `${e.role}:${e.attempt}` : e.type === "review.reported" ? `review:${e.report.verdict}` : e.type === "consult.answered" ? `${e.by}:${e.choice}` : e.type))

  test("a checklist finding under a pass verdict blocks the merge: back to the executor, then merged", () => {
    expect(storyOf("T-1")).toEqual(["executor:1", "review:pass", "executor:2", "review:pass", "merge.started"])
    const first = b.events.find((e) => e.type === "review.reported" && e.taskId === "T-1").report
    expect(first.checklist.integerOverflow).toMatchObject({ status: "finding", file: "tests/test_mul.cpp", line: 2 })
  })

  test("block-release stops the merge and consults the Architect, never the scheduler agent", () => {
    expect(storyOf("T-2")).toEqual(["executor:1", "review:block-release", "architect:executor-again", "executor:2", "review:pass", "merge.started"])
    expect(b.modelLog.filter((l) => l.agent === "scheduler")).toEqual([])
  })
})
