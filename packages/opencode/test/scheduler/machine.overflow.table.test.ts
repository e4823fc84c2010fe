import { describe, expect, it } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import { transition } from "../../src/scheduler/core/machine"
import { FRESH_AFTER_OVERFLOW, overflowDecision } from "../../src/scheduler/core/overflow"
import type { SchedulerState } from "../../src/scheduler/core/state"
import type { OverflowRecord, OverflowRole } from "../../src/scheduler/core/vocabulary"
import { questionText } from "../../src/text/question-text"
import { apply, ev, graphOf, runtimeOf, started, steps, task, type EventInput } from "./fixtures"
import { deepFreeze } from "./invariants"
import { checkRow, type TableRow } from "./table"

/**
 * Issue 38, item 3: a worker's or reviewer's session that ends with the provider's context-length error is
 * replaced by a fresh session of the same role for the same task (no repair and no stall spent); only when
 * that fresh session overflows too is the user asked one question, which says what to do next.
 */

function show(command: Command): string {
  if (command.type === "dispatch") return `dispatch:${command.taskId}:${command.role}:${command.attempt}`
  if ("taskId" in command) return `${command.type}:${command.taskId}`
  return command.type
}

const MESSAGE = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens."
const overflowed = (role: OverflowRole, sessionId: string): EventInput => ({ type: "session.overflowed", taskId: "T-1", sessionId, role, message: MESSAGE })
const one = graphOf(task("T-1"))
const carried = { diffFiles: 1, diffChars: 120, diffCut: false, gateFailure: false, steps: 0 }

const s = {
  executing: () => apply(started(one).state, steps.dispatched("T-1")).state,
  /** The Executor overflowed once; its fresh session (attempt 2) works. */
  executingFresh: () => apply(s.executing(), overflowed("executor", "s-T-1-1"), steps.dispatched("T-1", 2)).state,
  /** The gates failed the build; the Debugger (attempt 2) works. */
  debugging: () => apply(s.executing(), steps.reported("T-1"), { type: "gates.started", taskId: "T-1" }, steps.gatesFailed("T-1", "build", "debugger"), steps.dispatched("T-1", 2, "debugger")).state,
  debuggingFresh: () => apply(s.debugging(), overflowed("debugger", "s-T-1-2"), steps.dispatched("T-1", 3, "debugger")).state,
  reviewing: () => apply(s.executing(), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewStarted("T-1")).state,
  reviewingFresh: () => apply(s.reviewing(), overflowed("reviewer", "rv-T-1"), { type: "review.started", taskId: "T-1", sessionId: "rv-T-1-2" }).state,
  askedExecutor: () => apply(s.executingFresh(), overflowed("executor", "s-T-1-2")).state,
}

describe("the rule: a fresh session, or the user", () => {
  const record = (role: OverflowRole, fresh: number): OverflowRecord => ({ role, sessionId: "s", fresh })
  const table: [OverflowRecord | null, OverflowRole, "fresh" | "ask"][] = [
    [null, "executor", "fresh"],
    [null, "debugger", "fresh"],
    [null, "reviewer", "fresh"],
    [record("executor", 0), "executor", "fresh"],
    [record("executor", FRESH_AFTER_OVERFLOW), "executor", "ask"],
    [record("debugger", FRESH_AFTER_OVERFLOW), "debugger", "ask"],
    [record("reviewer", FRESH_AFTER_OVERFLOW), "reviewer", "ask"],
    [record("executor", FRESH_AFTER_OVERFLOW), "reviewer", "fresh"],
    [record("reviewer", FRESH_AFTER_OVERFLOW), "debugger", "fresh"],
  ]
  for (const [last, role, decision] of table)
    it(`${last ? `${last.role} overflowed, ${last.fresh} fresh session(s) since` : "no overflow before"}; the ${role} overflows → ${decision}`, () => {
      expect(overflowDecision(last, role)).toBe(decision)
    })
})

const rows: TableRow[] = [
  {
    rule: "the Executor's session overflows: a fresh Executor for the same task, no repair or stall spent, nobody asked",
    given: s.executing,
    event: overflowed("executor", "s-T-1-1"),
    statuses: { "T-1": "running" },
    commands: ["dispatch:T-1:executor:2", "notify"],
    check: (st) => {
      const t = runtimeOf(st, "T-1")
      expect(t.overflow).toEqual({ role: "executor", sessionId: "s-T-1-1", fresh: 1 })
      expect([t.repairs, t.stalls, st.questions.length]).toEqual([0, 0, 0])
    },
  },
  {
    rule: "the fresh Executor overflows too: one question, with the cause, the tries and what to do next",
    given: s.executingFresh,
    event: overflowed("executor", "s-T-1-2"),
    statuses: { "T-1": "blocked" },
    // T-1 is the run's only task: the run ends blocked on the question (an answer reopens it).
    commands: ["ask", "notify", "finish", "notify"],
    check: (st) => {
      const t = runtimeOf(st, "T-1")
      expect(t.resume).toBe("executor")
      expect(t.overflow).toEqual({ role: "executor", sessionId: "s-T-1-2", fresh: 0 })
      expect(st.questions).toHaveLength(1)
      const q = st.questions[0]!
      expect(q.answers).toEqual(["retry", "skip T-1"])
      expect(q.cause).toMatchObject({ who: "executor", taskId: "T-1", tries: 1, fault: { class: "context-too-long" } })
      expect(q.text).toBe(
        "The Executor's session for T-1 ran out of the model's context again: a fresh session started from the task's context pack and its worktree overflowed too (This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens). The task is likely too large for one session: split it with a requirement change or use a model with a longer context. Answer 'retry' or 'skip T-1'.",
      )
      expect(questionText(q, "en")).toBe(q.text)
      expect(questionText(q, "zh-CN")).toBe(
        "执行者的会话（任务 T-1）再次超出了模型的上下文长度：从任务的上下文包和工作树重新开始的新会话也超出了（This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens）。这个任务对一个会话来说可能太大：请通过需求变更拆分它，或换用上下文更长的模型，然后回答 「retry」 或 「skip T-1」。",
      )
    },
  },
  {
    rule: "the user answers retry: an Executor again, and its overflow gets a fresh session again before the next question",
    given: s.askedExecutor,
    event: { type: "question.answered", questionId: "T-1:blocked:1", answer: "retry" },
    statuses: { "T-1": "running" },
    commands: ["dispatch:T-1:executor:3"],
    check: (st) => expect(overflowDecision(runtimeOf(st, "T-1").overflow, "executor")).toBe("fresh"),
  },
  {
    rule: "the Debugger's session overflows: a fresh Debugger, still sent to fix the gate failure",
    given: s.debugging,
    event: overflowed("debugger", "s-T-1-2"),
    statuses: { "T-1": "debugging" },
    commands: ["dispatch:T-1:debugger:3", "notify"],
    check: (st) => {
      const t = runtimeOf(st, "T-1")
      expect(t.lastFailure).toEqual({ source: "build", message: "build broke", evidencePath: "ev/T-1/build" })
      expect(t.repairs).toBe(1) // the gate failure's repair, not the overflow's
    },
  },
  {
    rule: "the fresh Debugger overflows too: blocked, and the answer resumes a Debugger on the same failure",
    given: s.debuggingFresh,
    event: overflowed("debugger", "s-T-1-3"),
    statuses: { "T-1": "blocked" },
    // T-1 is the run's only task: the run ends blocked on the question (an answer reopens it).
    commands: ["ask", "notify", "finish", "notify"],
    check: (st) => {
      const t = runtimeOf(st, "T-1")
      expect(t.resume).toBe("debugger")
      expect(t.lastFailure?.source).toBe("build")
      expect(st.questions[0]!.text).toMatch(/^The Debugger's session for T-1 ran out of the model's context again/)
    },
  },
  {
    rule: "the Reviewer's session overflows: a fresh review of the same task",
    given: s.reviewing,
    event: overflowed("reviewer", "rv-T-1"),
    statuses: { "T-1": "reviewing" },
    commands: ["review:T-1", "notify"],
    check: (st) => {
      const t = runtimeOf(st, "T-1")
      expect([t.reviewSessionId, t.reviewRuns, t.stalls]).toEqual([null, 2, 0])
      expect(t.overflow).toEqual({ role: "reviewer", sessionId: "rv-T-1", fresh: 1 })
    },
  },
  {
    rule: "the fresh Reviewer overflows too: blocked, and the answer reviews again",
    given: s.reviewingFresh,
    event: overflowed("reviewer", "rv-T-1-2"),
    statuses: { "T-1": "blocked" },
    // T-1 is the run's only task: the run ends blocked on the question (an answer reopens it).
    commands: ["ask", "notify", "finish", "notify"],
    check: (st) => {
      expect(runtimeOf(st, "T-1").resume).toBe("review")
      expect(st.questions[0]!.text).toMatch(/^The Reviewer's session for T-1 ran out of the model's context again/)
    },
  },
  {
    rule: "an overflow of another step after a report is the first of its own: the fresh Executor reported, the Reviewer overflows",
    given: () => apply(s.executingFresh(), steps.reported("T-1", 2), steps.gatesPassed("T-1"), steps.reviewStarted("T-1")).state,
    event: overflowed("reviewer", "rv-T-1"),
    statuses: { "T-1": "reviewing" },
    commands: ["review:T-1", "notify"],
  },
  {
    rule: "the fresh session's start is recorded with what it carried; the state waits on it as before",
    given: s.executingFresh,
    event: { type: "session.refreshed", taskId: "T-1", sessionId: "s-T-1-2", role: "executor", from: "s-T-1-1", carried },
    statuses: { "T-1": "running" },
    commands: [],
    check: (st) => expect(runtimeOf(st, "T-1").sessionId).toBe("s-T-1-2"),
  },
]

describe("the machine's rows for a session that ran out of the model's context", () => {
  for (const row of rows) it(row.rule, () => checkRow(row, show))

  const refuse = (given: () => SchedulerState, event: EventInput) => {
    const result = transition(deepFreeze(given()), ev(event))
    expect("refused" in result ? result.refused : "applied").toMatch(/stale|no overflow|not the/)
  }
  it("an overflow of a session that is no longer the task's is refused as stale", () => refuse(s.executingFresh, overflowed("executor", "s-T-1-1")))
  it("an overflow naming the wrong role is refused", () => refuse(s.debugging, overflowed("executor", "s-T-1-2")))
  it("a refresh from a session that never overflowed is refused", () =>
    refuse(s.executingFresh, { type: "session.refreshed", taskId: "T-1", sessionId: "s-T-1-2", role: "executor", from: "s-T-1-9", carried }))
})
