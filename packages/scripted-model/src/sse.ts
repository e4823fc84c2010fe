// Encodes a scripted reply the way OpenAI's chat-completions API does, streamed (SSE) or whole.

export type Reply =
  | { kind: "text"; text: string }
  | { kind: "tools"; calls: { id: string; name: string; arguments: string }[] }

export interface UsageNumbers {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}

interface Meta {
  id: string
  model: string
  created: number
}

const finishReason = (reply: Reply) => (reply.kind === "text" ? "stop" : "tool_calls")

/** Splits into up to `parts` non-empty pieces, so clients really have to reassemble deltas. */
function splitIntoPieces(s: string, parts = 3): string[] {
  if (s.length <= 1) return [s]
  const size = Math.ceil(s.length / parts)
  const out: string[] = []
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size))
  return out
}

export function sseEvents(reply: Reply, meta: Meta, usage: UsageNumbers | undefined): string[] {
  const chunk = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ id: meta.id, object: "chat.completion.chunk", created: meta.created, model: meta.model, choices, ...extra })}\n\n`
  const delta = (d: object, finish: string | null = null) => chunk([{ index: 0, delta: d, finish_reason: finish }])

  const events: string[] = []
  if (reply.kind === "text") {
    events.push(delta({ role: "assistant", content: "" }))
    for (const piece of splitIntoPieces(reply.text)) events.push(delta({ content: piece }))
  } else {
    reply.calls.forEach((call, index) => {
      events.push(
        delta({
          ...(index === 0 ? { role: "assistant", content: null } : {}),
          tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }],
        }),
      )
      for (const piece of splitIntoPieces(call.arguments)) events.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }))
    })
  }
  events.push(delta({}, finishReason(reply)))
  if (usage) events.push(chunk([], { usage }))
  events.push("data: [DONE]\n\n")
  return events
}

/** One write per event, so a client reading the stream sees them as separate deltas. */
export function sseResponse(events: string[], cut = false): Response {
  const encoder = new TextEncoder()
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const e of events) controller.enqueue(encoder.encode(e))
      if (!cut) return controller.close()
      // Let the chunks reach the client, then break the stream (the server resets the connection).
      await new Promise((r) => setTimeout(r, 50))
      controller.error(new Error("scripted fault: stream cut"))
    },
  })
  return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } })
}

export function completionBody(reply: Reply, meta: Meta, usage: UsageNumbers): object {
  const message =
    reply.kind === "text"
      ? { role: "assistant", content: reply.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: reply.calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
        }
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, finish_reason: finishReason(reply), logprobs: null }],
    usage,
  }
}

export function errorBody(message: string): object {
  return { error: { message, type: "scripted_model_error", param: null, code: null } }
}
