import { z } from "zod"

/**
 * The core's vocabulary: the names and shapes every other file of the core speaks of, and nothing that
 * decides. It imports only zod, so the schemas and the rules can all import it without a cycle.
 */

export const WORKER_ROLES = ["executor", "debugger"] as const
export type WorkerRole = (typeof WORKER_ROLES)[number]

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
