import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { passingReviewer, runScenario, trivialProject, type RunResult, planningArchitect } from "../support/runs"

/**
 * A task's model-request budget (AIRCODING_TASK_REQUESTS=7): T-1's first executor keeps asking the model;
 * once its usage (usage.recorded, one event per assistant message at most) passes 7 requests the machine aborts it, blocks the task and asks the user (never a loop);
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
    planningArchitect("One task.", tasks),
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

  test("spent once, decided by the machine from usage.recorded: blocked with a question, answered, dispatched again — no loop", () => {
    expect(r.events.filter((e) => e.type === "budget.spent")).toEqual([])
    const first = r.events.find((e) => e.type === "task.dispatched")!.sessionId
    const over = r.events.findIndex((e) => e.type === "usage.recorded" && e.sessionId === first && e.taskId === "T-1" && e.requests > 7)
    expect(over).toBeGreaterThan(0)
    expect(r.events.slice(over + 1).find((e) => e.type === "usage.recorded" && e.sessionId === first && e.requests > r.events[over].requests + 1)).toBeUndefined()
    expect(r.events.filter((e) => e.type === "task.dispatched").map((e) => e.attempt)).toEqual([1, 2])
    const asked = r.modelLog.filter((l) => l.agent === "executor" && String(l.lastUser ?? "").includes("(attempt 1)")).length
    expect(asked).toBeGreaterThan(7)
    expect(asked).toBeLessThan(14)
    expect(r.summary.spent.requests).toBeGreaterThan(10)
  })

  test("usage reaches the machine as events, one per assistant message at most; the summary is their fold", () => {
    const usage = r.events.filter((e) => e.type === "usage.recorded")
    const executors = r.events.filter((e) => e.type === "task.dispatched").map((e) => e.sessionId)
    const last = new Map<string, { requests: number; tokens: number }>()
    for (const e of usage) last.set(e.sessionId, e)
    for (const session of executors) expect(last.get(session)?.tokens ?? 0).toBeGreaterThan(0)
    // Bounded: never more events for a session than the assistant messages it ended.
    for (const [session, totals] of last) expect(usage.filter((e) => e.sessionId === session).length).toBeLessThanOrEqual(totals.requests)
    const total = [...last.values()].reduce((sum, t) => sum + t.tokens, 0)
    expect(r.summary.spent.tokens).toBe(total)
  })
})
