import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, type RunResult } from "../support/runs"

/**
 * A task's model-request budget (AIRCODING_TASK_REQUESTS=7): T-1's first executor keeps asking the model;
 * once it passes 7 requests the Scheduler aborts it, blocks the task and asks the user (never a loop);
 * the answer gives the task a fresh budget and the second executor finishes well within it.
 */
const requirement = "Write the notes."
const tasks = [{ id: "T-1", title: "Write the notes", kind: "docs", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists" }]
const busy = Array.from({ length: 14 }, () => ({ tool: "bash", args: { command: "true", description: "think" }, delayMs: 2000 }))
const scenario = {
  name: "budget",
  scripts: [
    {
      agent: "main",
      steps: [
        { tool: "air_submit", args: { requirement } },
        { tool: "air_listen", args: {}, until: "QUESTION T-1:blocked:1" },
        { tool: "air_answer", args: { questionId: "T-1:blocked:1", answer: "Go on, but be quick." } },
        { tool: "air_listen", args: {}, until: "RUN ENDED: done" },
        { text: "Done." },
      ],
    },
    { agent: "architect", match: "^Requirement:", steps: [{ tool: "air_propose", args: { summary: "One task." } }, { tool: "air_plan", args: { tasks } }, { text: "Planned." }] },
    { agent: "executor", match: "^Task T-1:[\\s\\S]*\\(attempt 1\\)", steps: [...busy, { text: "never reached" }] },
    {
      agent: "executor",
      match: "^Task T-1:[\\s\\S]*\\(attempt 2\\)",
      steps: [{ tool: "bash", args: { command: "echo notes > notes.md && git add -A && git commit -q -m notes", description: "write" } }, { tool: "air_report", args: { summary: "Wrote the notes." } }, { text: "Reported." }],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-budget-")
  project = trivialProject(sandbox, { "README.md": "# Notes\n" })
  r = await runScenario(sandbox, project, scenario, { input: requirement, env: { AIRCODING_TASK_REQUESTS: "7" } })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("a task's request budget", () => {
  test("the run finishes done", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(execFileSync("git", ["show", "main:notes.md"], { cwd: project, encoding: "utf8" })).toBe("notes\n")
  })

  test("spent once: budget.spent, blocked with a question, answered, dispatched again — no loop", () => {
    const spent = r.events.filter((e) => e.type === "budget.spent")
    expect(spent).toEqual([expect.objectContaining({ taskId: "T-1", kind: "requests" })])
    expect(r.events.filter((e) => e.type === "task.dispatched").map((e) => e.attempt)).toEqual([1, 2])
    const first = r.modelLog.filter((l) => l.agent === "executor" && String(l.lastUser ?? "").includes("(attempt 1)")).length
    expect(first).toBeGreaterThan(7)
    expect(first).toBeLessThan(14)
    expect(r.summary.spent.requests).toBeGreaterThan(10)
  })

  test("tokens the provider reported are kept on disk by session, so a restart does not forget them", () => {
    const tokens = JSON.parse(readFileSync(join(project, ".air/local/state/tokens.json"), "utf8")) as Record<string, { at: string; tokens: number }>
    const executors = r.events.filter((e) => e.type === "task.dispatched").map((e) => e.sessionId)
    for (const session of executors) expect(tokens[session]?.tokens ?? 0).toBeGreaterThan(0)
    const total = Object.values(tokens).reduce((sum, t) => sum + t.tokens, 0)
    expect(r.summary.spent.tokens).toBe(total)
  })
})
