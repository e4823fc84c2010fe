import type { Conversation } from "./conversation.ts"
import { truncate, type LogEntry, type RequestLog } from "./log.ts"
import type { Decision } from "./route.ts"
import { errorBody } from "./sse.ts"

// An unexpected request must be impossible to miss: the message says where in the scenario it
// happened, why, and what was actually received.

export function failureMessage(decision: Extract<Decision, { kind: "fail" }>, conv: Conversation): string {
  const where = [
    `agent "${decision.agent}"`,
    decision.script ? `script ${decision.script.index}${decision.script.script.name ? ` ("${decision.script.script.name}")` : ""}` : "no script",
    decision.stepIndex !== undefined ? `step ${decision.stepIndex}` : undefined,
  ]
    .filter(Boolean)
    .join(", ")
  return `scripted model: unexpected request: ${where}: ${decision.reason}. Received: ${describeReceived(decision.agent, conv)}`
}

function describeReceived(agent: string, conv: Conversation): string {
  return [
    `agent=${agent}`,
    `offered=[${conv.offered.join(", ")}]`,
    `assistantMessages=${conv.assistantTurns.length}`,
    `firstUser=${JSON.stringify(truncate(conv.firstUser, 160))}`,
    `lastUser=${JSON.stringify(truncate(conv.lastUser, 160))}`,
    `lastToolResult=${JSON.stringify(truncate(conv.lastToolResult, 160))}`,
  ].join(" ")
}

export function failResponse(log: RequestLog, onFailure: ((m: string) => void) | undefined, base: Omit<LogEntry, "ts" | "seq" | "reply" | "failure">, message: string): Response {
  log.add({ ts: new Date().toISOString(), ...base, reply: { kind: "error" }, failure: message })
  onFailure?.(message)
  // 400, not 5xx: clients retry server errors, and a retry would only fail the same way.
  return Response.json(errorBody(message), { status: 400 })
}
