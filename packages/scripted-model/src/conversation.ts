import { z } from "zod"
import { isChaosTurn } from "./fault-schema.ts"

// What we read from an OpenAI chat-completions request. Loose objects: clients send many more fields
// (temperature, provider options...) that the script does not care about.

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() })
const Content = z.union([z.string(), z.array(ContentPart), z.null()]).optional()

const Message = z.looseObject({
  role: z.string(),
  content: Content,
  tool_calls: z
    .array(z.looseObject({ id: z.string().optional(), function: z.looseObject({ name: z.string(), arguments: z.string().optional() }) }))
    .optional(),
  tool_call_id: z.string().optional(),
})
type Message = z.infer<typeof Message>

export const ChatRequest = z.looseObject({
  model: z.string().optional(),
  messages: z.array(Message).min(1),
  tools: z.array(z.looseObject({ type: z.string().optional(), function: z.looseObject({ name: z.string() }) })).optional(),
  stream: z.boolean().optional().nullable(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional().nullable(),
})
export type ChatRequest = z.infer<typeof ChatRequest>

/** The parts of a request that routing, expectations and the log look at, as plain strings. */
export interface Conversation {
  system: string
  firstUser: string
  lastUser: string
  /**
   * The pictures in the last user message, by media type ("image/png" from an `image_url` part's data URL; the
   * part's type when its URL is not a data URL): how a test sees that a prompt's screenshots arrived.
   */
  lastUserImages: string[]
  offered: string[]
  /** Tool results answering the most recent assistant tool-call message, joined by newlines. */
  lastToolResult: string
  /** The text of every assistant message, joined by newlines (what the model is told it said: a compaction's summary, say). */
  assistantText: string
  /**
   * Per assistant message, in order: the tool results that answered it (joined), "" if none, and the last user
   * message before it (what it answered: a step's `when` is checked against it).
   */
  assistantTurns: { toolResults: string; chaos: boolean; lastUser: string }[]
}

function contentText(content: Message["content"]): string {
  if (typeof content === "string") return content
  if (!content) return ""
  return content.map((p) => (p.type === "text" ? (p.text ?? "") : `[${p.type}]`)).join("")
}

const ImageUrl = z.looseObject({ url: z.string() })

function images(content: Message["content"]): string[] {
  if (!Array.isArray(content)) return []
  return content.flatMap((p) => {
    if (p.type !== "image_url") return []
    const url = ImageUrl.safeParse(p.image_url)
    const mime = url.success ? /^data:([^;,]+)/.exec(url.data.url)?.[1] : undefined
    return [mime ?? p.type]
  })
}

export function readConversation(req: ChatRequest): Conversation {
  const { messages } = req
  const users = messages.filter((m) => m.role === "user")
  const assistantTurns: Conversation["assistantTurns"] = []
  let lastToolResult = ""
  let userBefore = ""
  messages.forEach((m, i) => {
    if (m.role === "user") userBefore = contentText(m.content)
    if (m.role !== "assistant") return
    const toolResults = toolResultsAfter(messages, i)
    assistantTurns.push({ toolResults, chaos: isChaosTurn(contentText(m.content), (m.tool_calls ?? []).map((c) => c.id ?? "")), lastUser: userBefore })
    if (m.tool_calls?.length) lastToolResult = toolResults
  })
  return {
    system: messages
      .filter((m) => m.role === "system" || m.role === "developer")
      .map((m) => contentText(m.content))
      .join("\n"),
    firstUser: contentText(users[0]?.content),
    lastUser: contentText(users[users.length - 1]?.content),
    lastUserImages: images(users[users.length - 1]?.content),
    offered: (req.tools ?? []).map((t) => t.function.name),
    lastToolResult,
    assistantText: messages
      .filter((m) => m.role === "assistant")
      .map((m) => contentText(m.content))
      .join("\n"),
    assistantTurns,
  }
}

// The tool messages that directly follow an assistant message are the results of its calls.
function toolResultsAfter(messages: Message[], index: number): string {
  const out: string[] = []
  for (let j = index + 1; j < messages.length && messages[j]!.role === "tool"; j++) out.push(contentText(messages[j]!.content))
  return out.join("\n")
}
