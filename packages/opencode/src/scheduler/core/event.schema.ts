import { z } from "zod"
import { DEPLOY_CAUSES, DeployConfig } from "./deploy.schema"
import { PlanDelta } from "./delta.schema"
import { ReviewReport, WorkerResult } from "./report.schema"
import { TaskGraph, TaskNode } from "./task.schema"
import { ProviderFault } from "./provider-fault"
import { CompactionCheck } from "./compaction-check"
import { FAILURE_ROUTES } from "./gate-route"
import { BASELINE_STATUSES, BudgetLimits, CONSULTANTS, FAILED_OUTCOMES, FINAL_CHECK_STATUSES, FRESH_ON_OVERFLOW, RefreshCarried, STEPS, WORKER_ROLES } from "./vocabulary"

export { BudgetLimits, FINAL_CHECK_STATUSES, WORKER_ROLES, type WorkerRole } from "./vocabulary"


export const RunConfig = z.object({
  concurrency: z.number().int().min(1),
  repairBudget: z.number().int().min(0),
  stallRetries: z.number().int().min(0),
  inactivityMs: z.number().int().min(1),
  wallClockMs: z.number().int().min(1),
  autoConfirm: z.boolean(),
  /** Absent in logs written before budgets were recorded: the live settings are read then. */
  budgets: BudgetLimits.optional(),
  /**
   * What one session is expected to cost before any session of its role reported a cost: the context a session
   * starts with times the model's price, when the run started (absent or 0: nothing is held back until one did).
   */
  sessionCostUsd: z.number().min(0).optional(),
  /** Build and test the integration head once before the first dispatch (set when the toolchain has commands). */
  baseline: z.boolean().optional(),
  /**
   * The last phase gets the Architect's final review too, and the run is done only after it passes. Absent
   * in logs written before that rule, which replay as they ran (finished without it).
   */
  finalReview: z.boolean().optional(),
  /**
   * At most this many queued tasks are merged as one batch, built and tested together. Absent in logs written
   * before batches: one at a time, as they ran.
   */
  mergeBatch: z.number().int().min(1).optional(),
  /** The deploy targets of `.air/shared/rules/deploy.json` when the run started (absent: no deploy). */
  deploy: DeployConfig.optional(),
})
export type RunConfig = z.infer<typeof RunConfig>

export const DEFAULT_RUN_CONFIG: RunConfig = {
  concurrency: 4,
  repairBudget: 3,
  stallRetries: 1,
  inactivityMs: 10 * 60_000,
  wallClockMs: 60 * 60_000,
  autoConfirm: false,
  finalReview: true,
  mergeBatch: 4,
}


const BUDGET_KINDS = ["requests", "tokens", "cost", "minutes"] as const

/**
 * What kind of fault stopped a command the runtime carried out (not a verdict on the work): the
 * question to the user names it, and the answer retries the same step.
 */
const FAULT_TAGS = ["toolchain", "git", "index-lock", "local-changes", "lock-timeout", "merge", "fs", "disk-full", "process", "session", "unexpected"] as const
export type FaultTag = (typeof FAULT_TAGS)[number]

/** How the final build of the integration branch ended: passed, failed (its commands failed) or errored (it could not run). */

const ADR_EDIT_KINDS = ["clarification", "decision-change"] as const

const at = z.string().min(1).describe("ISO time stamp given by the runtime; the machine never reads a clock")
const taskId = z.string().min(1)

function event<T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.object({ type: z.literal(type), at, ...shape })
}

export const Event = z.discriminatedUnion("type", [
  /** `integration`: the branch the run merges into (the checkout's branch when it started). */
  event("run.started", { runId: z.string().min(1), requirement: z.string(), config: RunConfig, integration: z.string().min(1).optional() }),
  /** `graph`: the tasks as the Architect drafted them, shown to the person who confirms (written as the graph after the confirmation). */
  event("plan.proposed", { summary: z.string(), graph: TaskGraph.optional() }),
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
    /** The model provider's error, classified: one that waiting cannot cure asks the user at once. */
    fault: ProviderFault.optional(),
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
  /**
   * `evidence`: evidence kind (and gate id) → the log that proves it. `requires`: the evidence kinds the gates
   * required of the task's kind (each gate declares its own); absent only in logs written before it was carried.
   * `notApplicable`: evidence kind → why its gate had nothing to check in this change (no C/C++ file changed); such
   * a kind is satisfied (`missingEvidence` in required-evidence.ts, the one rule the pipeline uses too).
   */
  event("gates.passed", {
    taskId,
    evidence: z.record(z.string(), z.string()),
    requires: z.array(z.string()).optional(),
    notApplicable: z.record(z.string(), z.string()).optional(),
  }),
  /**
   * `gate`: the failed gate's id (any: the core lists none). `route`: where the failure goes, as the gate
   * declared it (`gate-route.ts`); absent only in logs written before it was carried (`routeOfOldLogEvent`).
   */
  event("gates.failed", { taskId, gate: z.string().min(1), route: z.enum(FAILURE_ROUTES).optional(), message: z.string(), evidencePath: z.string() }),
  /** The gates could not run to a verdict (the toolchain file is invalid, git failed, writing evidence failed): not the worker's fault. */
  event("gates.errored", { taskId, tag: z.enum(FAULT_TAGS), message: z.string() }),
  event("review.started", { taskId, sessionId: z.string().min(1) }),
  /**
   * `uiSkillSections`: a ui task's UI design skill, section by section, as its reviewer was given it (the runtime
   * reads the skill files, the core knows none); the report needs a row "UI skill: <section>" for each. Absent for
   * other kinds, and in logs written before the rule.
   */
  event("review.reported", { taskId, report: ReviewReport, uiSkillSections: z.array(z.string().min(1)).optional() }),
  event("merge.started", { taskId }),
  /** `head`: the integration head the task landed in when that is not `commit` (a batch's merge commit). */
  event("merge.succeeded", { taskId, commit: z.string().min(1), tag: z.string().min(1), head: z.string().min(1).optional() }),
  event("merge.conflicted", { taskId, files: z.array(z.string()) }),
  /** The merge could not be carried out (a lock held, index.lock left, local changes in the way, a git error): nothing landed. */
  event("merge.blocked", { taskId, tag: z.enum(FAULT_TAGS), message: z.string() }),
  event("milestone.reached", { phase: z.number().int().min(1) }),
  event("milestone.reviewed", {
    phase: z.number().int().min(1),
    verdict: z.enum(["pass", "fail"]),
    fixTasks: z.array(TaskNode).optional(),
    /** What the review found; named in the question when failing reviews run out of rounds. */
    findings: z.array(z.string()).optional(),
  }),
  event("change.requested", { text: z.string().min(1) }),
  event("delta.accepted", { delta: PlanDelta }),
  event("consult.answered", { taskId, choice: z.string(), by: z.enum(CONSULTANTS).default("scheduler"), reason: z.string().optional() }),
  /** The consulted agent's session ended, failed or stalled without a decision: the next one is asked. */
  event("consult.unanswered", { taskId, by: z.enum(CONSULTANTS), reason: z.string() }),
  event("question.answered", { questionId: z.string().min(1), answer: z.string() }),
  event("budget.spent", { taskId: taskId.optional(), kind: z.enum(BUDGET_KINDS) }),
  /**
   * The money the machine held back for a task's session when it started it (core/money-rules.ts), recorded
   * by the runtime as it starts the session: what was spent and the limit then, so the log shows each reservation.
   */
  event("cost.reserved", { taskId, role: z.string().min(1), usd: z.number().min(0), spentUsd: z.number().min(0), limitUsd: z.number().min(0) }),
  /** A worker's or reviewer's session ended its turn without its report and was told to call it (once per session). */
  event("session.nudged", { taskId, sessionId: z.string().min(1) }),
  /** A worker's or reviewer's session ended in an error (or without its report, twice): `cause` says which. */
  event("session.errored", { taskId, sessionId: z.string().min(1), cause: z.string(), fault: ProviderFault.optional() }),
  /**
   * A worker's or reviewer's session ended with the provider's context-length error: the machine starts a
   * fresh session of the same role for the same task, or asks the user when a fresh one overflowed too (core/overflow.ts).
   */
  event("session.overflowed", { taskId, sessionId: z.string().min(1), role: z.enum(FRESH_ON_OVERFLOW), message: z.string() }),
  /** The fresh session after an overflow started (`from`: the session that overflowed), with what it carried beside its context pack. */
  event("session.refreshed", { taskId, sessionId: z.string().min(1), role: z.enum(FRESH_ON_OVERFLOW), from: z.string().min(1), carried: RefreshCarried }),
  /** The final build and tests of the integration branch, run when the run finished (done or blocked). */
  event("finalCheck.done", { status: z.enum(FINAL_CHECK_STATUSES), message: z.string() }),
  /** A task's session (`taskId`) or a step's (`step`: plan, change, milestone review) ran out of time; exactly one of the two. */
  event("timer.fired", { taskId: taskId.optional(), step: z.enum(STEPS).optional(), kind: z.enum(["inactivity", "wallclock"]) }),
  event("run.paused", {}),
  event("run.resumed", {}),
  /**
   * A session's model use so far (its totals, not an increment; at most one per assistant message it ended):
   * `taskId` when it worked for a task. The machine decides the budgets from these.
   */
  event("usage.recorded", {
    sessionId: z.string().min(1),
    taskId: taskId.optional(),
    role: z.string().min(1),
    requests: z.number().int().min(0),
    tokens: z.number().int().min(0),
    /** Of `tokens`, those estimated by content class for calls the provider reported no usage for (runtime/sessions/token-estimate.ts). */
    estimated: z.number().int().min(0).optional(),
    /** The provider's reported tokens over the estimate for the same calls: how far the estimate is from this provider. */
    ratio: z.number().positive().optional(),
    /** The session's cost so far in USD, as the engine priced its requests (absent in logs from before money). */
    costUsd: z.number().min(0).optional(),
    /** Its requests to a model with no price: their cost is unknown, never $0. */
    unpriced: z.number().int().min(0).optional(),
    /** `provider/model` of its last call, as the engine reported it (absent in logs from before; the trace names it). */
    model: z.string().min(1).optional(),
  }),
  /** A revert the machine ordered was carried out (or found already made), or it conflicted and the user was told. */
  event("revert.done", { taskId, round: z.number().int().min(1), status: z.enum(["reverted", "conflicted"]) }),
  /** The baseline's outcome: the integration head built and tested in a worktree of its own (`runBaseline`). */
  event("baseline.done", {
    commit: z.string().min(1),
    status: z.enum(BASELINE_STATUSES),
    buildFailed: z.boolean().optional(),
    failingTests: z.array(z.string()),
    message: z.string(),
  }),
  /**
   * What no other rule covers, recorded so it is never silence: a command whose outcome and failure events were both
   * refused (`source: command`, with the command's type and task), or a run the watchdog found with nothing in flight,
   * nothing asked and work left (`source: watchdog`, `state` saying what it saw). Its rules: core/fault-rules.ts.
   */
  event("runtime.fault", {
    source: z.enum(["command", "watchdog"]),
    message: z.string(),
    taskId: z.string().optional(),
    command: z.string().optional(),
    commandId: z.string().optional(),
    state: z.string().optional(),
  }),
  /** The integration branch's head is a commit AirCoding did not make (someone pushed or committed): re-baseline. */
  event("integration.moved", { commit: z.string().min(1) }),
  /** An ADR accepted: its file's content hash (computed by the runtime), to notice later edits. */
  event("adr.recorded", { adr: z.string().min(1), hash: z.string().min(1) }),
  /** An accepted ADR's file changed (by a person or an agent): `hash` is the new content's. */
  event("adr.edited", { adr: z.string().min(1), hash: z.string().min(1) }),
  /** The Architect's reading of an edit: a clarification only records it; a decision change cascades to the tasks citing the ADR. */
  event("adr.classified", { adr: z.string().min(1), hash: z.string().min(1), kind: z.enum(ADR_EDIT_KINDS), note: z.string().default("") }),
  /**
   * The Architect, consulted on a task (a worker's blocked report or plan issue, a reviewer's block-release),
   * answered with a plan delta instead of a choice: the delta applies at once, and the task runs again.
   */
  event("consult.replanned", { taskId, delta: PlanDelta }),
  /**
   * The merge build failed: the task's change applied on the current integration head did not build or pass
   * its tests (though the task passed alone). Nothing landed; `evidencePath` is the failing command's log.
   */
  event("merge.rejected", { taskId, message: z.string(), evidencePath: z.string() }),
  /** The batch stopped before this task's outcome (its merge was blocked on another task's account): nothing of it landed. */
  event("merge.deferred", { taskId }),
  /**
   * The session of a step that belongs to no task (the Architect's plan, a replan, a milestone or final
   * review) ended without its report, errored (`fault`: the provider's class) or could not start: a fresh
   * session up to MAX_FRESH_SESSIONS, then one question to the user.
   */
  event("step.failed", { step: z.enum(STEPS), outcome: z.enum(FAILED_OUTCOMES), message: z.string(), fault: ProviderFault.optional(), phase: z.number().int().min(1).optional() }),
  /**
   * A batch of tasks merged together failed its build or tests: nothing landed, and no task is blamed yet.
   * The Scheduler splits the batch and tries the halves (bisection) until the failure has one task to go to.
   */
  event("merge.batch-rejected", { taskIds: z.array(z.string().min(1)).min(2), message: z.string(), evidencePath: z.string() }),
  /**
   * The provider refused a session's call with a 429: the run's one rate limiter holds every new model call
   * until `until` (the advised time) and lets at most `cap` tasks work until calls succeed again.
   */
  event("rate.limited", { until: z.string().min(1), cap: z.number().int().min(1), sessionId: z.string().min(1), message: z.string() }),
  /** Calls succeed again after a rate limit: `cap` tasks may work (one step up; the configured concurrency ends the limit). */
  event("rate.eased", { cap: z.number().int().min(1) }),
  /**
   * A build farm host failed during a task's build (issue 38 item 6): distcc ran the compiles it would have sent
   * there locally, and the build went on. `hosts`: `host:port` each; `localFallbacks`: compiles run locally instead;
   * `evidencePath`: the gate's farm record (farm.json). Nothing in the run changes; the user is told.
   */
  event("farm.degraded", {
    taskId: taskId.optional(),
    hosts: z.array(z.string().min(1)).min(1),
    localFallbacks: z.number().int().min(0),
    evidencePath: z.string().min(1),
  }),
  /**
   * The engine waits to retry a session's model call that failed in a way waiting may cure (a 5xx, overloaded,
   * a cut stream): the attempt, when the next one goes (its own backoff or the provider's retry-after) and the
   * provider's message in one line. Nothing changes in the run; the views say it until `nextAt`. A 429 is
   * rate.limited instead: it pauses the whole run.
   */
  /**
   * The engine compacted the conversation of Main or the Architect and its summary was checked against the
   * conversation (compaction-check.ts): `attempts` summaries were made (2: the first lost more than 30% of a
   * class and was redone naming what it lost); `counts`: of the last summary the model wrote, the items of
   * each class it kept and lost; `appended`: the items written back from the record after both lost them (outcome
   * "repaired"; the user is told).
   */
  event("context.compacted", {
    sessionId: z.string().min(1),
    role: z.enum(CompactionCheck.ROLES),
    outcome: z.enum(CompactionCheck.OUTCOMES),
    attempts: z.number().int().min(1).max(CompactionCheck.ATTEMPTS),
    counts: z.record(z.enum(CompactionCheck.CLASSES), z.object({ kept: z.number().int().min(0), lost: z.number().int().min(0) })),
    appended: z.array(z.string()),
  }),
  event("model.retrying", {
    sessionId: z.string().min(1),
    role: z.string().min(1),
    taskId: taskId.optional(),
    attempt: z.number().int().min(1),
    nextAt: z.string().min(1),
    message: z.string(),
  }),
  /** A deploy of one target began, for this merged commit (recorded before anything reaches the target). */
  event("deploy.started", { target: z.string().min(1), n: z.number().int().min(1), commit: z.string().min(1) }),
  /** Every artefact's SHA-256 on the target matched the local build, the service is active, the smoke test passed. */
  event("deploy.passed", {
    target: z.string().min(1),
    n: z.number().int().min(1),
    commit: z.string().min(1),
    message: z.string(),
    evidencePath: z.string().min(1),
    service: z.string(),
  }),
  /** The deploy failed; `rolledBack`: the previous release runs again (or nothing had changed on the target). */
  event("deploy.failed", {
    target: z.string().min(1),
    n: z.number().int().min(1),
    /** null: the deploy failed before it knew which commit it carried (the rules or git failed). */
    commit: z.string().min(1).nullable(),
    cause: z.enum(DEPLOY_CAUSES),
    message: z.string(),
    evidencePath: z.string(),
    rolledBack: z.boolean(),
    hashMatch: z.boolean().nullable(),
    service: z.string().nullable(),
    smoke: z.enum(["passed", "failed", "not-run"]).nullable(),
  }),
])
export type Event = z.infer<typeof Event>
export type EventType = Event["type"]
export type EventOf<T extends EventType> = Extract<Event, { type: T }>

/** An event as written to events.jsonl: the store numbers each line. */
export type StoredEvent = Event & { seq: number }
