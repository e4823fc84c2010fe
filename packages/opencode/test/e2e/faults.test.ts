import { spawn, type ChildProcess } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, writeAndReport, type RunResult, planningArchitect } from "../support/runs"

/**
 * Faults of the runtime with the real binary: each ends in a clear state — the task blocked with a
 * question naming the cause — and the run ends (exit 2), never hangs.
 * 1. toolchain.json is made invalid by a person while T-1 is at work: its gates cannot run (gates.errored),
 *    and the final check of the blocked run cannot either (finalCheck.done errored).
 * 2. the model answers the reviewer with an error (no script for it: HTTP 400): a refusal waiting cannot cure,
 *    so no fresh session repeats it — the task is blocked at once with one question that says it in words
 *    and lists the answers (session.errored once, with the provider's class).
 * 3. one run, three faults in turn: the executor's model sends calls that do not match their tool's schema
 *    and a call to a tool its role does not have (each time the worker is told, the run goes on), then stops
 *    answering past the inactivity timeout (retried in a fresh session); then the merge lock is held by a
 *    live process past the merge's lock timeout (blocked, the question names the holder's pid); the holder
 *    goes, the user answers, the merge is retried and lands (exit 0).
 */
const requirement = "Write a note."
const tasks = [{ id: "T-1", title: "Write the note", kind: "docs", writeSet: [{ path: "note.md", action: "create" }], doneWhen: "note.md exists" }]
const main = { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "T-1 is blocked; I asked you how to go on." }] }
const architect = planningArchitect("One note.", tasks)
const executor = { agent: "executor", match: "^Task T-1:", steps: writeAndReport("note.md", "note\n", "the note") }

let sandbox: Sandbox
let toolchainRun: RunResult
let toolchainFile: string
let reviewerRun: RunResult
let modelRun: RunResult
let holder: ChildProcess | undefined

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

  const third = trivialProject(sandbox, { "README.md": "# Notes\n" }, {}, "model")
  const thirdEvents = join(third, ".air/local/state/events.jsonl")
  // A live process takes the merge lock once T-1 is at work (a run does not start while it is held), and
  // goes when the merge has blocked on it; the user answers after that.
  holder = spawn("sleep", ["600"], { stdio: "ignore" })
  const lockWatch = setInterval(() => {
    const log = existsSync(thirdEvents) ? readFileSync(thirdEvents, "utf8") : ""
    const lockFile = join(third, ".air/local/state/merge.lock")
    if (log.includes('"task.dispatched"') && !existsSync(lockFile) && !log.includes('"merge.blocked"'))
      writeFileSync(lockFile, JSON.stringify({ pid: holder!.pid, host: hostname(), at: new Date().toISOString(), token: randomUUID(), what: "a person's merge" }))
    if (log.includes('"merge.blocked"')) {
      holder!.kill("SIGKILL")
      clearInterval(lockWatch)
    }
  }, 50)
  const patientMain = {
    agent: "main",
    steps: [
      { tool: "air_submit", args: { requirement } },
      { tool: "air_listen", args: {}, until: "QUESTION T-1:blocked:1" },
      { tool: "air_answer", args: { questionId: "T-1:blocked:1", answer: "The other merge is over; merge again." }, delayMs: 3000 },
      // The blocked run's end was told before the answer reopened it: wait for the end after the merge.
      { tool: "air_listen", args: {}, until: "RUN ENDED: done" },
      { text: "Merged." },
    ],
  }
  const confused = {
    name: "confused",
    agent: "executor",
    match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)",
    steps: [
      { tool: "write", args: { filePath: "note.md" } },
      { tool: "air_report", args: { sumary: "a misspelt key" } },
      { tool: "air_plan", args: { tasks: [] }, allowUnoffered: true },
      { tool: "bash", args: { command: "true", description: "think" }, delayMs: 24_000 },
      { text: "never reached" },
    ],
  }
  const fresh = { agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)", steps: writeAndReport("note.md", "note\n", "the note") }
  try {
    modelRun = await runScenario(sandbox, third, { name: "faults-model", scripts: [patientMain, architect, confused, fresh, passingReviewer] }, { input: requirement, name: "model", env: { AIRCODING_INACTIVITY_MS: "15000", AIRCODING_MERGE_LOCK_MS: "3000" } })
  } finally {
    clearInterval(lockWatch)
  }
}, 900_000)

afterAll(() => {
  holder?.kill("SIGKILL")
  sandbox?.cleanup()
})

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
  test("the review session's 400 is not retried: T-1 is blocked at once, the question says it in words (exit 2)", () => {
    expect(reviewerRun.code, reviewerRun.stderr.slice(-3000)).toBe(2)
    const errored = reviewerRun.events.filter((e) => e.type === "session.errored")
    expect(errored.map((e) => [e.taskId, e.fault?.class])).toEqual([["T-1", "bad-request"]])
    expect(reviewerRun.summary.questions).toHaveLength(1)
    const [question] = reviewerRun.summary.questions
    expect(question.questionId).toMatch(/^T-1:/)
    expect(question.text).toMatch(/^The model provider refused the Reviewer's request for T-1: it refused the request as invalid .*Answer 'retry'/)
    expect(question.text).not.toMatch(/[{}]|\\"/)
  })

  test("the blocked run still gets its final check, which passes", () => {
    expect(reviewerRun.events.filter((e) => e.type === "finalCheck.done").map((e) => e.status)).toEqual(["passed"])
  })
})

describe("the model misbehaves, then the merge lock is held by a live process", () => {
  const confusedTurns = () => modelRun.modelLog.filter((l) => l.agent === "executor" && l.script === "confused")

  test("the run ends done: T-1 merged once (exit 0)", () => {
    expect(modelRun.code, modelRun.stderr.slice(-3000)).toBe(0)
    expect(modelRun.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(modelRun.events.filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)).toEqual(["T-1"])
  })

  test("calls that do not match the schema, and a tool the role does not have: the worker is told each time and goes on", () => {
    const told = confusedTurns().map((l) => l.lastToolResult)
    expect(told[1]).toMatch(/write tool was called with invalid arguments[\s\S]*content/)
    expect(told[2]).toMatch(/Report refused: .*summary/)
    expect(told[3]).toMatch(/unavailable tool 'air_plan'/)
    expect(confusedTurns().map((l) => l.step)).toEqual([0, 1, 2, 3])
  })

  test("the model stops answering: the inactivity timer fires once and a fresh session does the work", () => {
    expect(modelRun.events.filter((e) => e.type === "timer.fired").map((e) => [e.taskId, e.kind])).toEqual([["T-1", "inactivity"]])
    const dispatched = modelRun.events.filter((e) => e.type === "task.dispatched")
    expect(dispatched.map((e) => e.attempt)).toEqual([1, 2])
    expect(dispatched[0].sessionId).not.toBe(dispatched[1].sessionId)
  })

  test("the merge lock held past its timeout blocks T-1 with a question naming the holder's pid; the answer retries the merge", () => {
    const blocked = modelRun.events.filter((e) => e.type === "merge.blocked")
    expect(blocked.map((e) => [e.taskId, e.tag])).toEqual([["T-1", "lock-timeout"]])
    expect(blocked[0].message).toContain(`process ${holder!.pid}`)
    const types = modelRun.events.map((e) => e.type)
    expect(types.indexOf("question.answered")).toBeGreaterThan(types.indexOf("merge.blocked"))
    expect(types.lastIndexOf("merge.started")).toBeGreaterThan(types.indexOf("question.answered"))
  })
})
