import { execFileSync } from "node:child_process"
import { beforeAll, describe, expect, test } from "vitest"
import { passingReviewer, planningArchitect, runScenario, trivialProject, writeAndReport, type RunResult } from "../support/runs"
import { makeSandbox } from "../support/sandbox"
import { SUBMIT_NUDGE } from "../../src/cli/run"

/**
 * Headless, the engine that hosts the Scheduler lives as long as Main's turn. Two ways that turn ends
 * before the run does, each a real `aircoding run` (scripted model, real engine and git), side by side:
 * - Main ends its turn with text and no tool call while the task is still at work: it is started again on
 *   the run's log and follows it to the end: exit 0, the task merged once, the restart in the notes;
 * - the provider refuses Main's first request for good (401): nothing can start, so no second try; exit 1
 *   in seconds, with the refusal in words, never the engine's JSON;
 * - Main answers in words and starts nothing: it is told once to call air_submit; a Main that then starts
 *   the run ends merged, exit 0; one that talks again ends in exit 1 saying so (exit 0 would tell CI the
 *   work was done).
 */
const requirement = "Write docs/usage.md."
const task = { id: "T-1", title: "Write the usage notes", kind: "docs", writeSet: [{ path: "docs/usage.md", action: "create" }], doneWhen: "docs/usage.md exists" }

const wandering = {
  name: "main-turn-ends",
  scripts: [
    // The first Main: submits, then ends its turn as a model may, with text and no tool call.
    { agent: "main", match: "^Write docs", steps: [{ tool: "air_submit", args: { requirement } }, { text: "Submitted. I will check on it later." }] },
    // The Main started again by `aircoding run`: told to resume, it listens until the run ends.
    { agent: "main", match: "^Resume the AirCoding run", steps: [{ tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    planningArchitect("One task: T-1 writes docs/usage.md.", [task]),
    // Slow enough that the first Main's turn is over before the task is.
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("docs/usage.md", "Run the app.\n", "usage notes").map((s, i) => (i === 0 ? { ...s, delayMs: 4_000 } : s)) },
    passingReviewer,
  ],
}

const refused = {
  name: "main-refused",
  scripts: [
    {
      agent: "main",
      steps: [{ httpError: { status: 401, body: { error: { message: "Incorrect API key provided.", type: "invalid_request_error", param: null, code: "invalid_api_key" } } } }],
    },
  ],
}

/** A Main that answers in words, and starts the run once told which tool to call. */
const nudgedOnce = {
  name: "main-nudged",
  scripts: [
    { agent: "main", match: "Call air_submit now", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "Done." }] },
    { agent: "main", match: "^Write docs", steps: [{ text: "I will write the usage notes." }] },
    planningArchitect("One task: T-1 writes docs/usage.md.", [task]),
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("docs/usage.md", "Run the app.\n", "usage notes") },
    passingReviewer,
  ],
}

/** A Main that answers in words and starts nothing, told or not. */
const talking = { name: "main-talks", scripts: [{ agent: "main", steps: [{ text: "Sure, docs are a good idea." }] }] }

let resumed: RunResult
let refusal: RunResult
let talk: RunResult
let nudged: RunResult
let resumedProject: string

beforeAll(async () => {
  const sandbox = makeSandbox("air-main-ends-")
  resumedProject = trivialProject(sandbox, { "README.md": "# App\n" }, {}, "wandering")
  const refusedProject = trivialProject(sandbox, { "README.md": "# App\n" }, {}, "refused")
  const talkingProject = trivialProject(sandbox, { "README.md": "# App\n" }, {}, "talking")
  const nudgedProject = trivialProject(sandbox, { "README.md": "# App\n" }, {}, "nudged")
  ;[resumed, refusal, talk, nudged] = await Promise.all([
    runScenario(sandbox, resumedProject, wandering, { input: requirement, name: "wandering" }),
    runScenario(sandbox, refusedProject, refused, { input: requirement, name: "refused" }),
    runScenario(sandbox, talkingProject, talking, { input: requirement, name: "talking" }),
    runScenario(sandbox, nudgedProject, nudgedOnce, { input: requirement, name: "nudged" }),
  ])
}, 600_000)

describe("Main's turn ends before the run does", () => {
  test("text with no tool call mid-run: Main is started again and the run ends merged, exit 0", () => {
    expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0)
    expect(resumed.summary.tasks.map((t: { id: string; state: string }) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(resumed.events.filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)).toEqual(["T-1"])
    expect(resumed.summary.notes.join(" ")).toMatch(/^the main agent ended its turn without following the run; the run was still at work \(\w+\), so the main agent was started again/)
    expect(execFileSync("git", ["show", "main:docs/usage.md"], { cwd: resumedProject, encoding: "utf8" })).toBe("Run the app.\n")
    // Two Mains: the one that wandered off and the one started on the log.
    const mains = resumed.modelLog.filter((r) => r.agent === "main").map((r) => String(r.lastUser ?? "").slice(0, 20))
    expect(mains.some((u) => u.startsWith("Resume the AirCod"))).toBe(true)
  })

  test("the provider refuses Main's first request for good: exit 1 at once, said in words, and Main is not asked again", () => {
    expect(refusal.code).toBe(1)
    expect(refusal.summary.errors).toEqual(["the main agent's model request failed: the credentials were refused (Incorrect API key provided.)"])
    expect(refusal.stdout + refusal.stderr).not.toMatch(/"name":"APIError"|\\"/)
    expect(refusal.modelLog.filter((r) => r.agent === "main")).toHaveLength(1)
    expect(refusal.events).toEqual([])
  })

  const nudgeNote = "the main agent ended its turn without starting a run, so it was told once to call air_submit"

  test("Main answers in words and starts no run: told once to call air_submit, it starts the run, which merges", () => {
    expect(nudged.code, nudged.stderr.slice(-2000)).toBe(0)
    expect(nudged.summary.tasks.map((t: { id: string; state: string }) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(nudged.summary.notes).toContain(nudgeNote)
    // The requirement the run was given is the person's, without the nudge.
    expect(nudged.events.find((e) => e.type === "run.started")?.requirement).toBe(requirement)
  })

  test("Main answers in words and starts no run, even when told: exit 1 saying so, never exit 0 for work not done", () => {
    expect(talk.code).toBe(1)
    expect(talk.summary.errors).toEqual(["the main agent ended its turn without starting a run; it said: Sure, docs are a good idea."])
    expect(talk.summary.notes).toEqual([nudgeNote])
    expect(talk.modelLog.filter((r) => r.agent === "main").map((r) => String(r.lastUser).includes(SUBMIT_NUDGE))).toEqual([false, true])
    expect(talk.events).toEqual([])
  })
})
