import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, readJsonl, runScenario, trivialProject, writeAndReport, type RunResult, submittingMain, planningArchitect } from "../support/runs"

/**
 * Re-baseline end to end (real engine, scripted model): someone commits to the integration branch while a
 * run is going, between its two phases (the Architect's review of phase 1 is slowed down; the test
 * commits in the user's checkout meanwhile). Before phase 2's task starts the run notices the head it did
 * not make (`integration.moved`), builds and tests that commit as a new baseline, and goes on to the end.
 */
const requirement = "Write the guide (phase 1: intro; phase 2: usage)."
const tasks = [
  { id: "T-1", title: "Write the intro", kind: "docs", phase: 1, writeSet: [{ path: "docs/intro.md", action: "create" }], doneWhen: "docs/intro.md exists" },
  { id: "T-2", title: "Write the usage page", kind: "docs", phase: 2, writeSet: [{ path: "docs/usage.md", action: "create" }], doneWhen: "docs/usage.md exists" },
]
/** Long enough for the test to see phase 1 reached and commit before phase 2 is dispatched. */
const REVIEW_DELAY_MS = 6000

const scenario = {
  name: "rebaseline",
  scripts: [
    submittingMain(requirement),
    planningArchitect("Two phases.", tasks),
    {
      agent: "architect",
      match: "^Milestone review of phase 1\\.",
      steps: [{ tool: "air_milestone", args: { phase: 1, verdict: "pass", findings: [] }, delayMs: REVIEW_DELAY_MS }, { text: "Pass." }],
    },
    { agent: "executor", match: "^Task T-1:", steps: writeAndReport("docs/intro.md", "# Intro\n", "Write the intro") },
    { agent: "executor", match: "^Task T-2:", steps: writeAndReport("docs/usage.md", "# Usage\n", "Write the usage page") },
    passingReviewer,
  ],
}

// The build lists the tree it was given (the log shows which commit's), in the build dir git ignores.
const toolchain = { build: ["test -f README.md && mkdir -p .air-build && ls | tee .air-build/tree.txt"], test: ["grep -q README.md .air-build/tree.txt"] }

let sandbox: Sandbox
let project: string
let r: RunResult
let first: string
let outside: string | undefined

/** Commits in the user's checkout as soon as phase 1 is reached (while the Architect reviews it). */
async function commitAtMilestone(): Promise<void> {
  const events = join(project, ".air/local/state/events.jsonl")
  const deadline = Date.now() + 600_000
  while (Date.now() < deadline) {
    if (readJsonl(events).some((e) => e.type === "milestone.reached" && e.phase === 1)) {
      writeFileSync(join(project, "CONTRIBUTING.md"), "# Contributing\n")
      const git = (...args: string[]) => execFileSync("git", args, { cwd: project, env: sandbox.env, encoding: "utf8" })
      git("add", "CONTRIBUTING.md")
      git("commit", "-qm", "a colleague's commit, outside the run")
      outside = git("rev-parse", "HEAD").trim()
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

beforeAll(async () => {
  sandbox = makeSandbox("air-rebaseline-")
  project = trivialProject(sandbox, { "README.md": "# Guide\n" }, toolchain)
  first = execFileSync("git", ["rev-parse", "HEAD"], { cwd: project, encoding: "utf8" }).trim()
  ;[r] = await Promise.all([runScenario(sandbox, project, scenario, { input: requirement }), commitAtMilestone()])
}, 900_000)

afterAll(() => sandbox?.cleanup())

const at = (pred: (e: any) => boolean) => r.events.findIndex(pred)

describe("the integration branch moved under the run", () => {
  test("the run ends done with both tasks merged, the outside commit kept", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "merged"],
      ["T-2", "merged"],
    ])
    expect(outside).toBeDefined()
    execFileSync("git", ["merge-base", "--is-ancestor", outside!, "main"], { cwd: project })
    expect(execFileSync("git", ["show", "main:CONTRIBUTING.md"], { cwd: project, encoding: "utf8" })).toBe("# Contributing\n")
  })

  test("the run noticed the commit it did not make before phase 2 started, and took the baseline again for it", () => {
    const moved = r.events.filter((e) => e.type === "integration.moved")
    expect(moved.map((e) => e.commit)).toEqual([outside])
    const baselines = r.events.filter((e) => e.type === "baseline.done")
    expect(baselines.map((e) => [e.commit, e.status])).toEqual([
      [first, "passed"],
      [outside, "passed"],
    ])
    const movedAt = at((e) => e.type === "integration.moved")
    expect(movedAt).toBeGreaterThan(at((e) => e.type === "merge.succeeded" && e.taskId === "T-1"))
    const rebased = at((e) => e.type === "baseline.done" && e.commit === outside)
    expect(rebased).toBeGreaterThan(movedAt)
    // T-2 starts only once the new head is judged: from the new head, not before its baseline is in.
    expect(at((e) => e.type === "task.dispatched" && e.taskId === "T-2")).toBeGreaterThan(rebased)
    expect(execFileSync("git", ["merge-base", "--is-ancestor", outside!, "air/done/T-2"], { cwd: project }).length).toBe(0)
  })

  test("a baseline record for each commit under .air/local/evidence/_baseline/<commit>/, the second one built from the new tree", () => {
    for (const commit of [first, outside!]) {
      const dir = join(project, ".air/local/evidence/_baseline", commit)
      const record = JSON.parse(readFileSync(join(dir, "baseline.json"), "utf8"))
      expect(record).toMatchObject({ commit, status: "passed", build: { ran: true, passed: true }, test: { ran: true, passed: true } })
      expect(existsSync(join(dir, "build.log")) && existsSync(join(dir, "test.log"))).toBe(true)
    }
    // Each baseline built its own commit's tree: only the second has the outside commit's file.
    const log = (commit: string) => readFileSync(join(project, ".air/local/evidence/_baseline", commit, "build.log"), "utf8")
    expect(log(first)).not.toContain("CONTRIBUTING.md")
    expect(log(outside!)).toContain("CONTRIBUTING.md")
  })
})
