import type { HeldEvidence } from "../../core/required-evidence.ts"
import type { Gate } from "./gate.ts"
import type { GateResult } from "./schema.ts"

/**
 * What the gates hold, as `gates.passed` carries it and the one rule (`missingEvidence`, core/required-evidence.ts)
 * judges it: each provided kind's log when its gate ran and passed, keyed by the kind (not the gate's id), and each
 * kind whose gate had nothing to check in this change, with its summary. The evidence gate and the report both read
 * it from here, so the pipeline and the machine cannot judge the same results differently.
 */
export function heldEvidence(results: readonly GateResult[], gates: readonly Gate[], report?: string): HeldEvidence & { evidence: Record<string, string>; notApplicable: Record<string, string> } {
  const evidence: Record<string, string> = {}
  const notApplicable: Record<string, string> = {}
  for (const result of results) {
    const kind = gates.find((gate) => gate.id === result.gate)?.provides
    if (!kind || !result.passed) continue
    if (result.ran && result.logPath) evidence[kind] = result.logPath
    else if (!result.ran && result.notApplicable) notApplicable[kind] = result.summary
  }
  if (report) evidence.report = report
  return { evidence, notApplicable }
}
