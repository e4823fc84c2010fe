import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { commitStep, passingReviewer, runScenario, trivialProject, type RunResult, planningArchitect } from "../support/runs"

/**
 * A repair budget spent: T-1's test gate keeps failing (the toolchain's tests refuse the words BAD and TODO,
 * one check each), the Debugger's one repair (AIRCODING_REPAIR_BUDGET=1) — in its steps: the failing check
 * reproduced, BAD removed, the check green again — is not enough (the next check fails on TODO), so the
 * Scheduler consults the scheduler agent; it cannot settle it ("block"), so the Architect is consulted; it cannot either; Main
 * asks the user the one question, answers it with air_answer, the task runs again with the answer in its
 * prompt, merges, and the run finishes.
 */
const requirement = "Write the release notes."
const tasks = [{ id: "T-1", title: "Write the release notes", kind: "test", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists and the notes check passes" }]
const answer = "Never write the words BAD or TODO in the notes."
/** The toolchain's two test commands: the gate stops at the first that fails. */
const NO_BAD = "if grep -q BAD notes.md; then echo 'notes.md contains BAD' >&2; exit 1; fi"
const NO_TODO = "if grep -q TODO notes.md; then echo 'notes.md contains TODO' >&2; exit 1; fi"
const scenario = {
  name: "consult",
  scripts: [
    {
      agent: "main",
      steps: [
        { tool: "air_submit", args: { requirement } },
        { tool: "air_listen", args: {}, until: "QUESTION T-1:blocked:1" },
        { tool: "air_answer", args: { questionId: "T-1:blocked:1", answer } },
        { tool: "air_listen", args: {}, until: "RUN ENDED: done" },
        { text: "Done." },
      ],
    },
    planningArchitect("One task.", tasks),
    {
      agent: "executor",
      match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)",
      steps: [{ tool: "write", args: { filePath: "notes.md", content: "BAD notes\nTODO: more\n" } }, commitStep("notes"), { tool: "air_report", args: { summary: "Wrote the notes." } }, { text: "Reported." }],
    },
    {
      agent: "debugger",
      match: "^Task T-1:",
      steps: [
        { tool: "bash", args: { command: NO_BAD, description: "reproduce the failing check" }, expect: { lastUserIncludes: ["notes.md contains BAD"] } },
        { tool: "edit", args: { filePath: "notes.md", oldString: "BAD notes", newString: "Good notes" } },
        { tool: "bash", args: { command: NO_BAD, description: "verify: the check passes" } },
        commitStep("no BAD in the notes"),
        {
          tool: "air_report",
          args: {
            summary: "The check refused the word BAD; the notes no longer say it.",
            debug: {
              symptom: "the test gate fails: notes.md contains BAD",
              reproduction: { command: NO_BAD, output: "notes.md contains BAD" },
              rootCause: { file: "notes.md", line: 1, explanation: "the first line says BAD, which the check refuses" },
              fix: "the first line says Good notes",
              verification: { command: NO_BAD, output: "(no output, exit 0)" },
              pattern: "none",
            },
          },
        },
        { text: "Reported." },
      ],
    },
    { agent: "scheduler", match: "^Consult on task T-1:", steps: [{ tool: "air_decide", args: { choice: "block", reason: "the test gate failed twice" } }, { text: "Decided." }] },
    {
      agent: "architect",
      match: "^Consult on task T-1:",
      steps: [
        { tool: "air_decide", args: { choice: "block", reason: "the requirement does not say what the check wants; the user must" }, expect: { lastUserIncludes: ["the scheduler agent chose not to decide: the test gate failed twice", "notes.md contains TODO"] } },
        { text: "Decided." },
      ],
    },
    {
      agent: "executor",
      match: "^Task T-1:[\\s\\S]*\\(attempt 3\\)",
      steps: [
        { tool: "edit", args: { filePath: "notes.md", oldString: "TODO: more\n", newString: "" }, expect: { lastUserIncludes: [answer] } },
        commitStep("fix notes"),
        { tool: "air_report", args: { summary: "Rewrote the notes as the user asked." } },
        { text: "Reported." },
      ],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-consult-")
  project = trivialProject(sandbox, { "README.md": "# Notes\n" }, { test: [NO_BAD, NO_TODO] })
  r = await runScenario(sandbox, project, scenario, { input: requirement, env: { AIRCODING_REPAIR_BUDGET: "1" } })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("a spent repair budget: consult, then a question to the user, answered", () => {
  test("the run finishes done with T-1 merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(execFileSync("git", ["show", "main:notes.md"], { cwd: project, encoding: "utf8" })).toBe("Good notes\n")
  })

  test("executor, debugger, scheduler agent (block), Architect (block), question, answer, executor again", () => {
    const story = r.events
      .filter((e) => ["task.dispatched", "gates.failed", "consult.answered", "question.answered", "merge.succeeded"].includes(e.type))
      .map((e) => (e.type === "task.dispatched" ? `${e.role}:${e.attempt}` : e.type === "consult.answered" ? `${e.by}:${e.choice}` : e.type === "gates.failed" ? `failed:${e.gate}` : e.type))
    expect(story).toEqual(["executor:1", "failed:test", "debugger:2", "failed:test", "scheduler:block", "architect:block", "question.answered", "executor:3", "merge.succeeded"])
    expect(r.events.find((e) => e.type === "question.answered").answer).toBe(answer)
  })

  test("the scheduler agent and the Architect were asked once each; Main once per turn", () => {
    const by = (a: string) => r.modelLog.filter((l) => l.agent === a).length
    expect(by("scheduler")).toBe(2)
    // The Architect's plan (3 requests) and its consult (2); its final review is a session of its own.
    expect(r.modelLog.filter((l) => l.agent === "architect" && l.script !== "final-review")).toHaveLength(5)
    expect(r.modelLog.filter((l) => l.script === "final-review").length).toBeGreaterThanOrEqual(1)
    expect(by("main")).toBeGreaterThanOrEqual(5)
  })
})
