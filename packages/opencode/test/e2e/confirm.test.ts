import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, shellStep, trivialProject, type RunResult } from "../support/runs"

/**
 * The plan is confirmed by the user, not by --yes: discuss → propose → change → propose again → confirm.
 * In conversation, Main relays the plan, passes the user's change in their words (air_change) and then
 * their yes (air_confirm). Headless, the run stops at the plan with exit 2 and `--resume --answer` goes on:
 * headless-end.test.ts (c).
 */
const requirement = "Document the app."
const change = "Split the docs in two: usage apart from install."
const writeCommit = (path: string, text: string) => shellStep(`mkdir -p docs && printf '${text}\\n' > ${path} && git add -A && git commit -q -m "${path}"`)
const tasks = [
  { id: "T-1", title: "Document the install", kind: "docs", writeSet: [{ path: "docs/install.md", action: "create" }], doneWhen: "docs/install.md exists" },
  { id: "T-2", title: "Document the usage", kind: "docs", deps: ["T-1"], writeSet: [{ path: "docs/usage.md", action: "create" }], doneWhen: "docs/usage.md exists" },
]
const planV1 = "Plan v1: one task writes docs/README.md."
const planV2 = "Plan v2: T-1 writes docs/install.md, then T-2 writes docs/usage.md (T-2 needs T-1)."

/** The Architect: the first proposal, a revision after the user's change, the task graph once confirmed. */
const architectScripts = [
  // A new Architect after a restart is shown its proposal and the user's answer.
  {
    agent: "architect",
    match: "Your proposed plan[\\s\\S]*asked for changes",
    steps: [{ tool: "air_propose", args: { summary: planV2 }, expect: { lastUserIncludes: [planV1, change] } }, { text: "Proposed again." }],
  },
  {
    agent: "architect",
    match: "Your proposed plan[\\s\\S]*confirmed this plan",
    steps: [{ tool: "air_plan", args: { tasks }, expect: { lastUserIncludes: [planV2] } }, { text: "Planned." }],
  },
  {
    agent: "architect",
    match: "^Requirement:",
    steps: [
      { tool: "air_adr", args: { id: "ADR-1", title: "Docs in Markdown", status: "accepted", body: "Docs are Markdown files under docs/." } },
      { tool: "air_propose", args: { summary: planV1 } },
      { text: "Proposed." },
      // The same session, prompted again with the user's change.
      { tool: "air_propose", args: { summary: planV2 }, expect: { lastUserIncludes: ["asked for changes", change] } },
      { text: "Proposed again." },
      { tool: "air_plan", args: { tasks }, expect: { lastUserIncludes: ["confirmed the plan"] } },
      { text: "Planned." },
    ],
  },
]
const workers = [
  { agent: "executor", match: "^Task T-1:", steps: [writeCommit("docs/install.md", "Install: make"), { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }] },
  { agent: "executor", match: "^Task T-2:", steps: [writeCommit("docs/usage.md", "Usage: app run"), { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }] },
  passingReviewer,
]

const conversation = {
  name: "confirm-in-conversation",
  scripts: [
    {
      agent: "main",
      steps: [
        { tool: "air_submit", args: { requirement } },
        { tool: "air_listen", args: {}, until: "PLAN PROPOSED" },
        // The user read plan v1 and asked for a change in their own words. (The delay lets the Architect end its turn.)
        { tool: "air_change", args: { text: change }, delayMs: 2000, expect: { lastToolResultIncludes: [planV1, "ADR-1: Docs in Markdown (accepted)"] } },
        { tool: "air_listen", args: {}, until: "Plan v2" },
        { tool: "air_confirm", args: { notes: "yes" }, delayMs: 2000 },
        { tool: "air_listen", args: {}, until: "RUN ENDED" },
        { text: "Done." },
      ],
    },
    ...architectScripts,
    ...workers,
  ],
}

let sandbox: Sandbox
const env = { AIRCODING_LISTEN_MS: "3000" }
const merges = (r: RunResult) => r.events.filter((e) => e.type === "merge.succeeded").map((e) => e.taskId)

beforeAll(() => {
  sandbox = makeSandbox("air-confirm-")
})
afterAll(() => sandbox?.cleanup())

describe("the plan confirmed in conversation", () => {
  let project: string
  let r: RunResult
  beforeAll(async () => {
    project = trivialProject(sandbox, { "README.md": "# App\n" }, {}, "conversation")
    r = await runScenario(sandbox, project, conversation, { input: requirement, env, yes: false, name: "conversation" })
  }, 600_000)

  test("change requested in words → revised proposal → air_confirm from Main's session → every task merged once", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    const planning = r.events.map((e) => e.type).filter((t) => t.startsWith("plan.") || t === "graph.accepted")
    expect(planning).toEqual(["plan.proposed", "plan.revision.requested", "plan.proposed", "plan.confirmed", "graph.accepted"])
    expect(r.events.find((e) => e.type === "plan.revision.requested").text).toBe(change)
    expect(merges(r)).toEqual(["T-1", "T-2"])
    expect(execFileSync("git", ["show", "main:docs/usage.md"], { cwd: project, encoding: "utf8" })).toBe("Usage: app run\n")
  })

  test("the Architect that proposed revised in the same session (one Architect conversation, no failed request)", () => {
    // Script 4 is the first Architect script of the conversation (0 is the final review writeScenario puts
    // first, 1 is Main; 2 and 3 serve a new Architect after a restart). The final review is a session of its own.
    const architect = r.modelLog.filter((l) => l.agent === "architect")
    expect(new Set(architect.map((l) => l.script))).toEqual(new Set([4, "final-review"]))
    expect(r.modelLog.filter((l) => l.failure)).toEqual([])
  })
})
