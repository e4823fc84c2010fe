import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, writeAndReport, type RunResult, submittingMain, planningArchitect } from "../support/runs"

/**
 * Two phases. When phase 1 is merged the Architect reviews the milestone and finds a gap: its fix task
 * F-1 joins phase 1, runs and merges; the second review passes; only then does phase 2 start. Phase 2,
 * the last, gets the final review of the whole requirement: it finds a gap too (F-2), and the run is done
 * only after the second final review passes.
 */
const requirement = "Write the guide (phase 1: intro; phase 2: usage)."
const tasks = [
  { id: "T-1", title: "Write the intro", kind: "docs", phase: 1, writeSet: [{ path: "docs/intro.md", action: "create" }], doneWhen: "docs/intro.md exists" },
  { id: "T-2", title: "Write the usage page", kind: "docs", phase: 2, writeSet: [{ path: "docs/usage.md", action: "create" }], doneWhen: "docs/usage.md exists" },
]
const fix = { id: "F-1", title: "Link the intro from the README", kind: "docs", phase: 1, writeSet: [{ path: "README.md", action: "modify" }], doneWhen: "README.md links docs/intro.md" }
const finalFix = { id: "F-2", title: "Link the usage page from the README", kind: "docs", phase: 2, writeSet: [{ path: "README.md", action: "modify" }], doneWhen: "README.md links docs/usage.md" }
const scenario = {
  name: "milestone",
  scripts: [
    submittingMain(requirement),
    planningArchitect("Two phases.", tasks),
    {
      agent: "architect",
      match: "^Milestone review of phase 1\\.(?![\\s\\S]*F-1)",
      steps: [{ tool: "air_milestone", args: { phase: 1, verdict: "fail", findings: ["the README does not link the intro"], fixTasks: [fix] } }, { text: "Fix needed." }],
    },
    { agent: "architect", match: "^Milestone review of phase 1\\.[\\s\\S]*F-1", steps: [{ tool: "air_milestone", args: { phase: 1, verdict: "pass", findings: [] } }, { text: "Pass." }] },
    {
      agent: "architect",
      match: "^Final milestone review of phase 2:(?![\\s\\S]*F-2)",
      steps: [
        { tool: "air_milestone", args: { verdict: "fail", findings: ["the README does not link the usage page"], fixTasks: [finalFix] }, expect: { lastUserIncludes: ["whole requirement", "T-1", "F-1", "T-2"] } },
        { text: "Final fix needed." },
      ],
    },
    { agent: "architect", match: "^Final milestone review of phase 2:[\\s\\S]*F-2", steps: [{ tool: "air_milestone", args: { verdict: "pass", findings: [] } }, { text: "Final pass." }] },
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("docs/intro.md", "# Intro\n", "Write the intro") },
    { agent: "executor", match: "^Task T-2:", steps: writeAndReport("docs/usage.md", "# Usage\n", "Write the usage page") },
    {
      agent: "executor",
      match: "^Task F-1:",
      steps: [
        { tool: "edit", args: { filePath: "README.md", oldString: "# Guide\n", newString: "# Guide\n\nSee docs/intro.md.\n" } },
        ...writeAndReport("docs/.keep", "", "Link the intro").slice(1),
      ],
    },
    {
      agent: "executor",
      match: "^Task F-2:",
      steps: [
        { tool: "edit", args: { filePath: "README.md", oldString: "See docs/intro.md.\n", newString: "See docs/intro.md.\nSee docs/usage.md.\n" } },
        ...writeAndReport("docs/.keep", "", "Link the usage page").slice(1),
      ],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-milestone-")
  project = trivialProject(sandbox, { "README.md": "# Guide\n" })
  r = await runScenario(sandbox, project, scenario, { input: requirement })
}, 900_000)

afterAll(() => sandbox?.cleanup())

const types = () => r.events.map((e) => e.type)

describe("milestones", () => {
  test("the run ends done with both fix tasks merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "merged"],
      ["T-2", "merged"],
      ["F-1", "merged"],
      ["F-2", "merged"],
    ])
  })

  test("phase 1 is reviewed twice (fail with a fix task, then pass) and phase 2 starts only after the pass", () => {
    const reviewed = r.events.filter((e) => e.type === "milestone.reviewed")
    expect(reviewed.map((e) => [e.phase, e.verdict])).toEqual([
      [1, "fail"],
      [1, "pass"],
      [2, "fail"],
      [2, "pass"],
    ])
    expect(r.events.filter((e) => e.type === "milestone.reached").map((e) => e.phase)).toEqual([1, 1, 2, 2])
    const t = types()
    const firstReached = t.indexOf("milestone.reached")
    const passAt = r.events.findIndex((e) => e.type === "milestone.reviewed" && e.verdict === "pass")
    const f1Merged = r.events.findIndex((e) => e.type === "merge.succeeded" && e.taskId === "F-1")
    const t2Dispatched = r.events.findIndex((e) => e.type === "task.dispatched" && e.taskId === "T-2")
    expect(firstReached).toBeGreaterThan(r.events.findIndex((e) => e.type === "merge.succeeded" && e.taskId === "T-1"))
    expect(f1Merged).toBeGreaterThan(firstReached)
    expect(passAt).toBeGreaterThan(f1Merged)
    expect(t2Dispatched).toBeGreaterThan(passAt)
  })

  test("the last phase gets the final review: its fix task F-2 runs after the first final review, and the run ends after the second passes", () => {
    const at = (pred: (e: any) => boolean) => r.events.findIndex(pred)
    const t2Merged = at((e) => e.type === "merge.succeeded" && e.taskId === "T-2")
    const finalFail = at((e) => e.type === "milestone.reviewed" && e.phase === 2 && e.verdict === "fail")
    const f2Dispatched = at((e) => e.type === "task.dispatched" && e.taskId === "F-2")
    const f2Merged = at((e) => e.type === "merge.succeeded" && e.taskId === "F-2")
    const finalPass = at((e) => e.type === "milestone.reviewed" && e.phase === 2 && e.verdict === "pass")
    expect(finalFail).toBeGreaterThan(t2Merged)
    expect(f2Dispatched).toBeGreaterThan(finalFail)
    expect(finalPass).toBeGreaterThan(f2Merged)
    expect(at((e) => e.type === "finalCheck.done")).toBeGreaterThan(finalPass)
    expect(r.events.find((e) => e.type === "graph.accepted").graph.tasks).toHaveLength(2)
  })

  test("the integration branch holds all four tasks", () => {
    const git = (...a: string[]) => execFileSync("git", a, { cwd: project, encoding: "utf8" })
    expect(git("show", "main:README.md")).toContain("See docs/intro.md.\nSee docs/usage.md.")
    expect(git("tag", "--list", "air/done/*").trim().split("\n").sort()).toEqual(["air/done/F-1", "air/done/F-2", "air/done/T-1", "air/done/T-2"])
  })

  test("Main heard of each milestone", () => {
    const mainRequests = r.modelLog.filter((l) => l.agent === "main")
    expect(mainRequests.length).toBeGreaterThanOrEqual(3)
    // Planning (3 requests) and four milestone reviews (2 each, the last text may be skipped once the report is in).
    expect(r.modelLog.filter((l) => l.agent === "architect").length).toBeGreaterThanOrEqual(7)
  })
})
