import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, writeAndReport, type RunResult, planningArchitect } from "../support/runs"

/**
 * A task whose session cannot even start: someone's files sit where T-1's worktree must go, so the
 * Scheduler cannot create it (and must not delete them). The dispatch fails, is tried once more, then
 * T-1 is blocked with the reason and Main asks the user — the task never waits on a session that does not
 * exist. T-2, independent, is merged meanwhile.
 */
const requirement = "Write two notes."
const tasks = [
  { id: "T-1", title: "Write note one", kind: "docs", writeSet: [{ path: "one.md", action: "create" }], doneWhen: "one.md exists" },
  { id: "T-2", title: "Write note two", kind: "docs", writeSet: [{ path: "two.md", action: "create" }], doneWhen: "two.md exists" },
]
const scenario = {
  name: "dispatch-failure",
  scripts: [
    { agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "T-1 is blocked; I asked you how to go on." }] },
    planningArchitect("Two notes.", tasks),
    { agent: "executor", match: "^Task T-2:", steps: writeAndReport("two.md", "two\n", "note two") },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-dispatch-")
  project = trivialProject(sandbox, { "README.md": "# Notes\n" })
  mkdirSync(join(project, ".air/local/worktrees/T-1"), { recursive: true })
  writeFileSync(join(project, ".air/local/worktrees/T-1/precious.txt"), "not the Scheduler's\n")
  r = await runScenario(sandbox, project, scenario, { input: requirement })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("a session that cannot start", () => {
  test("the run stops blocked (exit 2) with T-2 merged and T-1 blocked, and one question for the user", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(2)
    expect(r.summary.status).toBe("blocked")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "blocked"],
      ["T-2", "merged"],
    ])
    expect(r.summary.questions).toEqual([{ questionId: "T-1:blocked:1", text: expect.stringMatching(/executor session could not be started: .*exists and is not a git worktree/) }])
  })

  test("dispatch.failed twice (a retry, then the block), no executor ever ran T-1, and the files were left alone", () => {
    expect(r.events.filter((e) => e.type === "dispatch.failed").map((e) => [e.taskId, e.role, e.run])).toEqual([
      ["T-1", "executor", 1],
      ["T-1", "executor", 2],
    ])
    expect(r.events.filter((e) => e.type === "task.dispatched" && e.taskId === "T-1")).toEqual([])
    expect(r.modelLog.filter((l) => l.agent === "executor" && String(l.lastUser ?? "").includes("Task T-1:"))).toEqual([])
    expect(readFileSync(join(project, ".air/local/worktrees/T-1/precious.txt"), "utf8")).toBe("not the Scheduler's\n")
  })
})
