import { z } from "zod"
import { RunConfig } from "./event.schema"
import { SCHEMA_VERSION, TASK_STATUSES, TaskGraph } from "./task.schema"
import { emptyUsage, UsageState } from "./usage"
import { emptyMoney, MoneyState } from "./money"
import { BaselineState, CONSULTANTS, CONSULT_OPTIONS, emptySteps, FINAL_CHECK_STATUSES, OverflowRecord, QuestionCause, STEPS, StepRuns, WORKER_ROLES } from "./vocabulary"
import { DeployState } from "./deploy.schema"

const STAGES = ["idle", "planning", "confirming", "confirmed", "running", "milestone", "finished", "deploying"] as const
export type Stage = (typeof STAGES)[number]

const HistoryEntry = z.object({
  at: z.string(),
  event: z.string(),
  from: z.enum(TASK_STATUSES),
  to: z.enum(TASK_STATUSES),
  note: z.string().nullable(),
})
type HistoryEntry = z.infer<typeof HistoryEntry>

const Failure = z.object({
  source: z.string().describe("gate name, worker failure reason, review or merge"),
  message: z.string(),
  evidencePath: z.string().nullable(),
})
export type Failure = z.infer<typeof Failure>

/**
 * The runtime side of one task. Fields are null rather than absent so that a state written to disk and
 * read back is equal, key for key, to the state folded from the log.
 */
export const TaskRuntime = z.object({
  id: z.string(),
  status: z.enum(TASK_STATUSES),
  /** Every dispatch of a worker for this task, executor or debugger; the attempt number of the next one is attempts + 1. */
  attempts: z.number().int(),
  /** Dispatches that spent the repair budget: debugger runs, executor fixes after gates, review or merge. */
  repairs: z.number().int(),
  /** Re-dispatches after a stall, an error or a timeout. */
  stalls: z.number().int(),
  gateRuns: z.number().int(),
  reviewRuns: z.number().int(),
  mergeRuns: z.number().int(),
  consults: z.number().int(),
  blocks: z.number().int(),
  /** Dependencies not merged yet; the task can start only at zero. */
  remainingDeps: z.number().int(),
  role: z.enum(WORKER_ROLES).nullable(),
  sessionId: z.string().nullable(),
  reviewSessionId: z.string().nullable(),
  gatesStarted: z.boolean(),
  lastFailure: Failure.nullable(),
  findings: z.array(z.string()),
  evidence: z.record(z.string(), z.string()).nullable(),
  consultOptions: z.array(z.enum(CONSULT_OPTIONS)).nullable(),
  /** Who is being consulted now: the scheduler agent first, then the Architect; then the user is asked. */
  consultBy: z.enum(CONSULTANTS).nullable().default(null),
  /** Where a blocked task goes when the user's answer arrives. */
  resume: z.enum(["executor", "debugger", "gates", "review", "merge"]).nullable(),
  /** Set on a pending task parked as blocked at the end of a run because something it waits for is blocked. */
  waitingOn: z.string().nullable(),
  /** The task was invalidated or reset while its merge was in flight: revert it once the merge lands. */
  revertOnMerge: z.boolean(),
  /** `head`: the batch's merge commit the task landed in, when it landed in one. */
  merged: z.object({ commit: z.string(), tag: z.string(), head: z.string().optional() }).nullable(),
  /**
   * Times the task's work landed on the integration branch. A task reverted by a plan delta and done again
   * merges as round merges + 1, under its own tag, so the first round's tags and trailers never collide.
   */
  merges: z.number().int().default(0),
  /**
   * When the current worker's wall-clock cap runs out: its dispatch's time plus the cap, set by
   * task.dispatched. The runtime's clock reads it (and so does a restarted one) and fires timer.fired.
   */
  deadline: z.string().nullable().default(null),
  /** Times the current worker or reviewer session was told to call its report tool; one nudge, then it fails. */
  nudges: z.number().int().default(0),
  /** The task's last context overflow, until a session of it reports (core/overflow.ts); the runtime builds the fresh session's pack from it. */
  overflow: OverflowRecord.nullable().default(null),
  history: z.array(HistoryEntry),
})
export type TaskRuntime = z.infer<typeof TaskRuntime>

export const Question = z.object({
  questionId: z.string(),
  taskId: z.string().nullable(),
  text: z.string(),
  /** Set on the question a milestone review that keeps failing asks: the phase whose review waits for the answer. */
  milestone: z.number().int().optional(),
  /** Set on the question asked when a step of the run (plan, change, milestone review) kept failing: the answer goes to it. */
  step: z.enum(STEPS).optional(),
  /** Why a session failed, for the words a person reads (text/question-text.ts), in their language. */
  cause: QuestionCause.optional(),
  /** The answers the machine honours for this question; any other is refused with this list. */
  answers: z.array(z.string()).optional(),
  /** Set on the question a deploy asks (the target unreachable, the key refused): the target it names. */
  deploy: z.string().optional(),
  /** Set on the question the watchdog's `runtime.fault` asks (core/fault-rules.ts): retry or stop. */
  fault: z.literal(true).optional(),
})
export type Question = z.infer<typeof Question>

export const SchedulerState = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  /** Accepted events folded into this state; command ids are built from it so they replay identically. */
  eventCount: z.number().int(),
  lastAt: z.string().nullable(),
  stage: z.enum(STAGES),
  runId: z.string().nullable(),
  /** The branch the run merges into, from run.started (null in logs written before it was recorded there). */
  integration: z.string().nullable().default(null),
  requirement: z.string(),
  config: RunConfig.nullable(),
  planSummary: z.string().nullable(),
  /** What the user asked to change in the proposed plan, until the Architect proposes again (a restart re-prompts it). */
  planRevision: z.string().optional(),
  /** The tasks the proposal drafted (plan.proposed's graph), for the person who confirms; absent when it drafted none. */
  proposedGraph: TaskGraph.optional(),
  graph: TaskGraph.nullable(),
  /** Parallel to graph.tasks: tasks[i] is the runtime of graph.tasks[i]. */
  tasks: z.array(TaskRuntime),
  currentPhase: z.number().int(),
  /** Tasks that hold a worktree with unmerged work: they count against write conflicts, and all but those waiting to merge against the cap. */
  active: z.array(z.string()),
  /** Pending tasks whose dependencies are merged, in dispatch order (phase, then id). */
  ready: z.array(z.string()),
  mergeQueue: z.array(z.string()),
  /**
   * The batch in flight: the tasks one merge command carries, built and tested together (empty: none). Logs
   * and snapshots written before batches held one task or null here.
   */
  merging: z.preprocess((v) => (v === null || v === undefined ? [] : typeof v === "string" ? [v] : v), z.array(z.string())),
  /**
   * A failed batch split in halves (bisection): each group is tried as a batch of its own, in order, before
   * the queue is batched again; a group of one that fails is that task's fault.
   */
  mergeSplits: z.array(z.array(z.string())).default([]),
  /** `final`: the review of the last phase, against the whole requirement; the run is done only after it passes. */
  milestone: z.object({ phase: z.number().int(), reviewing: z.boolean(), commandId: z.string(), final: z.boolean().default(false) }).nullable(),
  /** Failing milestone reviews of the phase under review since its last pass (or the user's answer); bounded by MILESTONE_FIX_ROUNDS. */
  milestoneFails: z.number().int().default(0),
  /** The user's answer after a milestone review kept failing: the next review reads it. Cleared by a pass. */
  milestoneAnswer: z.string().nullable().default(null),
  /** The final review passed and nothing landed or changed in the plan since: the run may finish done. */
  finalReviewPassed: z.boolean().default(false),
  /** Content hashes of the accepted ADRs (id → hash), as recorded in the log: an ADR file that no longer matches was edited. */
  adrs: z.record(z.string(), z.string()).default({}),
  /** Edited ADRs waiting for the Architect's classification; tasks citing them do not start meanwhile. */
  adrEdits: z.array(z.object({ adr: z.string(), hash: z.string(), commandId: z.string() })).default([]),
  /** A requirement change is being planned: no new task starts until its delta is accepted. */
  frozen: z.object({ text: z.string(), at: z.string(), commandId: z.string() }).nullable(),
  paused: z.boolean(),
  runBudgetSpent: z.boolean(),
  questions: z.array(Question),
  finished: z.object({ status: z.enum(["done", "blocked"]) }).nullable(),
  /** The final check of the finished run, once it was recorded (null while it is outstanding or before the end). */
  finalCheck: z.object({ status: z.enum(FINAL_CHECK_STATUSES), message: z.string() }).nullable().default(null),
  /** Model use of the run (usage.recorded): the budgets are decided from it. */
  usage: UsageState.default(emptyUsage(null)),
  /** What the run's sessions cost in USD and what the sessions in flight hold back (core/money.ts). */
  money: MoneyState.default(emptyMoney()),
  /** Reverts ordered and not yet reported done (revert.done): a restart carries them out again (outstanding). */
  reverts: z.array(z.object({ taskId: z.string(), round: z.number().int().min(1), commandId: z.string() })).default([]),
  /** The integration head built and tested before the first dispatch (null when the run has none). */
  baseline: BaselineState.nullable().default(null),
  /** The run's steps that belong to no task (plan, change, milestone review): their deadlines and fresh sessions. */
  steps: StepRuns.default(emptySteps()),
  /** A provider rate limit in force (rate.limited, until rate.eased back to the configured concurrency): views show "paused until". */
  rateLimit: z.object({ until: z.string(), cap: z.number().int().min(1) }).nullable().default(null),
  /** The deploy of a deployable run, per target (absent: none started; states and snapshots without it read the same). */
  deploy: DeployState.optional(),
})
export type SchedulerState = z.infer<typeof SchedulerState>

export function initialState(): SchedulerState {
  return {
    schemaVersion: SCHEMA_VERSION,
    eventCount: 0,
    lastAt: null,
    stage: "idle",
    runId: null,
    integration: null,
    requirement: "",
    config: null,
    planSummary: null,
    graph: null,
    tasks: [],
    currentPhase: 0,
    active: [],
    ready: [],
    mergeQueue: [],
    merging: [],
    mergeSplits: [],
    milestone: null,
    milestoneFails: 0,
    milestoneAnswer: null,
    finalReviewPassed: false,
    adrs: {},
    adrEdits: [],
    frozen: null,
    paused: false,
    runBudgetSpent: false,
    questions: [],
    finished: null,
    finalCheck: null,
    usage: emptyUsage(null),
    money: emptyMoney(),
    reverts: [],
    baseline: null,
    steps: emptySteps(),
    rateLimit: null,
  }
}

export function newTaskRuntime(id: string, remainingDeps: number): TaskRuntime {
  return {
    id,
    status: "pending",
    attempts: 0,
    repairs: 0,
    stalls: 0,
    gateRuns: 0,
    reviewRuns: 0,
    mergeRuns: 0,
    consults: 0,
    blocks: 0,
    remainingDeps,
    role: null,
    sessionId: null,
    reviewSessionId: null,
    gatesStarted: false,
    lastFailure: null,
    findings: [],
    evidence: null,
    consultOptions: null,
    consultBy: null,
    resume: null,
    waitingOn: null,
    revertOnMerge: false,
    merged: null,
    merges: 0,
    deadline: null,
    nudges: 0,
    overflow: null,
    history: [],
  }
}

/** Statuses in which a task holds a worktree whose work is not merged yet. */
export const ACTIVE_STATUSES: ReadonlySet<string> = new Set([
  "running",
  "gating",
  "debugging",
  "reviewing",
  "consulting",
  "merge_queued",
  "merging",
])

/** Nothing may start while the baseline runs or waits for the user's answer. */
export function baselineHolds(s: SchedulerState): boolean {
  const b = s.baseline
  if (!b) return false
  if (b.status === "running") return true
  return (b.status === "failed" || b.status === "errored") && !b.accepted
}
