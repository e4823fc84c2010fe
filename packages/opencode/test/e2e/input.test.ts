import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { aircoding, writeScenario } from "../support/engine"
import { passingReviewer, readJsonl, runScenario, trivialProject, writeAndReport, type RunResult, submittingMain } from "../support/runs"
import { makeSandbox, type Sandbox } from "../support/sandbox"

/**
 * Bad input at the door, through the real engine: the Architect's misspelt key (depends_on) comes back as
 * a refusal naming the nearest key, and the corrected graph runs; a headless run left waiting for the
 * plan's confirmation exits 2 ("waiting"), not 1.
 */
const requirement = "Write a note."
const good = { id: "T-1", title: "Write the note", kind: "docs", writeSet: [{ path: "note.md", action: "create" }], doneWhen: "note.md exists" }
const typo = { ...good, depends_on: [] }

let sandbox: Sandbox
let corrected: RunResult
let waiting: { code: number; stdout: string; stderr: string }

beforeAll(async () => {
  sandbox = makeSandbox("air-input-")
  const project = trivialProject(sandbox, { "README.md": "# Notes\n" })
  corrected = await runScenario(sandbox, project, {
    name: "typo-then-fixed",
    scripts: [
      submittingMain(requirement),
      {
        agent: "architect",
        match: "^Requirement:",
        steps: [
          { tool: "air_propose", args: { summary: "One note." } },
          { tool: "air_plan", args: { tasks: [typo] } },
          { tool: "air_plan", args: { tasks: [good] }, expect: { lastToolResultIncludes: ["tasks[0].depends_on: unknown key; did you mean deps?", "nothing changed"] } },
          { text: "Planned." },
        ],
      },
      { agent: "executor", match: "^Task T-1:", steps: writeAndReport("note.md", "note\n", "the note") },
      passingReviewer,
    ],
  }, { input: requirement })

  const second = trivialProject(sandbox, { "README.md": "# Notes\n" }, {}, "waiting")
  const scenario = writeScenario(sandbox, {
    name: "awaits-confirmation",
    scripts: [
      { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "PLAN PROPOSED" }, { text: "Please confirm the plan." }] },
      { agent: "architect", match: "^Requirement:", steps: [{ tool: "air_propose", args: { summary: "One note." } }, { text: "Proposed." }] },
    ],
  }, "waiting.json")
  waiting = await aircoding(["run", second, "--json", "--scripted", scenario], { cwd: second, input: requirement, env: { ...sandbox.env, AIRCODING_LISTEN_MS: "600000" } })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("bad input through the engine", () => {
  test("a misspelt key in air_plan is refused with the nearest key; the corrected graph merges (exit 0)", () => {
    expect(corrected.code, corrected.stderr.slice(-3000)).toBe(0)
    expect(corrected.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(corrected.events.filter((e) => e.type === "graph.accepted")).toHaveLength(1)
  })

  test("a run that stops to ask for the plan's confirmation exits 2 and says it waits", () => {
    expect(waiting.code, waiting.stderr.slice(-3000)).toBe(2)
    const summary = JSON.parse(waiting.stdout)
    expect(summary.status).toBe("waiting")
    expect(summary.stage).toBe("confirming")
    expect(summary.errors).toEqual([])
    // The Architect's model use is logged too (usage.recorded); nothing past the proposal happened.
    const types = readJsonl(join(sandbox.root, "waiting", ".air/local/state/events.jsonl")).map((e) => e.type).filter((type) => type !== "usage.recorded")
    expect(types).toEqual(["run.started", "plan.proposed"])
  })
})
