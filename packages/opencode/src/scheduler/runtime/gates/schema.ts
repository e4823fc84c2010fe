import { z } from "zod"
import { FAILURE_ROUTES } from "../../core/gate-route.ts"
import { Finding } from "../results/finding.ts"

/**
 * What the gates write and return. Gate ids are strings here: which ids exist is the registry's business
 * (`registry.ts`), so a new gate needs no schema change.
 */

/** The failure id used when a tool a gate needs is not installed (any gate may report it; it goes to a person). */
export const TOOL_MISSING = "tool-missing" as const

/**
 * An evidence kind a task's kind requires the gates to have run and passed: named by the gate that `provides` it,
 * required of the kinds that gate is `requiredFor` (`requiredEvidence` in registry.ts).
 */
export const Requirement = z.string().min(1)
export type Requirement = z.infer<typeof Requirement>

export { Finding, Severity } from "../results/finding.ts"

export const GateResult = z.object({
  gate: z.string().min(1),
  passed: z.boolean(),
  /** False when the gate had nothing to run (no command configured, no C/C++ file changed, skipped). */
  ran: z.boolean(),
  /** With ran false: the change held nothing this gate checks, so the evidence it provides is not applicable (and satisfied). */
  notApplicable: z.boolean().optional(),
  ms: z.number().int().nonnegative(),
  logPath: z.string().optional(),
  summary: z.string(),
  /** Set when the gate could not run because this tool is not installed. */
  missingTool: z.string().optional(),
  /** Set when the gate ran nothing and reused a recorded result for the same build inputs (runtime/results/). */
  reused: z
    .object({ commit: z.string(), at: z.string(), key: z.string(), savedMs: z.number().int().nonnegative(), tests: z.number().int().nonnegative(), source: z.string() })
    .strict()
    .optional(),
})
export type GateResult = z.infer<typeof GateResult>

export const GateReport = z.object({
  taskId: z.string(),
  attempt: z.number().int().nonnegative(),
  kind: z.string(),
  passed: z.boolean(),
  /** A gate id, or `tool-missing`. */
  failedGate: z.string().min(1).optional(),
  /** Where the failure goes, as the failed gate declared it (`Gate.route`); absent in reports written before it was recorded. */
  failedRoute: z.enum(FAILURE_ROUTES).optional(),
  /** For people (and the Debugger): what failed, where, the first relevant lines, what to do. */
  message: z.string(),
  gates: z.array(GateResult),
  changedFiles: z.array(z.string()),
  findings: z.array(Finding),
  /** Tests that failed, but failed on the baseline too: inherited, not blamed on the task. */
  inheritedTests: z.array(z.string()).optional(),
  requires: z.array(Requirement),
  /** Evidence kind (a gate's `provides`) → the log that proves it, from the gate that `provides` it; plus `report`. */
  evidence: z.record(z.string(), z.string()).optional(),
  /** Evidence kind → why its gate had nothing to check in this change; satisfies the requirement (core/required-evidence.ts). */
  notApplicable: z.record(z.string(), z.string()).optional(),
  toolchain: z.object({ source: z.enum(["file", "detected", "none", "given"]), note: z.string() }),
  /** With toolchain areas: the areas whose build and tests ran for this task, and those its write-set left out. */
  areas: z.object({ run: z.array(z.string()), skipped: z.array(z.string()) }).optional(),
  /** The build slot the building gates ran in (`slots/build-slot.ts`), and what was done to make it right. */
  buildTree: z.object({ slot: z.string(), notes: z.array(z.string()) }).optional(),
  evidenceDir: z.string(),
})
export type GateReport = z.infer<typeof GateReport>
