import { describe, expect, it } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import type { BudgetLimits } from "../../src/scheduler/core/event.schema"
import { transition } from "../../src/scheduler/core/machine"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import { AT, apply, complete, passFinalReview, delta, ev, graphOf, runtimeOf, started, steps, task, type EventInput } from "./fixtures"
import { deepFreeze } from "./invariants"
import { checkRow, type TableRow } from "./table"

/**
 * The rules as a table: given a state, an event → the statuses that change and the commands, in order.
 * Commands are written type:task[:role:attempt] so a row reads like the rule it checks.
 *
 * The graph: T-1 and T-3 write the same region of a.cpp (they must not run together); T-2 needs T-1;
 * T-5 is independent; T-4 is phase 2. The cap is 2.
 */
const graph = graphOf(
  task("T-1", { writeSet: [{ path: "a.cpp", action: "modify", region: "f" }] }),
  task("T-2", { deps: ["T-1"] }),
  task("T-3", { writeSet: [{ path: "a.cpp", action: "modify", region: "f" }] }),
  task("T-4", { phase: 2 }),
  task("T-5"),
)
const config = { concurrency: 2, repairBudget: 1, stallRetries: 1 }
const limits = (set: Partial<BudgetLimits>): BudgetLimits => ({ taskRequests: 0, runRequests: 0, taskTokens: 0, runTokens: 0, runMinutes: 0, ...set })
const usage = (sessionId: string, taskId: string | undefined, requests: number, tokens: number): EventInput => ({ type: "usage.recorded", sessionId, ...(taskId ? { taskId } : {}), role: taskId ? "executor" : "architect", requests, tokens })
const cleanChecklist = {
  lifetimes: { status: "checked", note: "no references escape" },
  rawPointers: { status: "not-applicable", note: "" },
  concurrency: { status: "not-applicable", note: "" },
  exceptions: { status: "not-applicable", note: "" },
  integerOverflow: { status: "checked", note: "" },
  undefinedBehaviour: { status: "checked", note: "" },
  loggingKeyPaths: { status: "not-applicable", note: "" },
  loggingFormat: { status: "not-applicable", note: "" },
} as const

function show(command: Command): string {
  if (command.type === "dispatch") return `dispatch:${command.taskId}:${command.role}:${command.attempt}`
  if (command.type === "merge") return `merge:${command.tasks.map((t) => t.taskId).join("+")}`
  if ("taskId" in command) return `${command.type}:${command.taskId}`
  if (command.type === "finish") return `finish:${command.status}`
  if (command.type === "reviewMilestone") return `reviewMilestone:${command.phase}`
  if (command.type === "ask") return `ask:${command.questionId}`
  return command.type
}

// States along the way, built by real events so they can never drift from what the machine produces.
const s = {
  idle: () => initialState(),
  planning: () => apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: { ...started(graph).state.config!, ...config } }).state,
  confirming: () => apply(s.planning(), { type: "plan.proposed", summary: "plan" }).state,
  confirmed: () => apply(s.confirming(), { type: "plan.confirmed" }).state,
  /** T-1 and T-5 dispatched. */
  fresh: () => started(graph, config).state,
  running: () => apply(s.fresh(), steps.dispatched("T-1"), steps.dispatched("T-5")).state,
  gating: () => apply(s.running(), steps.reported("T-1")).state,
  reviewing: () => apply(s.gating(), steps.gatesPassed("T-1")).state,
  reviewStarted: () => apply(s.reviewing(), steps.reviewStarted("T-1")).state,
  /** T-1 merging. */
  merging: () => apply(s.reviewing(), steps.reviewPass("T-1")).state,
  /** T-1 merging, T-5 waiting in the merge queue. */
  queued: () => apply(s.merging(), steps.reported("T-5"), steps.gatesPassed("T-5"), steps.reviewPass("T-5")).state,
  debugging: () => apply(s.gating(), steps.gatesFailed("T-1", "build")).state,
  /** The repair budget of T-1 (1) is spent: the next gate failure consults. */
  budgetSpent: () => apply(s.debugging(), steps.dispatched("T-1", 2, "debugger"), steps.reported("T-1", 2, "debugger")).state,
  consulting: () => apply(s.budgetSpent(), steps.gatesFailed("T-1", "test")).state,
  /** The scheduler agent could not decide: the Architect is consulted on T-1. */
  consultingArchitect: () => apply(s.consulting(), { type: "consult.answered", taskId: "T-1", choice: "block", by: "scheduler" }).state,
  /** T-1's executor said it is blocked: the Architect is consulted first. */
  fieldBlocked: () => apply(s.running(), { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "", blocked: { reason: "which API?" } } }).state,
  /** The Architect could not decide either: T-1 is blocked and the user is asked. */
  blocked: () => apply(s.fieldBlocked(), { type: "consult.answered", taskId: "T-1", choice: "block", by: "architect", reason: "the user must pick the API" }).state,
  /** The reviewer blocked T-1's release: the Architect is consulted. */
  releaseBlocked: () => apply(s.reviewing(), { type: "review.reported", taskId: "T-1", report: { taskId: "T-1", verdict: "block-release", rows: [{ designRef: "ADR-1", code: "a.cpp:f", status: "divergent", note: "" }], findings: ["breaks ADR-1"], checklist: cleanChecklist } }).state,
  /** Everything but T-4 (phase 2) merged: the milestone of phase 1 is due. */
  milestone: () => {
    let state = complete(complete(s.running(), "T-5").state, "T-1").state
    state = complete(state, "T-2").state
    return complete(state, "T-3").state
  },
  /** Another graph, five independent tasks at cap 2: A merging (C took its slot), B reviewing. */
  slots: () => apply(started(graphOf(task("A"), task("B"), task("C"), task("D"), task("E")), config).state, steps.dispatched("A"), steps.dispatched("B"), steps.reported("A"), steps.gatesPassed("A"), steps.reviewPass("A")).state,
  /** A merging, B queued behind it, C and D at work: both slots taken. */
  slotsFull: () => apply(s.slots(), steps.reported("B"), steps.gatesPassed("B"), steps.reviewPass("B"), steps.dispatched("C"), steps.dispatched("D")).state,
  /** After A's merge conflicted (A back at work), B merging, C queued, D reviewing: A and D hold the two slots. */
  overQueued: () => apply(s.slotsFull(), { type: "merge.conflicted", taskId: "A", files: ["src/A.cpp"] }, steps.reported("C"), steps.gatesPassed("C"), steps.reviewPass("C"), steps.reported("D"), steps.gatesPassed("D")).state,
  /** B merged; C and D, queued meanwhile, merge as one batch. */
  batch: () => apply(s.overQueued(), steps.reviewPass("D"), steps.merged("B")).state,
  /** The batch C+D failed its merge build: C is merged alone first, D waits as the second half. */
  bisecting: () => apply(s.batch(), { type: "merge.batch-rejected", taskIds: ["C", "D"], message: "build failed", evidencePath: "/e/_merge/build.log" }).state,
  milestoneReviewing: () => apply(s.milestone(), { type: "milestone.reached", phase: 1 }).state,
  phase2: () => apply(s.milestoneReviewing(), { type: "milestone.reviewed", phase: 1, verdict: "pass" }).state,
  frozen: () => apply(s.running(), { type: "change.requested", text: "add tabs" }).state,
  paused: () => apply(s.running(), { type: "run.paused" }).state,
  /** T-1 blocked with T-2 waiting on it; T-5 and T-3 merged: the run stops, blocked. */
  finishedBlocked: () => {
    return complete(complete(s.blocked(), "T-5").state, "T-3").state
  },
  /** The same run with the baseline on (the toolchain has build and test commands), plan confirmed. */
  baselineConfirmed: () =>
    apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: { ...started(graph).state.config!, ...config, baseline: true } }, { type: "plan.proposed", summary: "plan" }, { type: "plan.confirmed" }).state,
  /** The graph accepted, the baseline (started at the confirmation) running: nothing dispatched yet. */
  baselineRunning: () => apply(s.baselineConfirmed(), { type: "graph.accepted", graph }).state,
  /** The baseline on, the plan not yet confirmed. */
  baselineConfirming: () =>
    apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: { ...started(graph).state.config!, ...config, baseline: true } }, { type: "plan.proposed", summary: "plan" }).state,
  /** The baseline's test `calc_old` failed: the run waits for the user. */
  baselineFailed: () => apply(s.baselineRunning(), baselineFailedTests).state,
  /** The baseline did not build and the user went on; T-1 at the gates. */
  baselineBuildAccepted: () =>
    apply(s.baselineRunning(), { type: "baseline.done", commit: "c0ffee", status: "failed", buildFailed: true, failingTests: [], message: "`cmake --build .air-build` exited 2: src/a.cpp:3: error: x" }, { type: "question.answered", questionId: "baseline:1:question", answer: "go on" }, steps.dispatched("T-1"), steps.reported("T-1")).state,
}
const baselineFailedTests: EventInput = { type: "baseline.done", commit: "c0ffee", status: "failed", failingTests: ["calc_old"], message: "`ctest --test-dir .air-build` exited 8" }

const rows: TableRow[] = [
  { rule: "a run starts in planning", given: s.idle, event: { type: "run.started", runId: "r1", requirement: "req", config: started(graph).state.config! }, commands: ["plan", "notify"], check: (st) => expect(st.stage).toBe("planning") },
  { rule: "a new run may start after the last one finished", given: () => passFinalReview(complete(s.phase2(), "T-4").state).state, event: { type: "run.started", runId: "r2", requirement: "again", config: started(graph).state.config! }, commands: ["plan", "notify"], check: (st) => expect([st.runId, st.stage, st.graph]).toEqual(["r2", "planning", null]) },
  { rule: "a proposed plan waits for the user", given: s.planning, event: { type: "plan.proposed", summary: "3 tasks" }, commands: ["notify"], check: (st) => expect(st.stage).toBe("confirming") },
  { rule: "with autoConfirm a proposed plan is confirmed at once", given: () => apply(initialState(), { type: "run.started", runId: "r", requirement: "q", config: { ...started(graph).state.config!, autoConfirm: true } }).state, event: { type: "plan.proposed", summary: "p" }, commands: ["notify"], check: (st) => expect(st.stage).toBe("confirmed") },
  { rule: "the user's change to a proposed plan goes back to the Architect", given: s.confirming, event: { type: "plan.revision.requested", text: "split T-2" }, commands: ["notify"], check: (st) => expect([st.stage, st.planRevision]).toEqual(["planning", "split T-2"]) },
  { rule: "the revised proposal waits for the user again", given: () => apply(s.confirming(), { type: "plan.revision.requested", text: "split T-2" }).state, event: { type: "plan.proposed", summary: "plan v2" }, commands: ["notify"], check: (st) => expect([st.stage, st.planSummary, st.planRevision]).toEqual(["confirming", "plan v2", undefined]) },
  { rule: "the user's confirmation opens the door for a graph", given: s.confirming, event: { type: "plan.confirmed" }, commands: ["notify"], check: (st) => expect(st.stage).toBe("confirmed") },
  {
    rule: "an accepted graph dispatches ready tasks in id order up to the cap, holding back conflicts, unmet deps and later phases",
    given: s.confirmed,
    event: { type: "graph.accepted", graph },
    statuses: { "T-1": "running", "T-2": "pending", "T-3": "pending", "T-4": "pending", "T-5": "running" },
    commands: ["notify", "dispatch:T-1:executor:1", "dispatch:T-5:executor:1"],
  },
  {
    rule: "with the baseline on, the user's confirmation builds and tests the integration head while the Architect writes the graph",
    given: s.baselineConfirming,
    event: { type: "plan.confirmed" },
    commands: ["notify", "runBaseline", "notify"],
    check: (st, cmds) => expect([st.stage, st.baseline?.status, cmds.find((c) => c.type === "runBaseline")?.id]).toEqual(["confirmed", "running", "baseline:1"]),
  },
  {
    rule: "with the baseline on and the plan confirmed automatically, the run's start builds and tests the integration head while the Architect plans",
    given: s.idle,
    event: { type: "run.started", runId: "r1", requirement: "req", config: { ...started(graph).state.config!, ...config, baseline: true, autoConfirm: true } },
    commands: ["plan", "notify", "runBaseline", "notify"],
    check: (st) => expect([st.stage, st.baseline?.status]).toEqual(["planning", "running"]),
  },
  { rule: "with the baseline on and the plan waiting for the user, nothing is built yet", given: s.idle, event: { type: "run.started", runId: "r1", requirement: "req", config: { ...started(graph).state.config!, ...config, baseline: true } }, commands: ["plan", "notify"], check: (st) => expect(st.baseline).toBeNull() },
  {
    rule: "with the baseline still running, an accepted graph dispatches nothing and starts no second baseline",
    given: s.baselineConfirmed,
    event: { type: "graph.accepted", graph },
    statuses: { "T-1": "pending", "T-5": "pending" },
    commands: ["notify"],
    check: (st) => expect([st.baseline?.status, st.baseline?.runs]).toEqual(["running", 1]),
  },
  {
    rule: "a baseline done before the graph lets the graph's ready tasks start at once",
    given: () => apply(s.baselineConfirmed(), { type: "baseline.done", commit: "c0ffee", status: "passed", failingTests: [], message: "" }).state,
    event: { type: "graph.accepted", graph },
    statuses: { "T-1": "running", "T-5": "running" },
    commands: ["notify", "dispatch:T-1:executor:1", "dispatch:T-5:executor:1"],
  },
  {
    rule: "a log whose baseline was not started before the graph (written before it was) starts it at the graph",
    given: () => ({ ...s.baselineConfirmed(), baseline: null }),
    event: { type: "graph.accepted", graph },
    statuses: { "T-1": "pending" },
    commands: ["notify", "runBaseline", "notify"],
  },
  { rule: "a passing baseline lets the ready tasks start", given: s.baselineRunning, event: { type: "baseline.done", commit: "c0ffee", status: "passed", failingTests: [], message: "" }, statuses: { "T-1": "running", "T-5": "running" }, commands: ["notify", "dispatch:T-1:executor:1", "dispatch:T-5:executor:1"] },
  { rule: "a skipped baseline (no build or test command) lets the tasks start", given: s.baselineRunning, event: { type: "baseline.done", commit: "c0ffee", status: "skipped", failingTests: [], message: "no build or test command" }, statuses: { "T-1": "running" }, commands: ["notify", "dispatch:T-1:executor:1", "dispatch:T-5:executor:1"] },
  {
    rule: "a baseline with failing tests stops the run before any dispatch with one question",
    given: s.baselineRunning,
    event: baselineFailedTests,
    statuses: { "T-1": "pending", "T-5": "pending" },
    commands: ["ask:baseline:1:question", "notify"],
    check: (st) => {
      expect(st.questions).toHaveLength(1)
      expect(st.questions[0]!.text).toMatch(/calc_old[\s\S]*ctest --test-dir[\s\S]*"fixed"[\s\S]*"go on"/)
      expect(st.stage).toBe("running")
    },
  },
  { rule: "a baseline that could not run also asks before any dispatch", given: s.baselineRunning, event: { type: "baseline.done", commit: "c0ffee", status: "errored", failingTests: [], message: "git: no such ref" }, commands: ["ask:baseline:1:question", "notify"] },
  {
    rule: '"go on" records the baseline\'s failures as known and dispatches',
    given: s.baselineFailed,
    event: { type: "question.answered", questionId: "baseline:1:question", answer: "go on" },
    statuses: { "T-1": "running", "T-5": "running" },
    commands: ["notify", "dispatch:T-1:executor:1", "dispatch:T-5:executor:1"],
    check: (st) => expect([st.baseline?.accepted, st.baseline?.failingTests, st.questions]).toEqual([true, ["calc_old"], []]),
  },
  { rule: "any other answer (the user fixed it) runs the baseline again", given: s.baselineFailed, event: { type: "question.answered", questionId: "baseline:1:question", answer: "fixed" }, statuses: { "T-1": "pending" }, commands: ["runBaseline", "notify"], check: (st, cmds) => expect([st.baseline?.status, st.baseline?.accepted, cmds[0]!.id]).toEqual(["running", false, "baseline:2"]) },
  {
    rule: "a task's build failing after the baseline's build failed (and the user went on) asks the user, never the Debugger",
    given: s.baselineBuildAccepted,
    event: steps.gatesFailed("T-1", "build"),
    statuses: { "T-1": "blocked" },
    commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"],
    check: (st) => expect([runtimeOf(st, "T-1").resume, runtimeOf(st, "T-1").repairs]).toEqual(["gates", 0]),
  },
  { rule: "a test failure after an accepted baseline still goes to the Debugger (the test gate filtered the inherited ones)", given: () => apply(s.baselineFailed(), { type: "question.answered", questionId: "baseline:1:question", answer: "go on" }, steps.dispatched("T-1"), steps.reported("T-1")).state, event: steps.gatesFailed("T-1", "test"), statuses: { "T-1": "debugging" }, commands: ["dispatch:T-1:debugger:2"] },
  {
    rule: "the integration branch moved under the run by someone else: the baseline is taken again, its last record kept meanwhile",
    given: () => apply(s.baselineRunning(), { type: "baseline.done", commit: "c0ffee", status: "passed", failingTests: [], message: "" }).state,
    event: { type: "integration.moved", commit: "beef01" },
    commands: ["notify", "runBaseline", "notify"],
    check: (st, cmds) => expect([st.baseline?.status, st.baseline?.commit, cmds[1]!.id]).toEqual(["running", "c0ffee", "baseline:2"]),
  },
  {
    rule: "a re-run baseline that fails asks again, even after an earlier 'go on'",
    given: () => apply(s.baselineFailed(), { type: "question.answered", questionId: "baseline:1:question", answer: "go on" }, { type: "integration.moved", commit: "beef01" }).state,
    event: { type: "baseline.done", commit: "beef01", status: "failed", failingTests: ["calc_old", "calc_new"], message: "ctest failed" },
    commands: ["ask:baseline:2:question", "notify"],
    check: (st) => expect([st.baseline?.accepted, st.baseline?.failingTests]).toEqual([false, ["calc_old", "calc_new"]]),
  },
  { rule: "a dispatch is confirmed with its session", given: s.fresh, event: steps.dispatched("T-1"), commands: [], check: (st) => expect(runtimeOf(st, "T-1").sessionId).toBe("s-T-1-1") },
  { rule: "a worker's report is a request for the gates, never done", given: s.running, event: steps.reported("T-1"), statuses: { "T-1": "gating" }, commands: ["runGates:T-1"] },
  { rule: "a worker that says it is blocked reaches the Architect first, not the user", given: s.running, event: { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "", blocked: { reason: "which API?" } } }, statuses: { "T-1": "consulting" }, commands: ["consult:T-1"], check: (st, commands) => { expect(st.questions).toEqual([]); expect(runtimeOf(st, "T-1").consultBy).toBe("architect"); expect(commands[0]).toMatchObject({ agent: "architect", options: ["executor-again", "block"] }); expect((commands[0] as { question: string }).question).toMatch(/blocked: which API\?/) } },
  { rule: "a worker that finds a missing dependency reaches the Architect with the plan issue", given: s.running, event: { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "stopped", planIssue: { kind: "missing-dependency", detail: "needs T-5's parser first" } } }, statuses: { "T-1": "consulting" }, commands: ["consult:T-1"], check: (st, commands) => { expect(st.questions).toEqual([]); expect((commands[0] as { question: string }).question).toMatch(/finds the plan wrong \(missing-dependency\): needs T-5's parser first/); expect(runtimeOf(st, "T-1").lastFailure?.source).toBe("plan") } },
  { rule: "a debugger's plan issue offers the Architect another debugger run too", given: () => apply(started(graph, { ...config, repairBudget: 2 }).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesFailed("T-1", "build"), steps.dispatched("T-1", 2, "debugger")).state, event: { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-2", result: { taskId: "T-1", role: "debugger", summary: "", planIssue: { kind: "write-set", detail: "the fix is in b.cpp" } } }, statuses: { "T-1": "consulting" }, commands: ["consult:T-1"], check: (_st, commands) => expect(commands[0]).toMatchObject({ agent: "architect", options: ["debug-again", "executor-again", "block"] }) },
  { rule: "a plan issue with the repair budget spent goes to the user: no endless worker–Architect loop", given: () => apply(s.fieldBlocked(), { type: "consult.answered", taskId: "T-1", choice: "executor-again", by: "architect" }, steps.dispatched("T-1", 2)).state, event: { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-2", result: { taskId: "T-1", role: "executor", summary: "", planIssue: { kind: "interface", detail: "Parser::feed does not exist" } } }, statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect(st.questions[0]!.text).toMatch(/Parser::feed does not exist \(the repair budget of 1 is spent\)/) },
  {
    rule: "the Architect answers a missing dependency with a plan delta: the new task runs first, the user is never asked",
    given: s.fieldBlocked,
    event: { type: "consult.replanned", taskId: "T-1", delta: delta({ add: [task("T-0", { writeSet: [{ path: "z.cpp", action: "create" }] })], modify: [{ id: "T-1", patch: { deps: ["T-0"] } }] }) },
    statuses: { "T-1": "pending", "T-0": "running" },
    commands: ["notify", "notify", "dispatch:T-0:executor:1"],
    check: (st) => { expect(st.questions).toEqual([]); expect(st.graph!.tasks.find((t) => t.id === "T-1")!.deps).toEqual(["T-0"]); expect(runtimeOf(st, "T-1").consultBy).toBeNull() },
  },
  { rule: "a consult delta that leaves the task alone sends it back to work on the new plan", given: s.fieldBlocked, event: { type: "consult.replanned", taskId: "T-1", delta: delta({ modify: [{ id: "T-2", patch: { doneWhen: "uses the v2 API" } }] }) }, statuses: { "T-1": "running" }, commands: ["notify", "dispatch:T-1:executor:2", "notify"], check: (st) => expect(runtimeOf(st, "T-1").consultOptions).toBeNull() },
  { rule: "a worker error is dispatched once more", given: s.running, event: { type: "worker.failed", taskId: "T-1", sessionId: "s-T-1-1", reason: "error", message: "500" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").stalls).toBe(1) },
  { rule: "a second stall blocks the task and tells Main", given: () => apply(s.running(), { type: "worker.failed", taskId: "T-1", sessionId: "s-T-1-1", reason: "stalled", message: "" }, steps.dispatched("T-1", 2)).state, event: { type: "worker.failed", taskId: "T-1", sessionId: "s-T-1-2", reason: "stalled", message: "" }, statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"] },
  { rule: "an aborted session blocks the task at once", given: s.running, event: { type: "worker.failed", taskId: "T-1", sessionId: "s-T-1-1", reason: "aborted", message: "user pressed stop" }, statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"] },
  { rule: "a worker session lost in a restart is dispatched again without spending a stall", given: s.running, event: { type: "session.lost", taskId: "T-1", sessionId: "s-T-1-1" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect([runtimeOf(st, "T-1").stalls, runtimeOf(st, "T-1").repairs]).toEqual([0, 0]) },
  { rule: "many restarts never block a task: each lost session is dispatched again", given: () => apply(s.running(), { type: "session.lost", taskId: "T-1", sessionId: "s-T-1-1" }, steps.dispatched("T-1", 2), { type: "session.lost", taskId: "T-1", sessionId: "s-T-1-2" }, steps.dispatched("T-1", 3)).state, event: { type: "session.lost", taskId: "T-1", sessionId: "s-T-1-3" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:4"], check: (st) => expect(runtimeOf(st, "T-1").stalls).toBe(0) },
  { rule: "a lost debugger session goes back to a debugger", given: () => apply(s.debugging(), steps.dispatched("T-1", 2, "debugger")).state, event: { type: "session.lost", taskId: "T-1", sessionId: "s-T-1-2" }, statuses: { "T-1": "debugging" }, commands: ["dispatch:T-1:debugger:3"], check: (st) => expect(runtimeOf(st, "T-1").repairs).toBe(1) },
  { rule: "a review session lost in a restart is asked again without spending a stall", given: s.reviewStarted, event: { type: "session.lost", taskId: "T-1", sessionId: "rv-T-1" }, statuses: { "T-1": "reviewing" }, commands: ["review:T-1"], check: (st) => expect([runtimeOf(st, "T-1").stalls, runtimeOf(st, "T-1").reviewSessionId]).toEqual([0, null]) },
  { rule: "the inactivity timer aborts a stalled worker and dispatches it again", given: s.running, event: { type: "timer.fired", taskId: "T-1", kind: "inactivity" }, statuses: { "T-1": "running" }, commands: ["abort:T-1", "dispatch:T-1:executor:2"] },
  { rule: "a stalled reviewer is aborted and the review asked again", given: s.reviewStarted, event: { type: "timer.fired", taskId: "T-1", kind: "wallclock" }, statuses: { "T-1": "reviewing" }, commands: ["abort:T-1", "review:T-1"] },
  { rule: "the start of the gates is recorded", given: s.gating, event: { type: "gates.started", taskId: "T-1" }, commands: [], check: (st) => expect(runtimeOf(st, "T-1").gatesStarted).toBe(true) },
  { rule: "passed gates with the evidence of the kind go to review", given: s.gating, event: steps.gatesPassed("T-1"), statuses: { "T-1": "reviewing" }, commands: ["review:T-1"] },
  { rule: "a build failure goes to the debugger with the evidence", given: s.gating, event: steps.gatesFailed("T-1", "build"), statuses: { "T-1": "debugging" }, commands: ["dispatch:T-1:debugger:2"], check: (st) => expect(runtimeOf(st, "T-1").lastFailure).toEqual({ source: "build", message: "build broke", evidencePath: "ev/T-1/build" }) },
  { rule: "a clang-tidy failure (a finding the task introduced) goes to the debugger", given: s.gating, event: steps.gatesFailed("T-1", "clang-tidy"), statuses: { "T-1": "debugging" }, commands: ["dispatch:T-1:debugger:2"], check: (st) => expect(runtimeOf(st, "T-1").lastFailure?.source).toBe("clang-tidy") },
  { rule: "an analysis failure with the repair budget spent is a consult", given: s.budgetSpent, event: steps.gatesFailed("T-1", "analysis"), statuses: { "T-1": "consulting" }, commands: ["consult:T-1"], check: (st) => expect(runtimeOf(st, "T-1").consultOptions).toEqual(["debug-again", "executor-again", "block"]) },
  { rule: 'a "done" with no diff goes back to the executor, spending budget', given: s.gating, event: steps.gatesFailed("T-1", "diff"), statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").repairs).toBe(1) },
  { rule: "a missing commit goes back to the executor", given: s.gating, event: steps.gatesFailed("T-1", "commit"), statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"] },
  { rule: "a missing tool blocks the task until the user answers; it resumes at the gates", given: s.gating, event: steps.gatesFailed("T-1", "tool-missing"), statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect(runtimeOf(st, "T-1").resume).toBe("gates") },
  { rule: "missing evidence for the task's kind goes back to the executor", given: s.gating, event: steps.gatesFailed("T-1", "evidence"), statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"] },
  // A failure carries its route (the gate declared it): the machine decides by the route, for gates it never heard of.
  { rule: "a failure routed to the debugger goes to the debugger, whatever the gate (one the core never heard of)", given: s.gating, event: steps.gatesFailed("T-1", "lint", "debugger"), statuses: { "T-1": "debugging" }, commands: ["dispatch:T-1:debugger:2"], check: (st) => expect(runtimeOf(st, "T-1").lastFailure).toEqual({ source: "lint", message: "lint broke", evidencePath: "ev/T-1/lint" }) },
  { rule: "a failure routed to the debugger with the repair budget spent is a consult offering the debugger again", given: s.budgetSpent, event: steps.gatesFailed("T-1", "lint", "debugger"), statuses: { "T-1": "consulting" }, commands: ["consult:T-1"], check: (st) => expect(runtimeOf(st, "T-1").consultOptions).toEqual(["debug-again", "executor-again", "block"]) },
  { rule: "a failure routed to the executor goes back to the executor, spending budget", given: s.gating, event: steps.gatesFailed("T-1", "license-header", "executor"), statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").repairs).toBe(1) },
  { rule: "a failure routed to the executor with the repair budget spent is a consult without the debugger", given: s.budgetSpent, event: steps.gatesFailed("T-1", "license-header", "executor"), statuses: { "T-1": "consulting" }, commands: ["consult:T-1"], check: (st) => expect(runtimeOf(st, "T-1").consultOptions).toEqual(["executor-again", "block"]) },
  { rule: "a failure routed to the user blocks the task with the gate's message; it resumes at the gates", given: s.gating, event: steps.gatesFailed("T-1", "secret-scan", "user"), statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect([runtimeOf(st, "T-1").resume, runtimeOf(st, "T-1").repairs, runtimeOf(st, "T-1").lastFailure?.source]).toEqual(["gates", 0, "secret-scan"]) },
  { rule: "a failure routed as a missing tool blocks the task; it resumes at the gates", given: s.gating, event: steps.gatesFailed("T-1", "tool-missing", "block-for-tool"), statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect(runtimeOf(st, "T-1").resume).toBe("gates") },
  { rule: "a failure routed debugger-unless-baseline-build-failed goes to the debugger when the baseline built", given: s.gating, event: steps.gatesFailed("T-1", "release-build", "debugger-unless-baseline-build-failed"), statuses: { "T-1": "debugging" }, commands: ["dispatch:T-1:debugger:2"] },
  { rule: "a failure routed debugger-unless-baseline-build-failed blocks when the baseline's build failed and the user went on", given: s.baselineBuildAccepted, event: steps.gatesFailed("T-1", "release-build", "debugger-unless-baseline-build-failed"), statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect([runtimeOf(st, "T-1").resume, runtimeOf(st, "T-1").repairs]).toEqual(["gates", 0]) },
  { rule: "the route an event carries wins over the one an old log's gate id had", given: s.gating, event: steps.gatesFailed("T-1", "build", "executor"), statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"] },
  { rule: "a wall-clock timeout is treated like a stall: one more dispatch", given: s.running, event: { type: "worker.failed", taskId: "T-5", sessionId: "s-T-5-1", reason: "timeout", message: "60 min" }, statuses: { "T-5": "running" }, commands: ["dispatch:T-5:executor:2"] },
  { rule: "the consulted scheduler may send the executor again", given: s.consulting, event: { type: "consult.answered", taskId: "T-1", choice: "executor-again", by: "scheduler" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:3"] },
  {
    rule: "the consulted scheduler may ask for another review",
    given: () => apply(s.reviewing(), { type: "review.reported", taskId: "T-1", report: { taskId: "T-1", verdict: "pass", rows: [{ designRef: "R", code: "c", status: "missing", note: "" }], findings: [] } }).state,
    event: { type: "consult.answered", taskId: "T-1", choice: "review-again", by: "scheduler" },
    statuses: { "T-1": "reviewing" },
    commands: ["review:T-1"],
  },
  {
    rule: "a merge conflict that keeps coming back, with the budget spent, is a consult",
    given: () => apply(s.merging(), { type: "merge.conflicted", taskId: "T-1", files: ["a.cpp"] }, steps.dispatched("T-1", 2), steps.reported("T-1", 2), steps.gatesPassed("T-1"), steps.reviewPass("T-1")).state,
    event: { type: "merge.conflicted", taskId: "T-1", files: ["a.cpp"] },
    statuses: { "T-1": "consulting" },
    commands: ["consult:T-1"],
  },
  {
    rule: "a task invalidated while its merge runs holds its files until the merge lands, and is reverted then",
    given: () => apply(s.merging(), { type: "change.requested", text: "drop T-1" }, { type: "delta.accepted", delta: delta({ remove: ["T-1", "T-2"] }) }).state,
    event: steps.merged("T-1"),
    statuses: { "T-1": "invalidated" },
    commands: ["revert:T-1", "dispatch:T-3:executor:1"],
    check: (st) => expect(st.merging).toEqual([]),
  },
  { rule: "the reviewer's session is recorded", given: s.reviewing, event: steps.reviewStarted("T-1"), commands: [], check: (st) => expect(runtimeOf(st, "T-1").reviewSessionId).toBe("rv-T-1") },
  { rule: "a passing review with every row matching goes to merge", given: s.reviewStarted, event: steps.reviewPass("T-1"), statuses: { "T-1": "merging" }, commands: ["merge:T-1"], check: (st) => expect(st.merging).toEqual(["T-1"]) },
  { rule: "merges go one at a time: a second waits in the queue", given: () => apply(s.merging(), steps.reported("T-5"), steps.gatesPassed("T-5")).state, event: steps.reviewPass("T-5"), statuses: { "T-5": "merge_queued" }, commands: [], check: (st) => expect(st.mergeQueue).toEqual(["T-5"]) },
  { rule: "a failing review sends the executor back with the findings", given: s.reviewing, event: steps.reviewFail("T-1"), statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").findings).toEqual(["add tests", "missing: R1 ↔ f — no tests"]) },
  { rule: "a checklist finding fails a pass verdict: the executor repairs it", given: s.reviewing, event: { type: "review.reported", taskId: "T-1", report: { taskId: "T-1", verdict: "pass", rows: [{ designRef: "R", code: "c", status: "match", note: "" }], findings: [], checklist: { ...cleanChecklist, integerOverflow: { status: "finding", file: "a.cpp", line: 12, note: "a * b overflows int" } } } }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").findings).toEqual(["checklist integer overflow: a.cpp:12 — a * b overflows int"]) },
  { rule: "a clean checklist with matching rows still merges", given: s.reviewing, event: { type: "review.reported", taskId: "T-1", report: { taskId: "T-1", verdict: "pass", rows: [{ designRef: "R", code: "c", status: "match", note: "" }], findings: [], checklist: cleanChecklist } }, statuses: { "T-1": "merging" }, commands: ["merge:T-1"] },
  { rule: "block-release stops the merge and consults the Architect (not the scheduler agent)", given: s.reviewing, event: { type: "review.reported", taskId: "T-1", report: { taskId: "T-1", verdict: "block-release", rows: [{ designRef: "ADR-1", code: "a.cpp:f", status: "divergent", note: "" }], findings: ["breaks ADR-1"], checklist: cleanChecklist } }, statuses: { "T-1": "consulting" }, commands: ["consult:T-1", "notify"], check: (st, commands) => { expect(st.mergeQueue).toEqual([]); expect(st.merging).toEqual([]); expect(commands[0]).toMatchObject({ agent: "architect", options: ["executor-again", "review-again", "block"] }); expect((commands[0] as { question: string }).question).toMatch(/blocks its release: breaks ADR-1/) } },
  { rule: "the Architect may answer a block-release with a plan delta that reworks the task", given: s.releaseBlocked, event: { type: "consult.replanned", taskId: "T-1", delta: delta({ modify: [{ id: "T-1", patch: { doneWhen: "f follows ADR-1" } }] }) }, statuses: { "T-1": "running" }, commands: ["notify", "notify", "dispatch:T-1:executor:2"] },
  { rule: "a pass verdict with a divergent row is contradictory: consult", given: s.reviewing, event: { type: "review.reported", taskId: "T-1", report: { taskId: "T-1", verdict: "pass", rows: [{ designRef: "R", code: "c", status: "divergent", note: "" }], findings: [] } }, statuses: { "T-1": "consulting" }, commands: ["consult:T-1"] },
  { rule: "the start of a merge is recorded", given: s.merging, event: { type: "merge.started", taskId: "T-1" }, commands: [] },
  {
    rule: "a merge releases dependents and conflicting tasks, and starts the next merge in the queue",
    given: s.queued,
    event: steps.merged("T-1"),
    statuses: { "T-1": "merged", "T-5": "merging", "T-2": "running", "T-3": "running" },
    commands: ["notify", "merge:T-5", "dispatch:T-2:executor:1", "dispatch:T-3:executor:1"],
  },
  {
    rule: "tasks waiting for or in their merge hold their files but not their slots",
    given: () => apply(s.slots(), steps.reported("B"), steps.gatesPassed("B")).state,
    event: steps.reviewPass("B"),
    statuses: { A: "merging", B: "merge_queued", C: "running", D: "running", E: "pending" },
    commands: ["dispatch:D:executor:1"],
  },
  {
    rule: "a merge conflict sends its task back to work at once, even over the cap; no new task starts until under it",
    given: s.slotsFull,
    event: { type: "merge.conflicted", taskId: "A", files: ["src/A.cpp"] },
    statuses: { A: "running", B: "merging", C: "running", D: "running", E: "pending" },
    commands: ["dispatch:A:executor:2", "merge:B"],
  },
  {
    rule: "no more than cap tasks waiting for or in their merge give their slots back: worktrees never pile up",
    given: s.overQueued,
    event: steps.reviewPass("D"),
    statuses: { A: "running", B: "merging", C: "merge_queued", D: "merge_queued", E: "pending" },
    commands: [],
  },
  {
    rule: "a new task starts once the count is back under the cap; the merges queued meanwhile go as one batch",
    given: () => apply(s.overQueued(), steps.reviewPass("D")).state,
    event: steps.merged("B"),
    statuses: { B: "merged", C: "merging", D: "merging", E: "running" },
    commands: ["notify", "merge:C+D", "dispatch:E:executor:1"],
  },
  {
    rule: "a batch that fails its merge build blames no task: its halves are merged in turn",
    given: s.batch,
    event: { type: "merge.batch-rejected", taskIds: ["C", "D"], message: "build failed", evidencePath: "/e/_merge/build.log" },
    statuses: { C: "merging", D: "merge_queued" },
    commands: ["notify", "merge:C"],
    check: (st) => expect([st.merging, st.mergeQueue, st.mergeSplits, runtimeOf(st, "C").repairs, runtimeOf(st, "D").lastFailure]).toEqual([["C"], ["D"], [["D"]], 0, null]),
  },
  { rule: "the first half lands: the second half is merged on its own, not batched with others", given: s.bisecting, event: steps.merged("C"), statuses: { C: "merged", D: "merging" }, commands: ["notify", "merge:D"], check: (st) => expect(st.mergeSplits).toEqual([]) },
  {
    rule: "a half of one that fails is that task's fault: the Debugger gets it",
    given: () => apply(s.bisecting(), steps.merged("C")).state,
    event: { type: "merge.rejected", taskId: "D", message: "D breaks the build", evidencePath: "/e/D/merge-3/build.log" },
    statuses: { D: "debugging" },
    commands: ["dispatch:D:debugger:2"],
  },
  {
    rule: "a task deferred by its batch (its change meets another's) goes first in the queue; the batch ends without it",
    given: s.batch,
    event: { type: "merge.deferred", taskId: "D" },
    statuses: { C: "merging", D: "merge_queued" },
    commands: [],
    check: (st) => expect([st.merging, st.mergeQueue]).toEqual([["C"], ["D"]]),
  },
  { rule: "the batch's last outcome starts the next batch", given: () => apply(s.batch(), { type: "merge.deferred", taskId: "D" }).state, event: steps.merged("C"), statuses: { C: "merged", D: "merging" }, commands: ["notify", "merge:D"] },
  {
    rule: "a run logged before batches (no batch size) merges one at a time",
    given: () => {
      const old = graphOf(task("A"), task("B"), task("C"))
      return apply(started(old, { ...config, concurrency: 3, mergeBatch: undefined }).state, steps.dispatched("A"), steps.dispatched("B"), steps.dispatched("C"), ...["A", "B", "C"].flatMap((id) => [steps.reported(id), steps.gatesPassed(id), steps.reviewPass(id)])).state
    },
    event: steps.merged("A"),
    statuses: { B: "merging", C: "merge_queued" },
    commands: ["notify", "merge:B"],
  },
  { rule: "a merge conflict sends the executor back with the conflict", given: s.merging, event: { type: "merge.conflicted", taskId: "T-1", files: ["a.cpp"] }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(st.merging).toEqual([]) },
  { rule: "when every task of a phase is merged, the Architect reviews the milestone", given: () => apply(s.running(), ...[steps.reported("T-5"), steps.gatesPassed("T-5"), steps.reviewPass("T-5"), steps.merged("T-5"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), steps.merged("T-1")], ...[steps.dispatched("T-2"), steps.dispatched("T-3"), steps.reported("T-2"), steps.gatesPassed("T-2"), steps.reviewPass("T-2"), steps.merged("T-2"), steps.reported("T-3"), steps.gatesPassed("T-3"), steps.reviewPass("T-3")]).state, event: steps.merged("T-3"), statuses: { "T-3": "merged", "T-4": "pending" }, commands: ["notify", "reviewMilestone:1", "notify"], check: (st) => expect(st.stage).toBe("milestone") },
  { rule: "the Architect's milestone review starting is recorded", given: s.milestone, event: { type: "milestone.reached", phase: 1 }, commands: [], check: (st) => expect(st.milestone?.reviewing).toBe(true) },
  { rule: "a passing milestone starts the next phase", given: s.milestoneReviewing, event: { type: "milestone.reviewed", phase: 1, verdict: "pass" }, statuses: { "T-4": "running" }, commands: ["notify", "dispatch:T-4:executor:1"], check: (st) => expect([st.stage, st.currentPhase]).toEqual(["running", 2]) },
  {
    rule: "a failing milestone adds its fix tasks to the phase it fixes",
    given: s.milestoneReviewing,
    event: { type: "milestone.reviewed", phase: 1, verdict: "fail", fixTasks: [task("FIX-1", { phase: 7 })] },
    statuses: { "FIX-1": "running", "T-4": "pending" },
    commands: ["notify", "notify", "dispatch:FIX-1:executor:1"],
    check: (st) => expect(st.graph!.tasks.at(-1)!.phase).toBe(1),
  },
  { rule: "everything merged: the Architect's final review of the last phase comes before the end", given: () => apply(s.phase2(), steps.dispatched("T-4"), steps.reported("T-4"), steps.gatesPassed("T-4"), steps.reviewPass("T-4")).state, event: steps.merged("T-4"), statuses: { "T-4": "merged" }, commands: ["notify", "reviewMilestone:2", "notify"], check: (st) => expect([st.stage, st.milestone?.final, st.finished]).toEqual(["milestone", true, null]) },
  { rule: "everything merged and the final review passed: the run finishes done", given: () => apply(complete(s.phase2(), "T-4").state, { type: "milestone.reached", phase: 2 }).state, event: { type: "milestone.reviewed", phase: 2, verdict: "pass" }, commands: ["notify", "finish:done", "notify"], check: (st) => expect(st.finished).toEqual({ status: "done" }) },
  { rule: "a requirement change freezes dispatch and asks for a plan delta", given: s.running, event: { type: "change.requested", text: "add tabs" }, commands: ["replan", "notify"], check: (st) => expect(st.frozen?.text).toBe("add tabs") },
  { rule: "while frozen, a merge releases no new task", given: () => apply(s.frozen(), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1")).state, event: steps.merged("T-1"), statuses: { "T-1": "merged", "T-2": "pending", "T-3": "pending" }, commands: ["notify"] },
  {
    rule: "an accepted delta aborts the running task it removes, adds its new tasks and resumes dispatch",
    given: s.frozen,
    event: { type: "delta.accepted", delta: delta({ remove: ["T-5"], add: [task("T-6")] }) },
    statuses: { "T-5": "invalidated", "T-6": "running", "T-1": "running" },
    commands: ["abort:T-5", "notify", "dispatch:T-6:executor:1"],
    check: (st) => expect(st.frozen).toBeNull(),
  },
  {
    rule: "a delta that changes a merged task reverts it and does it again",
    given: () => apply(complete(s.running(), "T-5").state, { type: "change.requested", text: "x" }).state,
    event: { type: "delta.accepted", delta: delta({ modify: [{ id: "T-5", patch: { doneWhen: "T-5 works twice" } }] }) },
    statuses: { "T-5": "running" },
    commands: ["revert:T-5", "notify", "dispatch:T-5:executor:2"],
  },
  { rule: "the consulted scheduler may choose another debugger run", given: s.consulting, event: { type: "consult.answered", taskId: "T-1", choice: "debug-again", by: "scheduler" }, statuses: { "T-1": "debugging" }, commands: ["dispatch:T-1:debugger:3"] },
  { rule: "a scheduler agent that cannot decide hands the consult to the Architect", given: s.consulting, event: { type: "consult.answered", taskId: "T-1", choice: "block", by: "scheduler", reason: "no idea" }, statuses: { "T-1": "consulting" }, commands: ["consult:T-1"], check: (st, commands) => { expect(runtimeOf(st, "T-1").consultBy).toBe("architect"); expect(commands[0]).toMatchObject({ agent: "architect", options: ["debug-again", "executor-again", "block"] }); expect((commands[0] as { question: string }).question).toMatch(/scheduler agent chose not to decide: no idea[\s\S]*test broke/) } },
  { rule: "the Architect may settle a consult the scheduler agent could not", given: s.consultingArchitect, event: { type: "consult.answered", taskId: "T-1", choice: "executor-again", by: "architect" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:3"], check: (st) => expect([runtimeOf(st, "T-1").consultBy, runtimeOf(st, "T-1").consultOptions]).toEqual([null, null]) },
  { rule: "when neither the scheduler agent nor the Architect decides, the task blocks and the user is asked", given: s.consultingArchitect, event: { type: "consult.answered", taskId: "T-1", choice: "block", by: "architect" }, statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect(st.questions[0]!.text).toMatch(/is blocked: the Architect chose not to decide; last failure: test broke/) },
  { rule: "a consult session that ends without a decision counts as no decision: the Architect is asked", given: s.consulting, event: { type: "consult.unanswered", taskId: "T-1", by: "scheduler", reason: "the session failed" }, statuses: { "T-1": "consulting" }, commands: ["consult:T-1"], check: (st) => expect(runtimeOf(st, "T-1").consultBy).toBe("architect") },
  { rule: "an Architect consult that ends without a decision blocks the task", given: s.consultingArchitect, event: { type: "consult.unanswered", taskId: "T-1", by: "architect", reason: "stalled" }, statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"] },
  { rule: "a worker session that could not start is tried again, spending a stall", given: s.fresh, event: { type: "dispatch.failed", taskId: "T-1", role: "executor", run: 1, message: "no worktree" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect([runtimeOf(st, "T-1").stalls, runtimeOf(st, "T-1").lastFailure?.source]).toEqual([1, "worker"]) },
  { rule: "a worker session that cannot start again blocks the task: no endless loop", given: () => apply(s.fresh(), { type: "dispatch.failed", taskId: "T-1", role: "executor", run: 1, message: "no worktree" }).state, event: { type: "dispatch.failed", taskId: "T-1", role: "executor", run: 2, message: "no worktree" }, statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect(st.questions[0]!.text).toMatch(/executor session could not be started: no worktree/) },
  { rule: "a review session that could not start is asked again", given: s.reviewing, event: { type: "dispatch.failed", taskId: "T-1", role: "reviewer", run: 1, message: "engine busy" }, statuses: { "T-1": "reviewing" }, commands: ["review:T-1"], check: (st) => expect([runtimeOf(st, "T-1").stalls, runtimeOf(st, "T-1").reviewRuns]).toEqual([1, 2]) },
  { rule: "a review session that cannot start again blocks the task, to resume at review", given: () => apply(s.reviewing(), { type: "dispatch.failed", taskId: "T-1", role: "reviewer", run: 1, message: "engine busy" }).state, event: { type: "dispatch.failed", taskId: "T-1", role: "reviewer", run: 2, message: "engine busy" }, statuses: { "T-1": "blocked" }, commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect(runtimeOf(st, "T-1").resume).toBe("review") },
  { rule: "the user's answer resumes a blocked task with a fresh budget", given: () => complete(s.blocked(), "T-3").state, event: { type: "question.answered", questionId: "T-1:blocked:1", answer: "use the v2 API" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").findings).toEqual(["user: use the v2 API"]) },
  {
    rule: "an answer after a blocked finish reopens the run and un-parks the waiting tasks",
    given: s.finishedBlocked,
    event: { type: "question.answered", questionId: "T-1:blocked:1", answer: "go" },
    statuses: { "T-1": "running", "T-2": "pending" },
    commands: ["dispatch:T-1:executor:2"],
    check: (st) => expect([st.stage, st.finished]).toEqual(["running", null]),
  },
  { rule: "a task's spent budget aborts its session and blocks it", given: s.running, event: { type: "budget.spent", taskId: "T-1", kind: "tokens" }, statuses: { "T-1": "blocked", "T-3": "running" }, commands: ["abort:T-1", "ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"] },
  {
    rule: "the run's spent budget stops every session and asks once",
    given: s.running,
    event: { type: "budget.spent", kind: "cost" },
    statuses: { "T-1": "blocked", "T-5": "blocked" },
    commands: ["abort:T-1", "abort:T-5", "ask:run:budget:7", "finish:blocked", "notify"],
  },
  {
    rule: "the run's spent budget during a repair: the task resumes as a Debugger with its gate failure",
    given: s.debugging,
    event: { type: "budget.spent", kind: "cost" },
    statuses: { "T-1": "blocked" },
    commands: ["abort:T-5", "ask:run:budget:9", "finish:blocked", "notify"],
    check: (st) => expect([runtimeOf(st, "T-1").resume, runtimeOf(st, "T-1").lastFailure?.source]).toEqual(["debugger", "build"]),
  },
  // Usage as events: the machine decides the request and token budgets from the totals it folds.
  { rule: "a worker's usage within its budgets is counted, nothing else", given: () => apply(started(graph, { ...config, budgets: limits({ taskRequests: 2 }) }).state, steps.dispatched("T-1")).state, event: usage("s-T-1-1", "T-1", 2, 40), commands: [], check: (st) => expect([st.usage.run, st.usage.tasks["T-1"]]).toEqual([{ requests: 2, tokens: 40 }, { requests: 2, tokens: 40 }]) },
  { rule: "a worker's usage past its task's request budget aborts its session and blocks it; its next session starts afresh", given: () => apply(started(graph, { ...config, budgets: limits({ taskRequests: 2 }) }).state, steps.dispatched("T-1"), steps.dispatched("T-5"), usage("s-T-1-1", "T-1", 2, 40)).state, event: usage("s-T-1-1", "T-1", 3, 60), statuses: { "T-1": "blocked", "T-3": "running" }, commands: ["abort:T-1", "ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"], check: (st) => expect([st.usage.run.requests, st.usage.tasks["T-1"], st.questions[0]!.text]).toEqual([3, undefined, expect.stringMatching(/requests budget is spent/)]) },
  { rule: "usage past the run's token budget stops every session and asks once", given: () => apply(started(graph, { ...config, budgets: limits({ runTokens: 100 }) }).state, steps.dispatched("T-1"), steps.dispatched("T-5"), usage("architect-1", undefined, 3, 60)).state, event: usage("s-T-5-1", "T-5", 1, 41), statuses: { "T-1": "blocked", "T-5": "blocked" }, commands: ["abort:T-1", "abort:T-5", "ask:run:budget:8", "finish:blocked", "notify"], check: (st) => expect([st.runBudgetSpent, st.usage.runGrants]).toEqual([true, 1]) },
  { rule: "an answer to the run's budget question grants one more budget's worth", given: () => apply(started(graph, { ...config, budgets: limits({ runTokens: 100 }) }).state, steps.dispatched("T-1"), usage("s-T-1-1", "T-1", 1, 101), { type: "question.answered", questionId: "run:budget:6", answer: "go on" }).state, event: usage("s-T-1-2", "T-1", 1, 99), commands: [], check: (st) => expect([st.runBudgetSpent, st.usage.run.tokens, runtimeOf(st, "T-1").status]).toEqual([false, 200, "running"]) },
  { rule: "usage of a session the task no longer runs in counts for the run, not the task", given: () => apply(started(graph, { ...config, budgets: limits({ taskRequests: 2 }) }).state, steps.dispatched("T-1")).state, event: usage("s-gone", "T-1", 9, 0), commands: [], check: (st) => expect([st.usage.run.requests, st.usage.tasks["T-1"]]).toEqual([9, undefined]) },
  { rule: "a revert is kept until it is reported done", given: () => apply(complete(s.running(), "T-5").state, { type: "change.requested", text: "x" }, { type: "delta.accepted", delta: delta({ modify: [{ id: "T-5", patch: { doneWhen: "T-5 works twice" } }] }) }).state, event: { type: "revert.done", taskId: "T-5", round: 1, status: "reverted" }, commands: [], check: (st) => expect(st.reverts).toEqual([]) },
  { rule: "a pause stops new dispatches", given: () => apply(s.running(), { type: "run.paused" }, steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1")).state, event: steps.merged("T-1"), statuses: { "T-2": "pending", "T-3": "pending" }, commands: ["notify"] },
  { rule: "resuming dispatches what became ready", given: () => apply(s.paused(), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), steps.merged("T-1")).state, event: { type: "run.resumed" }, statuses: { "T-2": "running" }, commands: ["notify", "dispatch:T-2:executor:1"] },
  { rule: "the integration branch is part of the run's start", given: s.idle, event: { type: "run.started", runId: "r1", requirement: "req", config: started(graph).state.config!, integration: "develop" }, commands: ["plan", "notify"], check: (st) => expect(st.integration).toBe("develop") },
  {
    rule: "a dispatch stores its wall-clock deadline: the event's time plus the cap",
    given: s.fresh,
    event: steps.dispatched("T-1"),
    commands: [],
    check: (st) => expect(runtimeOf(st, "T-1").deadline).toBe(new Date(Date.parse(AT) + st.config!.wallClockMs).toISOString()),
  },
  { rule: "a fired wall-clock timer clears the deadline; the next dispatch gets its own", given: s.running, event: { type: "timer.fired", taskId: "T-1", kind: "wallclock" }, statuses: { "T-1": "running" }, commands: ["abort:T-1", "dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").deadline).toBeNull() },
  { rule: "a nudge of the current worker session is counted on the task", given: s.running, event: { type: "session.nudged", taskId: "T-1", sessionId: "s-T-1-1" }, commands: [], check: (st) => expect(runtimeOf(st, "T-1").nudges).toBe(1) },
  { rule: "a nudge of the current review session is counted on the task", given: s.reviewStarted, event: { type: "session.nudged", taskId: "T-1", sessionId: "rv-T-1" }, commands: [], check: (st) => expect(runtimeOf(st, "T-1").nudges).toBe(1) },
  { rule: "a new session of the task starts with no nudge", given: () => apply(s.running(), { type: "session.nudged", taskId: "T-1", sessionId: "s-T-1-1" }).state, event: { type: "worker.failed", taskId: "T-1", sessionId: "s-T-1-1", reason: "error", message: "silent twice" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").nudges).toBe(0) },
  // ── faults of the runtime: every command ends in an event, and each has a rule ──
  {
    rule: "gates that could not run block the task with a question naming the cause; it resumes at the gates",
    given: s.gating,
    event: { type: "gates.errored", taskId: "T-1", tag: "toolchain", message: ".air/toolchain.json: unknown key 'biuld'" },
    statuses: { "T-1": "blocked" },
    commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"],
    check: (st) => {
      expect(runtimeOf(st, "T-1")).toMatchObject({ resume: "gates", repairs: 0, lastFailure: { source: "gates:toolchain" } })
      expect(st.questions[0]!.text).toMatch(/gates could not run \(toolchain\): \.air\/toolchain\.json: unknown key 'biuld'/)
    },
  },
  {
    rule: "the answer to a gates fault runs the gates again once a slot is free",
    given: () => complete(apply(s.gating(), { type: "gates.errored", taskId: "T-1", tag: "git", message: "fatal: bad object" }).state, "T-3").state,
    event: { type: "question.answered", questionId: "T-1:blocked:1", answer: "fixed" },
    statuses: { "T-1": "gating" },
    commands: ["runGates:T-1"],
    check: (st) => expect(runtimeOf(st, "T-1").gateRuns).toBe(2),
  },
  {
    rule: "a merge that could not be carried out frees the queue at once and blocks its task with the cause",
    given: s.queued,
    event: { type: "merge.blocked", taskId: "T-1", tag: "lock-timeout", message: "merge lock held by pid 4242" },
    statuses: { "T-1": "blocked", "T-5": "merging" },
    commands: ["ask:T-1:blocked:1", "notify", "merge:T-5", "dispatch:T-3:executor:1"],
    check: (st) => {
      expect(st.merging).toEqual(["T-5"])
      expect(runtimeOf(st, "T-1").resume).toBe("merge")
      expect(st.questions[0]!.text).toMatch(/merge could not be carried out \(lock-timeout\): merge lock held by pid 4242/)
    },
  },
  {
    rule: "the answer to a blocked merge queues the merge again once nothing conflicting is in flight (no new work, no review)",
    given: () => complete(apply(s.merging(), { type: "merge.blocked", taskId: "T-1", tag: "index-lock", message: ".git/index.lock exists" }).state, "T-3").state,
    event: { type: "question.answered", questionId: "T-1:blocked:1", answer: "removed it" },
    statuses: { "T-1": "merging" },
    commands: ["merge:T-1"],
    check: (st) => expect([st.merging, runtimeOf(st, "T-1").mergeRuns, runtimeOf(st, "T-1").attempts]).toEqual([["T-1"], 2, 1]),
  },
  {
    rule: "a blocked merge of a task the plan dropped meanwhile lands nothing, so nothing is reverted",
    given: () => apply(s.merging(), { type: "change.requested", text: "x" }, { type: "delta.accepted", delta: delta({ modify: [{ id: "T-1", patch: { doneWhen: "again" } }] }) }).state,
    event: { type: "merge.blocked", taskId: "T-1", tag: "merge", message: "git merge failed" },
    commands: ["dispatch:T-1:executor:2"],
    check: (st) => expect([st.merging, runtimeOf(st, "T-1").revertOnMerge, st.questions.length]).toEqual([[], false, 0]),
  },
  {
    rule: "a merge build that fails sends the task to the Debugger with the log, and the queue moves on",
    given: s.queued,
    event: { type: "merge.rejected", taskId: "T-1", message: "merge build failed: b.cpp:3: error: 'old_name' was not declared", evidencePath: "/ev/T-1/merge-1/build.log" },
    statuses: { "T-1": "debugging", "T-5": "merging" },
    commands: ["dispatch:T-1:debugger:2", "merge:T-5"],
    check: (st) => {
      expect(st.merging).toEqual(["T-5"])
      expect(runtimeOf(st, "T-1").lastFailure).toEqual({ source: "merge-build", message: "merge build failed: b.cpp:3: error: 'old_name' was not declared", evidencePath: "/ev/T-1/merge-1/build.log" })
      expect(runtimeOf(st, "T-1").repairs).toBe(1)
    },
  },
  {
    rule: "a task the Debugger fixed after a failed merge build is merged again (a new merge run)",
    given: () => apply(s.merging(), { type: "merge.rejected", taskId: "T-1", message: "m", evidencePath: "/e" }, steps.dispatched("T-1", 2, "debugger"), steps.reported("T-1", 2, "debugger"), steps.gatesPassed("T-1")).state,
    event: steps.reviewPass("T-1"),
    statuses: { "T-1": "merging" },
    commands: ["merge:T-1"],
    check: (st) => expect([st.merging, runtimeOf(st, "T-1").mergeRuns]).toEqual([["T-1"], 2]),
  },
  {
    rule: "a merge build that keeps failing with the repair budget spent is a consult",
    given: () => apply(s.merging(), { type: "merge.rejected", taskId: "T-1", message: "m", evidencePath: "/e" }, steps.dispatched("T-1", 2, "debugger"), steps.reported("T-1", 2, "debugger"), steps.gatesPassed("T-1"), steps.reviewPass("T-1")).state,
    event: { type: "merge.rejected", taskId: "T-1", message: "still broken", evidencePath: "/e2" },
    statuses: { "T-1": "consulting" },
    commands: ["consult:T-1"],
    check: (st) => expect(st.merging).toEqual([]),
  },
  {
    rule: "a rejected merge of a task the plan dropped meanwhile lands nothing: back to ready, no repair",
    given: () => apply(s.merging(), { type: "change.requested", text: "x" }, { type: "delta.accepted", delta: delta({ modify: [{ id: "T-1", patch: { doneWhen: "again" } }] }) }).state,
    event: { type: "merge.rejected", taskId: "T-1", message: "m", evidencePath: "/e" },
    commands: ["dispatch:T-1:executor:2"],
    check: (st) => expect([st.merging, runtimeOf(st, "T-1").revertOnMerge, runtimeOf(st, "T-1").lastFailure]).toEqual([[], false, null]),
  },
  {
    rule: "a reviewer session that errored is asked again, spending a stall",
    given: s.reviewStarted,
    event: { type: "session.errored", taskId: "T-1", sessionId: "rv-T-1", cause: "model answered 500" },
    statuses: { "T-1": "reviewing" },
    commands: ["review:T-1"],
    check: (st) => expect([runtimeOf(st, "T-1").stalls, runtimeOf(st, "T-1").lastFailure?.message]).toEqual([1, "model answered 500"]),
  },
  {
    rule: "a reviewer session that errors again blocks the task with the cause, to resume at review",
    given: () => apply(s.reviewStarted(), { type: "session.errored", taskId: "T-1", sessionId: "rv-T-1", cause: "500" }, { type: "review.started", taskId: "T-1", sessionId: "rv-2" }).state,
    event: { type: "session.errored", taskId: "T-1", sessionId: "rv-2", cause: "model answered 500" },
    statuses: { "T-1": "blocked" },
    commands: ["ask:T-1:blocked:1", "notify", "dispatch:T-3:executor:1"],
    check: (st) => {
      expect(runtimeOf(st, "T-1").resume).toBe("review")
      expect(st.questions[0]!.text).toMatch(/reviewer's session errored again: model answered 500/)
    },
  },
  { rule: "a worker session that errored is dispatched again, spending a stall", given: s.running, event: { type: "session.errored", taskId: "T-1", sessionId: "s-T-1-1", cause: "model answered 500" }, statuses: { "T-1": "running" }, commands: ["dispatch:T-1:executor:2"], check: (st) => expect(runtimeOf(st, "T-1").stalls).toBe(1) },
  {
    rule: "the final check of a finished run is recorded once",
    given: s.finishedBlocked,
    event: { type: "finalCheck.done", status: "failed", message: "ctest: 1 of 3 failed" },
    commands: ["notify"],
    check: (st) => expect(st.finalCheck).toEqual({ status: "failed", message: "ctest: 1 of 3 failed" }),
  },
  {
    rule: "a run reopened by an answer forgets the last final check; its next finish asks for a new one",
    given: () => apply(s.finishedBlocked(), { type: "finalCheck.done", status: "passed", message: "" }).state,
    event: { type: "question.answered", questionId: "T-1:blocked:1", answer: "go" },
    statuses: { "T-1": "running" },
    commands: ["dispatch:T-1:executor:2"],
    check: (st) => expect(st.finalCheck).toBeNull(),
  },
  {
    rule: "a farm host lost mid-build is told to the user; distcc compiled locally, so the task stays at its gates and the run goes on",
    given: s.gating,
    event: { type: "farm.degraded", taskId: "T-1", hosts: ["127.0.0.1:3633"], localFallbacks: 4, evidencePath: "/e/T-1/attempt-1/farm.json" },
    statuses: { "T-1": "gating", "T-5": "running" },
    commands: ["notify"],
    check: (_st, cmds) => expect(cmds[0]).toMatchObject({ type: "notify", text: expect.stringContaining("127.0.0.1:3633") }),
  },
]

describe("transition: fault events that are stale are refused, never applied", () => {
  const refusals: [string, () => SchedulerState, EventInput, RegExp][] = [
    ["gates.errored for a task that is not gating", s.running, { type: "gates.errored", taskId: "T-1", tag: "git", message: "x" }, /not gating/],
    ["merge.blocked for a task that is not the merge in flight", s.queued, { type: "merge.blocked", taskId: "T-5", tag: "merge", message: "x" }, /not the merge in flight/],
    ["merge.rejected for a task that is not the merge in flight", s.queued, { type: "merge.rejected", taskId: "T-5", message: "x", evidencePath: "/e" }, /not the merge in flight/],
    ["a batch rejection naming a task outside the batch", s.batch, { type: "merge.batch-rejected", taskIds: ["C", "E"], message: "x", evidencePath: "/e" }, /E is not the merge in flight/],
    ["a deferral of a task that is not being merged", s.queued, { type: "merge.deferred", taskId: "T-5" }, /not the merge in flight/],
    ["session.errored from an old session", s.running, { type: "session.errored", taskId: "T-1", sessionId: "s-old", cause: "x" }, /stale/],
    ["session.errored for a task no session works on", s.gating, { type: "session.errored", taskId: "T-1", sessionId: "s-T-1-1", cause: "x" }, /no session of it runs/],
    ["session.nudged of a session that is not the task's", s.running, { type: "session.nudged", taskId: "T-1", sessionId: "s-old" }, /not nudged/],
    ["finalCheck.done before the run finished", s.running, { type: "finalCheck.done", status: "passed", message: "" }, /has not finished/],
    ["a second finalCheck.done", () => apply(s.finishedBlocked(), { type: "finalCheck.done", status: "passed", message: "" }).state, { type: "finalCheck.done", status: "failed", message: "" }, /already recorded/],
  ]
  it.each(refusals)("%s", (_name, given, event, reason) => {
    const result = transition(deepFreeze(given()), ev(event))
    expect("refused" in result && result.refused).toMatch(reason)
  })
})

describe("transition: every rule", () => {
  it.each(rows.map((row) => [row.rule, row] as const))("%s", (_rule, row) => checkRow(row, show))

  it("finishes blocked when nothing can run, parking the tasks that wait", () => {
    const state = s.finishedBlocked()
    expect(state.finished).toEqual({ status: "blocked" })
    expect(runtimeOf(state, "T-2")).toMatchObject({ status: "blocked", waitingOn: "T-1" })
    expect(runtimeOf(state, "T-4")).toMatchObject({ status: "blocked", waitingOn: "phase 1" })
  })

  it("gives every command an id that is stable when the same events are replayed", () => {
    const a = transition(s.confirmed(), ev({ type: "graph.accepted", graph }))
    const b = transition(s.confirmed(), ev({ type: "graph.accepted", graph }))
    expect("commands" in a && a.commands.map((c) => c.id)).toEqual(["notify:4:0", "dispatch:T-1:executor:1", "dispatch:T-5:executor:1"])
    expect(a).toEqual(b)
  })
})

interface Refusal {
  rule: string
  given: () => SchedulerState
  event: EventInput
  reason: RegExp
}

const cycle = graphOf(task("A", { deps: ["B"] }), task("B", { deps: ["A"] }))
const refusals: Refusal[] = [
  { rule: "usage before any run", given: s.idle, event: usage("s-1", undefined, 1, 1), reason: /no run has started/ },
  { rule: "usage a session already reported (a replay)", given: () => apply(s.running(), usage("s-T-1-1", "T-1", 2, 40)).state, event: usage("s-T-1-1", "T-1", 2, 40), reason: /already reported 2 requests and 40 tokens/ },
  { rule: "a revert reported done that nobody ordered", given: s.running, event: { type: "revert.done", taskId: "T-1", round: 1, status: "reverted" }, reason: /no revert of T-1/ },
  { rule: "a second run while one is in progress", given: s.running, event: { type: "run.started", runId: "r2", requirement: "", config: started(graph).state.config! }, reason: /run r1 is in progress/ },
  { rule: "a plan before a run", given: s.idle, event: { type: "plan.proposed", summary: "" }, reason: /before the graph is accepted.*stage: idle/ },
  { rule: "a plan once the graph runs", given: s.running, event: { type: "plan.proposed", summary: "" }, reason: /change.requested/ },
  { rule: "a plan revision with no plan proposed", given: s.planning, event: { type: "plan.revision.requested", text: "x" }, reason: /no proposed plan waits/ },
  { rule: "a plan revision once the graph runs", given: s.running, event: { type: "plan.revision.requested", text: "x" }, reason: /change.requested/ },
  { rule: "a confirmation with no plan", given: s.planning, event: { type: "plan.confirmed" }, reason: /no plan waits for confirmation/ },
  { rule: "a graph before the user confirmed", given: s.confirming, event: { type: "graph.accepted", graph }, reason: /not been confirmed by the user/ },
  { rule: "a cyclic graph", given: s.confirmed, event: { type: "graph.accepted", graph: cycle }, reason: /dependency cycle: A → B → A/ },
  { rule: "a second graph", given: s.running, event: { type: "graph.accepted", graph }, reason: /once per run/ },
  { rule: "a task event before any graph", given: s.planning, event: steps.dispatched("T-1"), reason: /no task graph yet/ },
  { rule: "a dispatch of an unknown task", given: s.fresh, event: steps.dispatched("T-9"), reason: /unknown task T-9/ },
  { rule: "a dispatch of a task nobody dispatched", given: s.fresh, event: steps.dispatched("T-3"), reason: /T-3 is pending; no dispatch/ },
  { rule: "a dispatch with the wrong attempt", given: s.fresh, event: steps.dispatched("T-1", 2), reason: /attempt 2 is not the outstanding/ },
  { rule: "a dispatch to the wrong role", given: s.fresh, event: steps.dispatched("T-1", 1, "debugger"), reason: /dispatched to the executor, not the debugger/ },
  { rule: "a dispatch recorded twice", given: s.running, event: steps.dispatched("T-1", 1, "executor", "other"), reason: /already runs in session s-T-1-1/ },
  { rule: "a report from an old session", given: s.running, event: steps.reported("T-1", 1, "executor", "s-old"), reason: /s-old is not the current session.*stale/ },
  { rule: "a report before the dispatch was confirmed", given: s.fresh, event: steps.reported("T-1"), reason: /no session recorded yet/ },
  { rule: "a report for another task", given: s.running, event: { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-5", role: "executor", summary: "" } }, reason: /report is for task T-5/ },
  { rule: "a report in the wrong role", given: s.running, event: { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "debugger", summary: "" } }, reason: /report says debugger/ },
  { rule: "a report for a task at the gates", given: s.gating, event: steps.reported("T-1"), reason: /T-1 is gating, not running or debugging/ },
  { rule: "a failure from an old session", given: s.running, event: { type: "worker.failed", taskId: "T-1", sessionId: "s-x", reason: "error", message: "" }, reason: /not the current session/ },
  { rule: "a lost session that is not the task's current one", given: s.running, event: { type: "session.lost", taskId: "T-1", sessionId: "s-x" }, reason: /nothing was lost/ },
  { rule: "a lost session of a task at the gates", given: s.gating, event: { type: "session.lost", taskId: "T-1", sessionId: "s-T-1-1" }, reason: /T-1 is gating: no session of it runs/ },
  { rule: "a timer for a task with no session", given: s.gating, event: { type: "timer.fired", taskId: "T-1", kind: "inactivity" }, reason: /the timer is stale/ },
  { rule: "gates started for a task not at the gates", given: s.running, event: { type: "gates.started", taskId: "T-1" }, reason: /T-1 is running, not gating/ },
  { rule: "gates started twice", given: () => apply(s.gating(), { type: "gates.started", taskId: "T-1" }).state, event: { type: "gates.started", taskId: "T-1" }, reason: /already started/ },
  { rule: "passed gates without the evidence the kind requires", given: s.gating, event: { type: "gates.passed", taskId: "T-1", evidence: { diff: "d", build: "b" } }, reason: /without evidence for: test, analysis/ },
  { rule: "a gate failure for a task not at the gates", given: s.reviewing, event: steps.gatesFailed("T-1", "build"), reason: /reviewing, not gating/ },
  { rule: "a gate failure with no route from a gate no old log knew", given: s.gating, event: steps.gatesFailed("T-1", "lint"), reason: /lint gate's failure names no route/ },
  { rule: "a review started for a task not in review", given: s.gating, event: steps.reviewStarted("T-1"), reason: /gating, not reviewing/ },
  { rule: "a review started twice", given: s.reviewStarted, event: steps.reviewStarted("T-1"), reason: /already reviewed in session/ },
  { rule: "a review report about another task", given: s.reviewing, event: { type: "review.reported", taskId: "T-1", report: { taskId: "T-2", verdict: "pass", rows: [], findings: [] } }, reason: /report is for task T-2/ },
  { rule: "a review report for a task not in review", given: s.running, event: steps.reviewPass("T-1"), reason: /running, not reviewing/ },
  { rule: "a merge start for a task not merging", given: s.queued, event: { type: "merge.started", taskId: "T-5" }, reason: /not the merge in flight \(T-1\)/ },
  { rule: "a merge recorded twice", given: () => apply(s.merging(), steps.merged("T-1")).state, event: steps.merged("T-1"), reason: /never recorded twice/ },
  { rule: "a conflict for a task not merging", given: s.running, event: { type: "merge.conflicted", taskId: "T-1", files: [] }, reason: /not the merge in flight \(none\)/ },
  { rule: "a milestone nobody is due", given: s.running, event: { type: "milestone.reached", phase: 1 }, reason: /no milestone review is due/ },
  { rule: "a milestone of the wrong phase", given: s.milestone, event: { type: "milestone.reached", phase: 2 }, reason: /due is phase 1, not 2/ },
  { rule: "a milestone review started twice", given: s.milestoneReviewing, event: { type: "milestone.reached", phase: 1 }, reason: /already started/ },
  { rule: "a failing milestone without fix tasks", given: s.milestoneReviewing, event: { type: "milestone.reviewed", phase: 1, verdict: "fail" }, reason: /must bring fix tasks/ },
  { rule: "fix tasks that reuse an id", given: s.milestoneReviewing, event: { type: "milestone.reviewed", phase: 1, verdict: "fail", fixTasks: [task("T-1")] }, reason: /fix tasks of milestone 1 are invalid[\s\S]*already used/ },
  { rule: "a change before any graph", given: s.confirming, event: { type: "change.requested", text: "x" }, reason: /once a task graph runs/ },
  { rule: "a second change while one is planned", given: s.frozen, event: { type: "change.requested", text: "y" }, reason: /already being planned/ },
  { rule: "a delta nobody asked for", given: s.running, event: { type: "delta.accepted", delta: delta({ add: [task("T-9")] }) }, reason: /only after change.requested/ },
  { rule: "an invalid delta", given: s.frozen, event: { type: "delta.accepted", delta: delta({ remove: ["T-1"] }) }, reason: /plan delta is invalid[\s\S]*T-2: depends on T-1, which this delta invalidates/ },
  { rule: "a plan delta from a consult nobody is waiting on", given: s.running, event: { type: "consult.replanned", taskId: "T-1", delta: delta({ add: [task("T-9")] }) }, reason: /T-1 is running, not consulting/ },
  { rule: "a plan delta while the scheduler agent, not the Architect, is consulted", given: s.consulting, event: { type: "consult.replanned", taskId: "T-1", delta: delta({ add: [task("T-9")] }) }, reason: /waiting on the scheduler agent, not the Architect/ },
  { rule: "an invalid plan delta from the Architect's consult", given: s.fieldBlocked, event: { type: "consult.replanned", taskId: "T-1", delta: delta({ modify: [{ id: "T-1", patch: { deps: ["T-7"] } }] }) }, reason: /plan delta for task T-1 is invalid[\s\S]*T-7, which does not exist/ },
  { rule: "a consult answer that was not offered", given: s.consulting, event: { type: "consult.answered", taskId: "T-1", choice: "merge-anyway", by: "scheduler" }, reason: /"merge-anyway" is not one of the options/ },
  { rule: "a consult answer for a task not in consult", given: s.running, event: { type: "consult.answered", taskId: "T-1", choice: "block", by: "scheduler" }, reason: /running, not consulting/ },
  { rule: "an answer from the scheduler agent once the Architect is consulted", given: s.consultingArchitect, event: { type: "consult.answered", taskId: "T-1", choice: "executor-again", by: "scheduler" }, reason: /waiting on the Architect, not the scheduler agent/ },
  { rule: "a dispatch failure for an attempt already running", given: s.running, event: { type: "dispatch.failed", taskId: "T-1", role: "executor", run: 1, message: "x" }, reason: /already runs in session s-T-1-1/ },
  { rule: "a dispatch failure for a stale attempt", given: s.fresh, event: { type: "dispatch.failed", taskId: "T-1", role: "executor", run: 2, message: "x" }, reason: /attempt 2 is not outstanding/ },
  { rule: "a review start failure for a task not in review", given: s.running, event: { type: "dispatch.failed", taskId: "T-1", role: "reviewer", run: 1, message: "x" }, reason: /review run 1 is not outstanding/ },
  { rule: "an answer to no question", given: s.running, event: { type: "question.answered", questionId: "q-9", answer: "" }, reason: /no open question q-9; open: none/ },
  { rule: "a spent budget for a merged task", given: () => complete(s.running(), "T-5").state, event: { type: "budget.spent", taskId: "T-5", kind: "tokens" }, reason: /T-5 is merged; it spends nothing/ },
  { rule: "a spent budget for a task being merged", given: s.merging, event: { type: "budget.spent", taskId: "T-1", kind: "tokens" }, reason: /being merged/ },
  { rule: "a spent budget before the run", given: s.planning, event: { type: "budget.spent", kind: "tokens" }, reason: /no run is in progress/ },
  { rule: "the run's budget spent twice", given: () => apply(s.merging(), { type: "budget.spent", kind: "cost" }).state, event: { type: "budget.spent", kind: "cost" }, reason: /already spent/ },
  { rule: "a pause twice", given: s.paused, event: { type: "run.paused" }, reason: /already paused/ },
  { rule: "a pause before the run", given: s.planning, event: { type: "run.paused" }, reason: /only a running run/ },
  { rule: "a resume with no pause", given: s.running, event: { type: "run.resumed" }, reason: /not paused/ },
  { rule: "a baseline outcome with no baseline running", given: s.running, event: baselineFailedTests, reason: /no baseline is running \(none was started\)/ },
  { rule: "a moved integration branch in a run without a baseline", given: s.running, event: { type: "integration.moved", commit: "beef01" }, reason: /no baseline to take again/ },
  { rule: "a moved integration branch that is the baseline's commit", given: () => apply(s.baselineRunning(), { type: "baseline.done", commit: "c0ffee", status: "passed", failingTests: [], message: "" }).state, event: { type: "integration.moved", commit: "c0ffee" }, reason: /baseline's commit already/ },
  { rule: "a baseline outcome twice", given: s.baselineFailed, event: baselineFailedTests, reason: /no baseline is running \(the last one failed\)/ },
  { rule: "a farm host's failure before any run", given: s.idle, event: { type: "farm.degraded", hosts: ["h:3632"], localFallbacks: 1, evidencePath: "/e/farm.json" }, reason: /no run has started/ },
  { rule: "a farm host's failure for an unknown task", given: s.running, event: { type: "farm.degraded", taskId: "T-9", hosts: ["h:3632"], localFallbacks: 1, evidencePath: "/e/farm.json" }, reason: /unknown task T-9/ },
]

describe("transition: every refusal leaves the state as it was", () => {
  it.each(refusals.map((row) => [row.rule, row] as const))("refuses %s", (_rule, row) => {
    const given = deepFreeze(row.given())
    const copy = structuredClone(given)
    const result = transition(given, ev(row.event))
    if (!("refused" in result)) throw new Error(`accepted; commands: ${result.commands.map(show).join(", ")}`)
    expect(result.refused).toMatch(row.reason)
    expect(given).toEqual(copy)
  })
})
