import { z } from "zod"
import { ProviderFault } from "./provider-fault"

/**
 * The core's vocabulary: the names and shapes every other file of the core speaks of, and nothing that
 * decides. It imports only zod, so the schemas and the rules can all import it without a cycle.
 */

export const WORKER_ROLES = ["executor", "debugger"] as const
export type WorkerRole = (typeof WORKER_ROLES)[number]

/**
 * The roles whose session is thrown away and started afresh when it runs out of the model's context: their
 * work is safe in the task's worktree, so a fresh session from the context pack goes on (core/overflow.ts).
 * Main and the Architect are not among them: their conversations are compacted instead.
 */
export const FRESH_ON_OVERFLOW = [...WORKER_ROLES, "reviewer"] as const
export type OverflowRole = (typeof FRESH_ON_OVERFLOW)[number]

/**
 * A task's last context overflow: which role's session (`sessionId`) ran out, and how many fresh sessions
 * of that role have been started since (the user's answer sets it back to 0). Cleared by a report.
 */
export const OverflowRecord = z.object({
  role: z.enum(FRESH_ON_OVERFLOW),
  sessionId: z.string().min(1),
  fresh: z.number().int().min(0),
})
export type OverflowRecord = z.infer<typeof OverflowRecord>

/** What a fresh session after an overflow was started with, beside its context pack (session.refreshed). */
export const RefreshCarried = z.object({
  /** Files the task's diff so far touches, and its size in characters; `diffCut`: only its first part was given. */
  diffFiles: z.number().int().min(0),
  diffChars: z.number().int().min(0),
  diffCut: z.boolean(),
  /** The last gate failure was in the pack. */
  gateFailure: z.boolean(),
  /** The overflowed Debugger's steps (evidence the guard recorded) carried over. */
  steps: z.number().int().min(0),
})
export type RefreshCarried = z.infer<typeof RefreshCarried>

export const FINAL_CHECK_STATUSES = ["passed", "failed", "errored"] as const

/** The choices the code offers the scheduler agent when a rule cannot decide. */
export const CONSULT_OPTIONS = ["debug-again", "executor-again", "review-again", "block"] as const
export type ConsultOption = (typeof CONSULT_OPTIONS)[number]

/** Who is consulted, in order; when neither settles it ("block"), the user is asked. */
export const CONSULTANTS = ["scheduler", "architect"] as const
export type Consultant = (typeof CONSULTANTS)[number]

/** Limits of model use; 0 is no limit. Part of the run's configuration, so a restart keeps the same limits. */
export const BudgetLimits = z.object({
  taskRequests: z.number().int().min(0),
  runRequests: z.number().int().min(0),
  taskTokens: z.number().int().min(0),
  runTokens: z.number().int().min(0),
  runMinutes: z.number().min(0),
  /** Money in USD, as the engine prices requests (absent in logs written before money budgets: no limit). */
  runCostUsd: z.number().min(0).optional(),
  taskCostUsd: z.number().min(0).optional(),
})
export type BudgetLimits = z.infer<typeof BudgetLimits>

/** How a baseline ended: `skipped` when the toolchain has no build and no test command. */
export const BASELINE_STATUSES = ["passed", "failed", "errored", "skipped"] as const
export type BaselineStatus = (typeof BASELINE_STATUSES)[number]

export const BaselineState = z.object({
  /** The id of the `runBaseline` command in flight or last carried out (re-issued as is after a restart). */
  commandId: z.string(),
  /** Baselines run in this run: the next command's id counts on. */
  runs: z.number().int().min(1),
  status: z.enum(["running", ...BASELINE_STATUSES]),
  /** The integration commit it judged (null while it runs). */
  commit: z.string().nullable(),
  buildFailed: z.boolean(),
  /** Tests that failed on the baseline: inherited by every task, never blamed on one. */
  failingTests: z.array(z.string()),
  message: z.string(),
  /** The user chose to go on with these failures recorded as known. */
  accepted: z.boolean(),
  /** The open question about a failed baseline, if any. */
  questionId: z.string().nullable(),
})
export type BaselineState = z.infer<typeof BaselineState>

/**
 * Steps of a run that belong to no task, each carried out by one Architect session at a time: the plan,
 * a requirement change (replan) and a milestone review (the final one included). Like a task's worker,
 * each has a deadline in the state (a restart keeps it) and a bounded number of fresh sessions after a
 * failure before the user is asked.
 */
export const STEPS = ["plan", "change", "milestone"] as const
export type Step = (typeof STEPS)[number]

/** Fresh sessions a step gets after its session failed, before the user is asked (an answer "retry" gives them again). */
export const MAX_FRESH_SESSIONS = 2

export const StepRun = z.object({
  /** Fresh sessions started after a failure since the step last succeeded (or the user answered "retry"). */
  fresh: z.number().int().default(0),
  /** When the current session's wall-clock cap runs out (its start plus the cap); null while none works. */
  deadline: z.string().nullable().default(null),
})
export type StepRun = z.infer<typeof StepRun>

export const StepRuns = z.object({ plan: StepRun, change: StepRun, milestone: StepRun })
export type StepRuns = z.infer<typeof StepRuns>

export function emptySteps(): StepRuns {
  return { plan: { fresh: 0, deadline: null }, change: { fresh: 0, deadline: null }, milestone: { fresh: 0, deadline: null } }
}

/** What a session the Scheduler started is for (core/session-outcome.ts has a row of rules for each). */
export const PURPOSE_KINDS = ["executor", "debugger", "reviewer", "architect", "change", "consult", "milestone", "adr"] as const
export type PurposeKind = (typeof PURPOSE_KINDS)[number]

/**
 * How a session that did not report ended: `no-report` (it ended its turn without its report tool, was told
 * the exact tool once, and ended again), `errored` (the engine reported an error, with the provider's class
 * when it came from the model provider), `stalled` (no output past `inactivityMs`), `spawn-failed` (the
 * session could not be created or prompted).
 */
export const FAILED_OUTCOMES = ["no-report", "errored", "stalled", "spawn-failed"] as const
export type FailedOutcome = (typeof FAILED_OUTCOMES)[number]
export const SESSION_OUTCOMES = ["reported", ...FAILED_OUTCOMES] as const

/**
 * Why the user is asked, kept as data so each view words it in the person's language (text/question-text.ts);
 * the question's `text` is the English wording of the same.
 */
export const QuestionCause = z.object({
  who: z.enum(PURPOSE_KINDS),
  taskId: z.string().optional(),
  phase: z.number().int().optional(),
  final: z.boolean().optional(),
  outcome: z.enum(FAILED_OUTCOMES),
  fault: ProviderFault.optional(),
  /** The failure as the log has it (one line), when no provider class names it. */
  detail: z.string(),
  /** Fresh sessions tried before the user was asked. */
  tries: z.number().int().min(0).optional(),
})
export type QuestionCause = z.infer<typeof QuestionCause>
