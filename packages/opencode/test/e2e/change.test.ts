import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, shellStep, trivialProject, type RunResult } from "../support/runs"

/**
 * A requirement change mid-run. T-1 (storage in JSON, per ADR-1) and T-2 (the CLI page) are merged while
 * T-3 still runs; the user changes storage to SQLite. The Architect writes ADR-2 superseding ADR-1 and a
 * plan delta adding T-4; the Scheduler reverts T-1 by its air/done tag, T-4 replaces it, T-2 stays merged
 * and T-3 is never touched.
 */
const requirement = "Document the app: storage and CLI."
const change = "Store data in SQLite instead of JSON files."
const writeCommit = (path: string, text: string) => shellStep(`mkdir -p docs && printf '${text}\\n' > ${path} && git add -A && git commit -q -m "${path}"`)
const tasks = [
  { id: "T-1", title: "Document JSON storage", kind: "docs", writeSet: [{ path: "docs/storage.md", action: "create" }], adrRefs: ["ADR-1"], doneWhen: "docs/storage.md describes the storage" },
  { id: "T-2", title: "Document the CLI", kind: "docs", writeSet: [{ path: "docs/cli.md", action: "create" }], doneWhen: "docs/cli.md exists" },
  { id: "T-3", title: "Write the changelog", kind: "docs", writeSet: [{ path: "CHANGELOG.md", action: "create" }], doneWhen: "CHANGELOG.md exists" },
]
const t4 = { id: "T-4", title: "Document SQLite storage", kind: "docs", writeSet: [{ path: "docs/storage.md", action: "create" }], adrRefs: ["ADR-2"], doneWhen: "docs/storage.md describes SQLite storage" }
const scenario = {
  name: "change",
  scripts: [
    {
      agent: "main",
      steps: [
        { tool: "air_submit", args: { requirement } },
        // Listen returns every few seconds (AIRCODING_LISTEN_MS): wait for T-1 and T-2 merged while T-3 runs.
        { tool: "air_listen", args: {}, untilRegex: "tasks: 2 merged, 1 running" },
        { tool: "air_change", args: { text: change } },
        { tool: "air_listen", args: {}, until: "RUN ENDED" },
        { text: "Done." },
      ],
    },
    {
      agent: "architect",
      match: "^Requirement:",
      steps: [
        { tool: "air_adr", args: { id: "ADR-1", title: "Storage in JSON files", status: "accepted", body: "Data is stored as JSON files." } },
        { tool: "air_propose", args: { summary: "Three docs tasks." } },
        { tool: "air_plan", args: { tasks } },
        { text: "Planned." },
      ],
    },
    {
      agent: "architect",
      match: "^Requirement change:",
      steps: [
        { tool: "air_adr", args: { id: "ADR-2", title: "Storage in SQLite", status: "accepted", body: "Data is stored in one SQLite database.", supersedes: ["ADR-1"] }, expect: { lastUserIncludes: ["T-1 · merged", "ADR-1 (accepted)", "T-3 · running"] } },
        { tool: "air_delta", args: { delta: { schemaVersion: 1, add: [t4], supersedesAdrs: ["ADR-1"] } }, expect: { lastToolResultIncludes: ["ADR-2 written"] } },
        { text: "Delta written.", expect: { lastToolResultIncludes: ["Plan delta accepted"] } },
      ],
    },
    { agent: "executor", match: "^Task T-1:", steps: [writeCommit("docs/storage.md", "Storage: JSON files"), { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }] },
    { agent: "executor", match: "^Task T-2:", steps: [writeCommit("docs/cli.md", "CLI: app run"), { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }] },
    // T-3 takes its time: the change arrives while it runs.
    { agent: "executor", match: "^Task T-3:", steps: [{ ...writeCommit("CHANGELOG.md", "Changelog"), delayMs: 45_000 }, { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }] },
    { agent: "executor", match: "^Task T-4:", steps: [writeCommit("docs/storage.md", "Storage: one SQLite database"), { tool: "air_report", args: { summary: "done" } }, { text: "Reported." }] },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult
const git = (...a: string[]) => execFileSync("git", a, { cwd: project, encoding: "utf8" })

beforeAll(async () => {
  sandbox = makeSandbox("air-change-")
  project = trivialProject(sandbox, { "README.md": "# App\n" })
  r = await runScenario(sandbox, project, scenario, { input: requirement, env: { AIRCODING_LISTEN_MS: "3000", AIRCODING_INACTIVITY_MS: "120000" } })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("a requirement change mid-run", () => {
  test("the run finishes done: T-1 invalidated, T-2, T-3 and its replacement T-4 merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "invalidated"],
      ["T-2", "merged"],
      ["T-3", "merged"],
      ["T-4", "merged"],
    ])
  })

  test("ADR-2 supersedes ADR-1 and the delta says so", () => {
    expect(readFileSync(join(project, ".air/shared/plan/adr/ADR-2.md"), "utf8")).toContain("Supersedes: ADR-1")
    const delta = r.events.find((e) => e.type === "delta.accepted")
    expect(delta.delta.supersedesAdrs).toEqual(["ADR-1"])
    const graph = JSON.parse(readFileSync(join(project, ".air/shared/plan/task-graph.json"), "utf8"))
    expect(graph.tasks.map((t: any) => t.id)).toEqual(["T-1", "T-2", "T-3", "T-4"])
  })

  test("T-1 was reverted by its tag; T-4 replaced it; T-2 stayed untouched", () => {
    expect(git("tag", "--list").trim().split("\n").sort()).toEqual(["air/done/T-1", "air/done/T-2", "air/done/T-3", "air/done/T-4", "air/reverted/T-1"].sort())
    expect(git("show", "main:docs/storage.md")).toBe("Storage: one SQLite database\n")
    expect(git("show", "main:docs/cli.md")).toBe("CLI: app run\n")
    git("merge-base", "--is-ancestor", "air/done/T-2", "main")
    expect(r.events.filter((e) => e.taskId === "T-2" && e.type !== "merge.succeeded" && r.events.indexOf(e) > r.events.findIndex((x) => x.type === "change.requested"))).toEqual([])
  })

  test("T-3 ran through the change without being aborted or dispatched again", () => {
    expect(r.events.filter((e) => e.type === "task.dispatched" && e.taskId === "T-3").length).toBe(1)
    const changeAt = r.events.findIndex((e) => e.type === "change.requested")
    const t3Merged = r.events.findIndex((e) => e.type === "merge.succeeded" && e.taskId === "T-3")
    expect(t3Merged).toBeGreaterThan(changeAt)
  })
})
