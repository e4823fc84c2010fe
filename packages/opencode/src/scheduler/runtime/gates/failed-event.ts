import type { EventOf } from "../../core/event.schema.ts"
import { routeOf } from "./registry.ts"
import type { GateReport } from "./schema.ts"

/**
 * The `gates.failed` event of a failed gate run: the failed gate's id and the route it declared travel together,
 * so the machine decides by the route and knows no gate ids. A report without a failed gate blames the evidence
 * rule; one written before reports recorded the route gets it from the registry.
 */
export function gatesFailedEvent(taskId: string, report: GateReport, evidencePath: string): Omit<EventOf<"gates.failed">, "at"> {
  const gate = report.failedGate ?? "evidence"
  return { type: "gates.failed", taskId, gate, route: report.failedRoute ?? routeOf(gate), message: report.message, evidencePath }
}
