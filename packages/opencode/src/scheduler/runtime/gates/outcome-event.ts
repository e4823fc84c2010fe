import type { EventOf } from "../../core/event.schema.ts"
import { routeOf } from "./registry.ts"
import type { GateReport } from "./schema.ts"

type Input<T extends "gates.passed" | "gates.failed"> = Omit<EventOf<T>, "at">

/**
 * The `gates.failed` event of a failed gate run: the failed gate's id and the route it declared travel together,
 * so the machine decides by the route and knows no gate ids. A report without a failed gate blames the evidence
 * rule; one written before reports recorded the route gets it from the registry.
 */
export function gatesFailedEvent(taskId: string, report: GateReport, evidencePath: string): Input<"gates.failed"> {
  const gate = report.failedGate ?? "evidence"
  return { type: "gates.failed", taskId, gate, route: report.failedRoute ?? routeOf(gate), message: report.message, evidencePath }
}

/**
 * The one event a gate run's report becomes: `gates.failed`, or `gates.passed` with each gate's log by its id, the
 * evidence by the kind it provides, what the kind required and what was not applicable — exactly what the
 * pipeline's evidence gate judged, so the machine, applying the same rule, accepts every pass.
 */
export function gatesOutcomeEvent(taskId: string, report: GateReport, reportPath: string): Input<"gates.passed"> | Input<"gates.failed"> {
  if (!report.passed) return gatesFailedEvent(taskId, report, reportPath)
  const evidence: Record<string, string> = {}
  for (const g of report.gates) if (g.logPath) evidence[g.gate] = g.logPath
  Object.assign(evidence, report.evidence)
  evidence.report = reportPath
  const notApplicable = report.notApplicable ?? {}
  return {
    type: "gates.passed",
    taskId,
    evidence,
    requires: report.requires,
    ...(Object.keys(notApplicable).length > 0 ? { notApplicable } : {}),
  }
}
