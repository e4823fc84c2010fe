import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, shellStep, trivialProject, type RunResult, planningArchitect } from "../support/runs"

/**
 * A change to work that already landed. T-1 (the core notes) and T-2 (the README's link to them, after
 * T-1) are merged and the run has finished; the user asks for the notes to describe v2. The Architect's
 * delta modifies T-1: the Scheduler reverts T-1's first landing by its tag, T-1 is done again and lands as
 * round 2 under its own tag (air/done/T-1+2), and T-2 — merged, and depending on T-1 — is re-verified by a
 * task the Scheduler generated (T-2.rv, kind verify), which runs only after the new T-1 landed.
 */
const requirement = "Write the core notes and link them from the README."
const change = "The core notes must describe version 2."
const tasks = [
  { id: "T-1", title: "Write the core notes", kind: "docs", writeSet: [{ path: "docs/core.md", action: "create" }], doneWhen: "docs/core.md describes the core" },
  { id: "T-2", title: "Link the core notes from the README", kind: "docs", deps: ["T-1"], writeSet: [{ path: "README.md", action: "modify" }], doneWhen: "README.md links docs/core.md" },
]
const scenario = {
  name: "redo",
  scripts: [
    {
      agent: "main",
      steps: [
        { tool: "air_submit", args: { requirement } },
        { tool: "air_listen", args: {}, until: "RUN ENDED: done" },
        { tool: "air_change", args: { text: change } },
        { tool: "air_listen", args: {}, until: "RUN ENDED: done" },
        { text: "Done." },
      ],
    },
    planningArchitect("Two docs tasks.", tasks),
    {
      agent: "architect",
      match: "^Requirement change:",
      steps: [
        { tool: "air_delta", args: { delta: { schemaVersion: 1, modify: [{ id: "T-1", patch: { doneWhen: "docs/core.md describes version 2" } }] } } },
        { text: "Delta written.", expect: { lastToolResultIncludes: ["Plan delta accepted", "T-2.rv"] } },
      ],
    },
    { agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)", steps: [shellStep("mkdir -p docs && printf 'Core: version 1\\n' > docs/core.md && git add -A && git commit -q -m core"), { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }] },
    {
      agent: "executor",
      match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)",
      steps: [
        // The worktree starts from the integration branch with the first round reverted: no docs/core.md.
        { ...shellStep("test ! -e docs/core.md && mkdir -p docs && printf 'Core: version 2\\n' > docs/core.md && git add -A && git commit -q -m core-v2"), expect: { lastUserIncludes: ["describes version 2"] } },
        { tool: "air_report", args: { summary: "done" } },
        { text: "Reported." },
      ],
    },
    { agent: "executor", match: "^Task T-2:", steps: [shellStep("printf 'See docs/core.md\\n' >> README.md && git add -A && git commit -q -m link"), { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }] },
    {
      agent: "executor",
      match: "^Task T-2\\.rv:",
      steps: [
        { ...shellStep("grep -q docs/core.md README.md && grep -q 'version 2' docs/core.md"), expect: { lastUserIncludes: ["verify task", "Change nothing and commit nothing", "README.md links docs/core.md"] } },
        { tool: "air_report", args: { summary: "README.md still links docs/core.md, which now describes version 2." } },
        { text: "Reported." },
      ],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult
const git = (...a: string[]) => execFileSync("git", a, { cwd: project, encoding: "utf8" })

beforeAll(async () => {
  sandbox = makeSandbox("air-redo-")
  project = trivialProject(sandbox, { "README.md": "# Core\n" })
  r = await runScenario(sandbox, project, scenario, { input: requirement, env: { AIRCODING_LISTEN_MS: "3000" } })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("a change to a merged task: redo under a new round, boundary re-verified", () => {
  test("the run finishes done with T-1 done again, T-2 kept and T-2.rv merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "merged"],
      ["T-2", "merged"],
      ["T-2.rv", "merged"],
    ])
    expect(git("show", "main:docs/core.md")).toBe("Core: version 2\n")
    expect(git("show", "main:README.md")).toBe("# Core\nSee docs/core.md\n")
  })

  test("T-1's first landing was reverted by its tag and the redo landed under its own tag", () => {
    expect(git("tag", "--list").trim().split("\n").sort()).toEqual(["air/done/T-1", "air/done/T-1+2", "air/done/T-2", "air/done/T-2.rv", "air/reverted/T-1"])
    expect(git("log", "-1", "--format=%B", "air/done/T-1+2")).toContain("Air-Task: T-1+2")
    git("merge-base", "--is-ancestor", "air/reverted/T-1", "air/done/T-1+2")
    expect(r.events.filter((e) => e.type === "merge.succeeded" && e.taskId === "T-1").map((e) => e.tag)).toEqual(["air/done/T-1", "air/done/T-1+2"])
  })

  test("T-2 was not redone; the generated verify task ran after T-1's second landing", () => {
    expect(r.events.filter((e) => e.type === "task.dispatched" && e.taskId === "T-2").length).toBe(1)
    const graph = JSON.parse(readFileSync(join(project, ".air/shared/plan/task-graph.json"), "utf8"))
    expect(graph.tasks.find((t: any) => t.id === "T-2.rv")).toMatchObject({ kind: "verify", deps: ["T-1"], writeSet: [] })
    const t1Again = r.events.findIndex((e) => e.type === "merge.succeeded" && e.tag === "air/done/T-1+2")
    const rvStart = r.events.findIndex((e) => e.type === "task.dispatched" && e.taskId === "T-2.rv")
    expect(t1Again).toBeGreaterThan(0)
    expect(rvStart).toBeGreaterThan(t1Again)
  })
})
