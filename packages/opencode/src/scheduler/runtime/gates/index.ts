import * as analysis from "./analysis.ts"
import * as commit from "./commit.ts"
import * as pipeline from "./pipeline.ts"
import * as registry from "./registry.ts"
import * as S from "./schema.ts"
import * as text from "./text.ts"

export type { EvidenceFs, RunInput } from "./pipeline.ts"
export type { Exec, Failure, Gate, GateContext, GateOutcome, Route } from "./gate.ts"
export type { GateId } from "./registry.ts"
export { GATE_IDS, REGISTRY, requiredEvidence, routeOf, TOOL_MISSING } from "./registry.ts"
export { nodeEvidenceFs, processExec, REPORT_FILE, runGates } from "./pipeline.ts"
export { gatesFailedEvent, gatesOutcomeEvent } from "./outcome-event.ts"

/**
 * The evidence gates as one namespace (what runtime.ts and the views import): what the Scheduler's code
 * checks itself before a task may go to review. See README.md in this folder.
 */
export namespace Gates {
  export const GATE_NAMES = registry.GATE_IDS
  export type GateName = registry.GateId
  export const Requirement = S.Requirement
  export type Requirement = S.Requirement
  export const Severity = S.Severity
  export const Finding = S.Finding
  export type Finding = S.Finding
  export const GateResult = S.GateResult
  export type GateResult = S.GateResult
  export const GateReport = S.GateReport
  export type GateReport = S.GateReport
  export type RunInput = pipeline.RunInput
  export const C_CPP_EXTENSIONS = commit.C_CPP_EXTENSIONS
  export const CPPCHECK_ARGS = analysis.CPPCHECK_ARGS
  export const INSTALL_HINTS = text.INSTALL_HINTS
  export const run = pipeline.runGates
  export const parseCppcheck = analysis.parseCppcheck
  export const untrackedSources = commit.untrackedSources
  export const isCppFile = commit.isCppFile
}
