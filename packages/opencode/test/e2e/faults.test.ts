import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, writeAndReport, type RunResult } from "../support/runs"

/**
 * Faults of the runtime with the real binary: each ends in a clear state — the task blocked with a
 * question naming the cause — and the run ends (exit 2), never hangs.
 * 1. toolchain.json is made invalid by a person while T-1 is at work: its gates cannot run (gates.errored),
 *    and the final check of the blocked run cannot either (finalCheck.done errored).
 * 2. the model answers the reviewer with an error (no script for it: HTTP 400): the review session errors,
 *    is tried once more, then the task is blocked to resume at review (session.errored twice).
 */
const requirement = "Write a note."
const tasks = [{ id: "T-1", title: "Write the note", kind: "docs", writeSet: [{ path: "note.md", action: "create" }], doneWhen: "note.md exists" }]
const main = { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "T-1 is blocked; I asked you how to go on." }] }
const architect = { agent: "architect", match: "^Requirement:", steps: [{ tool: "air_propose", args: { summary: "One note." } }, { tool: "air_plan", args: { tasks } }, { text: "Planned." }] }
const executor = { agent: "executor", match: "^Task T-1:", steps: writeAndReport("note.md", "note\n", "the note") }

let sandbox: Sandbox
let toolchainRun: RunResult
let toolchainFile: string
let reviewerRun: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-faults-")
  const first = trivialProject(sandbox, { "README.md": "# Notes\n" }, {}, "toolchain")
  toolchainFile = join(first, ".air/shared/rules/toolchain.json")
  // The person edits the rules once T-1 is at work: a misspelt key.
  const events = join(first, ".air/local/state/events.jsonl")
  const watch = setInterval(() => {
    if (existsSync(events) && readFileSync(events, "utf8").includes('"task.dispatched"')) {
      writeFileSync(toolchainFile, JSON.stringify({ schemaVersion: 1, biuld: ["true"], test: ["true"] }))
      clearInterval(watch)
    }
  }, 50)
  try {
    toolchainRun = await runScenario(sandbox, first, { name: "faults-toolchain", scripts: [main, architect, executor, passingReviewer] }, { input: requirement, name: "toolchain" })
  } finally {
    clearInterval(watch)
  }
  const second = trivialProject(sandbox, { "README.md": "# Notes\n" }, {}, "reviewer")
  reviewerRun = await runScenario(sandbox, second, { name: "faults-reviewer", scripts: [main, architect, executor] }, { input: requirement, name: "reviewer" })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("toolchain.json made invalid mid-run", () => {
  test("T-1 is blocked with a question naming the file; the run ends blocked (exit 2)", () => {
    expect(toolchainRun.code, toolchainRun.stderr.slice(-3000)).toBe(2)
    expect(toolchainRun.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "blocked"]])
    expect(toolchainRun.summary.questions).toEqual([{ questionId: "T-1:blocked:1", text: expect.stringMatching(/gates could not run \(toolchain\): .*toolchain\.json/) }])
  })

  test("the log holds gates.errored, and the blocked run's final check as errored", () => {
    expect(toolchainRun.events.filter((e) => e.type === "gates.errored").map((e) => [e.taskId, e.tag])).toEqual([["T-1", "toolchain"]])
    expect(toolchainRun.events.filter((e) => e.type === "finalCheck.done").map((e) => e.status)).toEqual(["errored"])
  })
})

describe("the model answers the reviewer with an error", () => {
  test("the review session errors, is tried once more, then T-1 is blocked to resume at review (exit 2)", () => {
    expect(reviewerRun.code, reviewerRun.stderr.slice(-3000)).toBe(2)
    expect(reviewerRun.events.filter((e) => e.type === "session.errored").map((e) => e.taskId)).toEqual(["T-1", "T-1"])
    expect(reviewerRun.summary.questions).toEqual([{ questionId: "T-1:blocked:1", text: expect.stringMatching(/reviewer's session errored again/) }])
  })

  test("the blocked run still gets its final check, which passes", () => {
    expect(reviewerRun.events.filter((e) => e.type === "finalCheck.done").map((e) => e.status)).toEqual(["passed"])
  })
})
