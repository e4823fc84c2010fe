import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Budget } from "../../src/runtime/budget"
import { Usage } from "../../src/runtime/usage"

const root = mkdtempSync(join(tmpdir(), "air-budget-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const at = (min: number) => new Date(Date.UTC(2026, 0, 1, 0, min)).toISOString()
function setup(requests: { min: number; session: string }[], events: object[]) {
  const dir = join(root, ".air", "local", "state")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "requests.jsonl"), requests.map((r) => JSON.stringify({ at: at(r.min), agent: "executor", sessionID: r.session })).join("\n") + "\n{torn")
  writeFileSync(join(dir, "events.jsonl"), events.map((e) => JSON.stringify(e)).join("\n") + "\n")
  // Tokens as a process that has since died recorded them: they still count after a restart.
  Usage.writeTokens(root, { old: { at: at(0), tokens: 9000 }, s2: { at: at(5), tokens: 400 }, main: { at: at(6), tokens: 100 } })
  return Budget.readEvents(root)
}
const none = { taskRequests: 0, runRequests: 0, taskTokens: 0, runTokens: 0, runMinutes: 0 }

describe("budgets", () => {
  const events = setup(
    [
      { min: 0, session: "old" }, // before this run started: not counted
      { min: 2, session: "s1" },
      { min: 3, session: "s1" },
      { min: 4, session: "r1" },
      { min: 5, session: "s2" },
      { min: 6, session: "main" },
    ],
    [
      { type: "run.started", at: at(1) },
      { type: "task.dispatched", at: at(2), taskId: "T-1", sessionId: "s1" },
      { type: "review.started", at: at(4), taskId: "T-1", sessionId: "r1" },
      { type: "task.dispatched", at: at(5), taskId: "T-2", sessionId: "s2" },
    ],
  )
  const spent = Budget.spent(root, events, Date.parse(at(11)))

  it("counts requests and tokens of this run, per task through its worker and reviewer sessions, and minutes since the start", () => {
    expect(spent.run).toEqual({ requests: 5, tokens: 500, minutes: 10 })
    expect(spent.tasks).toEqual({ "T-1": { requests: 3, tokens: 0 }, "T-2": { requests: 1, tokens: 400 } })
  })

  it("no limit, nothing spent", () => {
    expect(Budget.over(none, spent, events, ["T-1", "T-2"])).toEqual([])
  })

  it("a task over its request or token budget; the run over requests, tokens or minutes", () => {
    expect(Budget.over({ ...none, taskRequests: 3 }, spent, events, ["T-1", "T-2"])).toEqual([])
    expect(Budget.over({ ...none, taskRequests: 2 }, spent, events, ["T-1", "T-2"])).toEqual([{ taskId: "T-1", kind: "requests" }])
    expect(Budget.over({ ...none, taskTokens: 399 }, spent, events, ["T-1", "T-2"])).toEqual([{ taskId: "T-2", kind: "tokens" }])
    expect(Budget.over({ ...none, runRequests: 4, runMinutes: 9, runTokens: 1000 }, spent, events, [])).toEqual([{ kind: "requests" }, { kind: "minutes" }])
  })

  it("only tasks in flight are checked", () => {
    expect(Budget.over({ ...none, taskRequests: 0.5 }, spent, events, ["T-2"])).toEqual([{ taskId: "T-2", kind: "requests" }])
  })

  it("an answer gives the run another budget's worth and the task a fresh budget, so the same limit never trips again at once", () => {
    const more = [...events, { type: "budget.spent", at: at(7), taskId: "T-1" }, { type: "question.answered", at: at(8), questionId: "run:budget:9" }] as any[]
    const after = Budget.spent(root, more, Date.parse(at(11)))
    expect(after.tasks["T-1"]).toBeUndefined()
    expect(Budget.over({ ...none, taskRequests: 1, runRequests: 5 }, after, more, ["T-1"])).toEqual([])
    expect(Budget.over({ ...none, runRequests: 2 }, after, more, [])).toEqual([{ kind: "requests" }])
    expect(Budget.over({ ...none, runRequests: 3 }, after, more, [])).toEqual([])
  })
})
