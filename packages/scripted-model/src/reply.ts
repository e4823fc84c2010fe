import type { ChatRequest } from "./conversation.ts"
import type { LogEntry } from "./log.ts"
import { truncate } from "./log.ts"
import type { Step } from "./schema.ts"
import type { Reply, UsageNumbers } from "./sse.ts"

// Turns a (placeholder-filled) step into what the model says, and what that costs in tokens.

export function toReply(step: Step, nextId: () => string): Reply {
  if (step.text !== undefined) return { kind: "text", text: step.text }
  const calls: { tool: string; args?: Record<string, unknown>; rawArgs?: string }[] = step.tool !== undefined ? [{ tool: step.tool, args: step.args, rawArgs: step.rawArgs }] : (step.tools ?? [])
  // rawArgs: sent as is, valid JSON or not (a malformed call is the point of such a step).
  return { kind: "tools", calls: calls.map((c) => ({ id: nextId(), name: c.tool, arguments: c.rawArgs ?? JSON.stringify(c.args ?? {}) })) }
}

export function logReply(reply: Reply, step: Step | undefined): LogEntry["reply"] {
  if (reply.kind === "text") return { kind: "text", text: truncate(reply.text) }
  return { kind: step?.tools ? "tools" : "tool", tools: reply.calls.map((c) => c.name) }
}

// Rough 4-characters-per-token estimate, unless the scenario pins the numbers (benchmarks do).
export function usageFor(req: ChatRequest, reply: Reply, pinned: { promptTokens?: number; completionTokens?: number }): UsageNumbers {
  const replyChars = reply.kind === "text" ? reply.text.length : reply.calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0)
  const prompt = pinned.promptTokens ?? Math.ceil(JSON.stringify(req.messages).length / 4)
  const completion = pinned.completionTokens ?? Math.max(1, Math.ceil(replyChars / 4))
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
}
