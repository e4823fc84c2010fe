import { describe, expect, it } from "vitest"
import { movesWithoutPerson, waitsOnlyForPerson } from "../../src/scheduler/core/person-waits"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import { headlessEnd, exitCodeOf } from "../../src/text/run-status"
import { apply, complete, graphOf, started, steps, task } from "./fixtures"

/**
 * Whether a run can still move without a person (issue 39 item 8), as a table of states built by real events.
 * The graph: T-1 and T-2 are independent, T-3 needs T-1, T-4 is phase 2. The cap is 2.
 */
const graph = graphOf(task("T-1"), task("T-2"), task("T-3", { deps: ["T-1"] }), task("T-4", { phase: 2 }))
const config = { concurrency: 2, repairBudget: 1, stallRetries: 1 }
const blockedReport = { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "", blocked: { reason: "which API?" } } } as const
const architectBlocks = { type: "consult.answered", taskId: "T-1", choice: "block", by: "architect", reason: "the user must pick the API" } as const

const s = {
  planning: () => apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: { ...started(graph).state.config!, ...config } }).state,
  confirming: () => apply(s.planning(), { type: "plan.proposed", summary: "plan" }).state,
  /** T-1 and T-2 at work. */
  running: () => apply(started(graph, config).state, steps.dispatched("T-1"), steps.dispatched("T-2")).state,
  /** T-1 blocked with a question; T-2 still at work. */
  questioned: () => apply(s.running(), blockedReport, architectBlocks).state,
  /** The same, T-2 through its gates and waiting for its review. */
  questionedReviewing: () => apply(s.questioned(), steps.reported("T-2"), steps.gatesPassed("T-2")).state,
  /** T-2 merged after the question: nothing else can run, the run stopped blocked (T-3 parked behind T-1). */
  questionedThenMerged: () => complete(s.questioned(), "T-2").state,
  /** The question came while T-2 was merging. */
  questionedMerging: () => apply(s.running(), steps.reported("T-2"), steps.gatesPassed("T-2"), steps.reviewPass("T-2"), blockedReport, architectBlocks).state,
  /** The baseline failed: its question holds every task. */
  baselineFailed: () =>
    apply(
      initialState(),
      { type: "run.started", runId: "r1", requirement: "req", config: { ...started(graph).state.config!, ...config, baseline: true } },
      { type: "plan.proposed", summary: "plan" },
      { type: "plan.confirmed" },
      { type: "graph.accepted", graph },
      { type: "baseline.done", commit: "c0ffee", status: "failed", failingTests: ["old"], message: "ctest failed" },
    ).state,
  baselineRunning: () =>
    apply(
      initialState(),
      { type: "run.started", runId: "r1", requirement: "req", config: { ...started(graph).state.config!, ...config, baseline: true } },
      { type: "plan.proposed", summary: "plan" },
      { type: "plan.confirmed" },
      { type: "graph.accepted", graph },
    ).state,
  /** Paused with a question open and T-2 at work: T-2 finishes first. */
  pausedQuestioned: () => apply(s.questioned(), { type: "run.paused" }).state,
  /** A change being planned (frozen) while T-1's question waits. */
  frozenQuestioned: () => apply(s.questioned(), { type: "change.requested", text: "add tabs" }).state,
}

type Row = { given: string; state: () => SchedulerState; moves: boolean; waits: boolean; why: string }
const question = (state: SchedulerState, fields: Partial<SchedulerState["questions"][number]>): SchedulerState => ({
  ...state,
  questions: [...state.questions, { questionId: "q", taskId: null, text: "?", ...fields }],
})

const rows: Row[] = [
  { given: "no run", state: initialState, moves: false, waits: false, why: "nothing to move, nothing to ask" },
  { given: "the Architect planning", state: s.planning, moves: true, waits: false, why: "its session is at work" },
  { given: "the plan step failed and asked", state: () => question(s.planning(), { step: "plan" }), moves: false, waits: true, why: "only the answer restarts planning" },
  { given: "a plan to confirm", state: s.confirming, moves: false, waits: true, why: "a person confirms" },
  { given: "two tasks at work", state: s.running, moves: true, waits: false, why: "no question" },
  { given: "T-1 questioned, T-2 at work", state: s.questioned, moves: true, waits: false, why: "the question blocks T-1 (and T-3), not T-2" },
  { given: "T-1 questioned, T-2 waiting for its review", state: s.questionedReviewing, moves: true, waits: false, why: "T-2's review goes on" },
  { given: "T-1 questioned while T-2 merges", state: s.questionedMerging, moves: true, waits: false, why: "the merge goes on" },
  { given: "T-1 questioned, T-2 merged: the run stopped blocked", state: s.questionedThenMerged, moves: false, waits: false, why: "finished: headless ends on its final check instead" },
  { given: "a failed baseline's question", state: s.baselineFailed, moves: false, waits: true, why: "no task starts before the answer" },
  { given: "the baseline running", state: s.baselineRunning, moves: true, waits: false, why: "the baseline is at work" },
  { given: "paused, with a question, T-2 at work", state: s.pausedQuestioned, moves: true, waits: false, why: "work in flight finishes" },
  { given: "frozen for a change, T-1 questioned", state: s.frozenQuestioned, moves: true, waits: false, why: "the Architect plans the change; T-2 works" },
  {
    given: "frozen, the change step failed and asked, nothing else in flight",
    state: () => question({ ...s.frozenQuestioned(), tasks: s.frozenQuestioned().tasks.map((t) => (t.id === "T-2" ? { ...t, status: "merged" } : t)), active: [] }, { step: "change" }),
    moves: false,
    waits: true,
    why: "the change waits for its answer and nothing else may start while frozen",
  },
  {
    given: "a question of no task while a ready task of the current phase waits for a slot",
    state: () => question({ ...s.running(), tasks: s.running().tasks.map((t) => (t.status === "running" ? { ...t, status: "merged" } : t)), active: [], ready: ["T-3"] }, {}),
    moves: true,
    waits: false,
    why: "the ready task may start",
  },
  {
    given: "a question while only a later phase's task is ready",
    state: () => question({ ...s.running(), tasks: s.running().tasks.map((t) => (t.status === "running" ? { ...t, status: "blocked" } : t)), active: [], ready: ["T-4"] }, {}),
    moves: false,
    waits: true,
    why: "phase 2 waits for phase 1",
  },
  {
    given: "a spent run budget's question with ready work",
    state: () => question({ ...s.running(), tasks: s.running().tasks.map((t) => (t.status === "running" ? { ...t, status: "blocked" } : t)), active: [], ready: ["T-3"], runBudgetSpent: true }, {}),
    moves: false,
    waits: true,
    why: "nothing starts until the budget is raised",
  },
]

describe("what can move without a person", () => {
  for (const row of rows)
    it(`${row.given}: ${row.moves ? "moves" : "does not move"}, ${row.waits ? "waits only for a person" : "does not wait only for a person"} (${row.why})`, () => {
      const state = row.state()
      expect([movesWithoutPerson(state), waitsOnlyForPerson(state)]).toEqual([row.moves, row.waits])
    })
})

describe("a headless run's end, from the same states", () => {
  it("a question on T-1 while T-2 works: the run goes on; with exitOnQuestion it stops at once", () => {
    expect(headlessEnd(s.questioned())).toBeUndefined()
    expect(headlessEnd(s.questioned(), { exitOnQuestion: true })).toBe("waits")
    expect(exitCodeOf(s.questioned())).toBe(2)
  })

  it("once T-2 merged the run stops blocked: it ends on its final check and exits 2", () => {
    const blocked = s.questionedThenMerged()
    expect([blocked.stage, blocked.finished?.status, blocked.tasks.map((t) => t.status)]).toEqual(["finished", "blocked", ["blocked", "merged", "blocked", "blocked"]])
    expect(headlessEnd(blocked)).toBeUndefined()
    const checked = apply(blocked, { type: "finalCheck.done", status: "passed", message: "ok" }).state
    expect(headlessEnd(checked)).toBe("ended")
    expect(exitCodeOf(checked)).toBe(2)
  })

  it("the watchdog's question (nothing found at work) waits, though a task still reads as active", () => {
    const stalled = apply(s.running(), { type: "runtime.fault", source: "watchdog", message: "stalled", state: "stage running, tasks: 2 running" }).state
    expect(stalled.questions).toEqual([expect.objectContaining({ fault: true })])
    expect(movesWithoutPerson(stalled)).toBe(false)
    expect(headlessEnd(stalled)).toBe("waits")
  })

  it("a question that holds everything (a failed baseline) waits without exitOnQuestion too", () => {
    expect(headlessEnd(s.baselineFailed())).toBe("waits")
    expect(headlessEnd(s.confirming())).toBe("waits")
  })
})
