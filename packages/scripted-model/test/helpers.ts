import { startScriptedModel, type ScriptedModel } from "../src/index.ts"

// Shared by the HTTP tests: real requests against a real server, parsed the way a client would.

export type Msg = Record<string, unknown>

export const system = (role: string, extra = ""): Msg => ({ role: "system", content: `You are helpful.\nAirCoding role: ${role}\n${extra}` })
export const user = (content: unknown): Msg => ({ role: "user", content })
export const assistantCalls = (...calls: { id: string; name: string; args?: object }[]): Msg => ({
  role: "assistant",
  content: "",
  tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) } })),
})
export const assistantText = (content: string): Msg => ({ role: "assistant", content })
export const toolResult = (id: string, content: unknown): Msg => ({ role: "tool", tool_call_id: id, content })
export const tools = (...names: string[]) => names.map((name) => ({ type: "function", function: { name, description: name, parameters: { type: "object", properties: {} } } }))

export interface ChatBody {
  messages: Msg[]
  tools?: unknown[]
  stream?: boolean
  [key: string]: unknown
}

/** The body OpenCode sends, minus the fields that do not matter here. */
export function openCodeLike(messages: Msg[], offered: string[] = ["bash", "read", "write"]): ChatBody {
  return {
    model: "scripted",
    max_tokens: 32000,
    messages,
    ...(offered.length ? { tools: tools(...offered), tool_choice: "auto" } : {}),
    stream: true,
    stream_options: { include_usage: true },
  }
}

export async function post(model: ScriptedModel, body: unknown, path = "/chat/completions"): Promise<Response> {
  return fetch(`${model.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
}

export interface Chunk {
  object: string
  choices: { index: number; delta: { role?: string; content?: string | null; tool_calls?: ToolDelta[] }; finish_reason: string | null }[]
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number }
}
interface ToolDelta {
  index: number
  id?: string
  type?: string
  function: { name?: string; arguments?: string }
}

/** Splits an SSE body into its data payloads; the last one must be [DONE]. */
export function sseData(body: string): string[] {
  return body
    .split("\n\n")
    .filter((e) => e.trim() !== "")
    .map((e) => {
      if (!e.startsWith("data: ")) throw new Error(`not an SSE data event: ${JSON.stringify(e)}`)
      return e.slice("data: ".length)
    })
}

export interface Assembled {
  text: string
  calls: { id: string; name: string; args: unknown; deltas: number }[]
  finish: string | null
  usage?: Chunk["usage"]
  chunks: Chunk[]
}

/** Reassembles streamed deltas the way an OpenAI client does. */
export function assemble(body: string): Assembled {
  const data = sseData(body)
  if (data[data.length - 1] !== "[DONE]") throw new Error("stream does not end with data: [DONE]")
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Chunk)
  const out: Assembled = { text: "", calls: [], finish: null, chunks }
  const raw: { id: string; name: string; args: string; deltas: number }[] = []
  for (const chunk of chunks) {
    if (chunk.usage) out.usage = chunk.usage
    for (const choice of chunk.choices) {
      if (choice.finish_reason) out.finish = choice.finish_reason
      out.text += choice.delta.content ?? ""
      for (const d of choice.delta.tool_calls ?? []) {
        if (d.id) raw[d.index] = { id: d.id, name: d.function.name ?? "", args: d.function.arguments ?? "", deltas: 0 }
        else {
          const call = raw[d.index]
          if (!call) throw new Error(`argument delta for tool call ${d.index} before its first chunk`)
          call.args += d.function.arguments ?? ""
          call.deltas++
        }
      }
    }
  }
  out.calls = raw.map((c) => ({ id: c.id, name: c.name, args: JSON.parse(c.args), deltas: c.deltas }))
  return out
}

export async function play(model: ScriptedModel, body: ChatBody): Promise<Assembled> {
  const res = await post(model, body)
  const text = await res.text()
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${text}`)
  return assemble(text)
}

export async function expectError(model: ScriptedModel, body: ChatBody): Promise<string> {
  const res = await post(model, body)
  const json = (await res.json()) as { error?: { message: string; type: string } }
  if (res.status !== 400 || json.error?.type !== "scripted_model_error") throw new Error(`expected a 400 scripted_model_error, got ${res.status} ${JSON.stringify(json)}`)
  return json.error.message
}

/** Starts a server per test and closes it afterwards. */
export function serverPool() {
  const started: ScriptedModel[] = []
  return {
    async start(scenario: Parameters<typeof startScriptedModel>[0]["scenario"], extra: Omit<Parameters<typeof startScriptedModel>[0], "scenario"> = {}) {
      const m = await startScriptedModel({ scenario, ...extra })
      started.push(m)
      return m
    },
    async closeAll() {
      await Promise.all(started.splice(0).map((m) => m.close()))
    },
  }
}
