import { z } from "zod"
import { CONSULTANTS } from "./command"
import { PlanDelta } from "./delta.schema"
import { ReviewReport, WorkerResult } from "./report.schema"
import { TaskGraph, TaskNode } from "./task.schema"

/** Limits of model use; 0 is no limit. Part of the run's configuration, so a restart keeps the same limits. */
export const BudgetLimits = z.object({
  taskRequests: z.number().int().min(0),
  runRequests: z.number().int().min(0),
  taskTokens: z.number().int().min(0),
  runTokens: z.number().int().min(0),
  runMinutes: z.number().min(0),
})
export type BudgetLimits = z.infer<typeof BudgetLimits>

export const RunConfig = z.object({
  concurrency: z.number().int().min(1),
  repairBudget: z.number().int().min(0),
  stallRetries: z.number().int().min(0),
  inactivityMs: z.number().int().min(1),
  wallClockMs: z.number().int().min(1),
  autoConfirm: z.boolean(),
  /** Absent in logs written before budgets were recorded: the live settings are read then. */
  budgets: BudgetLimits.optional(),
})
export type RunConfig = z.infer<typeof RunConfig>

export const DEFAULT_RUN_CONFIG: RunConfig = {
  concurrency: 4,
  repairBudget: 3,
  stallRetries: 1,
  inactivityMs: 10 * 60_000,
  wallClockMs: 60 * 60_000,
  autoConfirm: false,
}

export const WORKER_ROLES = ["executor", "debugger"] as const
export type WorkerRole = (typeof WORKER_ROLES)[number]

export const GATES = ["commit", "diff", "write-set", "secrets", "build", "test", "analysis", "evidence", "tool-missing", "clang-tidy"] as const
export type Gate = (typeof GATES)[number]

export const BUDGET_KINDS = ["requests", "tokens", "cost", "minutes"] as const

/**
 * What kind of fault stopped a command the runtime carried out (not a verdict on the work): the
 * question to the user names it, and the answer retries the same step.
 */
export const FAULT_TAGS = ["toolchain", "git", "index-lock", "local-changes", "lock-timeout", "merge", "fs", "process", "session", "unexpected"] as const
export type FaultTag = (typeof FAULT_TAGS)[number]

/** How the final build of the integration branch ended: passed, failed (its commands failed) or errored (it could not run). */
export const FINAL_CHECK_STATUSES = ["passed", "failed", "errored"] as const

const at = z.string().min(1).describe("ISO time stamp given by the runtime; the machine never reads a clock")
const taskId = z.string().min(1)

function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.object({ type: z.literal(type), at, ...shape })
}

export const Event = z.discriminatedUnion("type", [
  /** `integration`: the branch the run merges into (the checkout's branch when it started). */
  event("run.started", { runId: z.string().min(1), requirement: z.string(), config: RunConfig, integration: z.string().min(1).optional() }),
  event("plan.proposed", { summary: z.string() }),
  event("plan.confirmed", {}),
  /** The user asked, in their own words, for changes to the proposed plan: the Architect revises and proposes again. */
  event("plan.revision.requested", { text: z.string().min(1) }),
  event("graph.accepted", { graph: TaskGraph }),
  event("task.dispatched", {
    taskId,
    role: z.enum(WORKER_ROLES),
    sessionId: z.string().min(1),
    attempt: z.number().int().min(1),
  }),
  event("worker.reported", { taskId, sessionId: z.string().min(1), result: WorkerResult }),
  event("worker.failed", {
    taskId,
    sessionId: z.string().min(1),
    reason: z.enum(["error", "aborted", "stalled", "timeout"]),
    message: z.string(),
  }),
  /**
   * The session of a task's worker or reviewer belonged to a process that died (AirCoding restarted). Not
   * the session's fault: the same step starts again in a fresh session without spending the stall budget.
   */
  event("session.lost", { taskId, sessionId: z.string().min(1) }),
  /**
   * The runtime could not start the session of a dispatch or a review (no worktree, the engine refused the
   * session): the step is tried again like a stalled one, and blocks when its retries are spent.
   * `run` is the attempt of a worker dispatch, or the review run of a reviewer.
   */
  event("dispatch.failed", { taskId, role: z.enum([...WORKER_ROLES, "reviewer"]), run: z.number().int().min(1), message: z.string() }),
  event("gates.started", { taskId }),
  event("gates.passed", { taskId, evidence: z.record(z.string(), z.string()) }),
  event("gates.failed", { taskId, gate: z.enum(GATES), message: z.string(), evidencePath: z.string() }),
  /** The gates could not run to a verdict (the toolchain file is invalid, git failed, writing evidence failed): not the worker's fault. */
  event("gates.errored", { taskId, tag: z.enum(FAULT_TAGS), message: z.string() }),
  event("review.started", { taskId, sessionId: z.string().min(1) }),
  event("review.reported", { taskId, report: ReviewReport }),
  event("merge.started", { taskId }),
  event("merge.succeeded", { taskId, commit: z.string().min(1), tag: z.string().min(1) }),
  event("merge.conflicted", { taskId, files: z.array(z.string()) }),
  /** The merge could not be carried out (a lock held, index.lock left, local changes in the way, a git error): nothing landed. */
  event("merge.blocked", { taskId, tag: z.enum(FAULT_TAGS), message: z.string() }),
  event("milestone.reached", { phase: z.number().int().min(1) }),
  event("milestone.reviewed", {
    phase: z.number().int().min(1),
    verdict: z.enum(["pass", "fail"]),
    fixTasks: z.array(TaskNode).optional(),
  }),
  event("change.requested", { text: z.string().min(1) }),
  event("delta.accepted", { delta: PlanDelta }),
  event("consult.answered", { taskId, choice: z.string(), by: z.enum(CONSULTANTS).default("scheduler"), reason: z.string().optional() }),
  /** The consulted agent's session ended, failed or stalled without a decision: the next one is asked. */
  event("consult.unanswered", { taskId, by: z.enum(CONSULTANTS), reason: z.string() }),
  event("question.answered", { questionId: z.string().min(1), answer: z.string() }),
  event("budget.spent", { taskId: taskId.optional(), kind: z.enum(BUDGET_KINDS) }),
  /** A worker's or reviewer's session ended in an error (or without its report, twice): `cause` says which. */
  /** A worker's or reviewer's session ended its turn without its report and was told to call it (once per session). */
  event("session.nudged", { taskId, sessionId: z.string().min(1) }),
  event("session.errored", { taskId, sessionId: z.string().min(1), cause: z.string() }),
  /** The final build and tests of the integration branch, run when the run finished (done or blocked). */
  event("finalCheck.done", { status: z.enum(FINAL_CHECK_STATUSES), message: z.string() }),
  event("timer.fired", { taskId, kind: z.enum(["inactivity", "wallclock"]) }),
  event("run.paused", {}),
  event("run.resumed", {}),
])
export type Event = z.infer<typeof Event>
export type EventType = Event["type"]
export type EventOf<T extends EventType> = Extract<Event, { type: T }>

/** An event as written to events.jsonl: the store numbers each line. */
export type StoredEvent = Event & { seq: number }
