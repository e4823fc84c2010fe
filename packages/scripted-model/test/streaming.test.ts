import { afterEach, describe, expect, it } from "vitest"
import type { Scenario } from "../src/index.ts"
import { assemble, openCodeLike, play, post, serverPool, sseData, system, tools, user } from "./helpers.ts"

const pool = serverPool()
afterEach(() => pool.closeAll())

const scenario: Scenario = {
  name: "streaming",
  scripts: [
    { agent: "writer", steps: [{ tool: "write", args: { filePath: "src/a.ts", content: "export const a = 1\n", nested: { list: [1, "two"] } } }] },
    { agent: "parallel", steps: [{ tools: [{ tool: "read", args: { filePath: "a" } }, { tool: "bash", args: { command: "ls -la" } }] }] },
    { agent: "talker", steps: [{ text: "All done: the build is green." }] },
  ],
}

describe("streaming responses", () => {
  it("streams a tool call as deltas that reassemble to the scripted args", async () => {
    const m = await pool.start(scenario)
    const res = await post(m, openCodeLike([system("writer"), user("go")]))
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const body = await res.text()
    const data = sseData(body)
    expect(data.at(-1)).toBe("[DONE]")

    const got = assemble(body)
    expect(got.calls).toHaveLength(1)
    const [call] = got.calls
    expect(call!.name).toBe("write")
    expect(call!.id).toMatch(/^call_\d+$/)
    expect(call!.args).toEqual({ filePath: "src/a.ts", content: "export const a = 1\n", nested: { list: [1, "two"] } })
    expect(call!.deltas).toBeGreaterThan(1)
    expect(got.finish).toBe("tool_calls")

    // First chunk announces the call with empty arguments; all chunks are chat.completion.chunk.
    const first = got.chunks[0]!.choices[0]!.delta.tool_calls![0]!
    expect(first).toMatchObject({ index: 0, type: "function", function: { name: "write", arguments: "" } })
    expect(got.chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true)
  })

  it("ends with a usage chunk (empty choices) when include_usage is set, before [DONE]", async () => {
    const m = await pool.start(scenario)
    const got = await play(m, openCodeLike([system("talker"), user("go")]))
    const last = got.chunks.at(-1)!
    expect(last.choices).toEqual([])
    expect(last.usage!.prompt_tokens).toBeGreaterThan(0)
    expect(last.usage!.completion_tokens).toBeGreaterThan(0)
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens)
  })

  it("sends no usage chunk without stream_options.include_usage", async () => {
    const m = await pool.start(scenario)
    const body = { ...openCodeLike([system("talker"), user("go")]), stream_options: undefined }
    const got = await play(m, body)
    expect(got.usage).toBeUndefined()
    expect(got.text).toBe("All done: the build is green.")
  })

  it("streams text in several content deltas with finish_reason stop", async () => {
    const m = await pool.start(scenario)
    const got = await play(m, openCodeLike([system("talker"), user("go")]))
    expect(got.text).toBe("All done: the build is green.")
    expect(got.chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(1)
    expect(got.finish).toBe("stop")
    expect(got.calls).toEqual([])
  })

  it("streams parallel tool calls with distinct indexes and ids", async () => {
    const m = await pool.start(scenario)
    const got = await play(m, openCodeLike([system("parallel"), user("go")]))
    expect(got.calls.map((c) => [c.name, c.args])).toEqual([
      ["read", { filePath: "a" }],
      ["bash", { command: "ls -la" }],
    ])
    expect(new Set(got.calls.map((c) => c.id)).size).toBe(2)
    expect(got.finish).toBe("tool_calls")
  })

  it("applies pinned usage numbers from defaults and steps", async () => {
    const m = await pool.start({
      name: "usage",
      defaults: { usage: { promptTokens: 1000, completionTokens: 50 } },
      scripts: [{ agent: "talker", steps: [{ text: "a" }, { text: "b", usage: { completionTokens: 7 } }] }],
    })
    const first = await play(m, openCodeLike([system("talker"), user("go")]))
    expect(first.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050 })
    const second = await play(m, openCodeLike([system("talker"), user("go"), { role: "assistant", content: "a" }, user("more")]))
    expect(second.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 7, total_tokens: 1007 })
  })
})

describe("non-streaming responses", () => {
  it("returns a chat.completion with tool_calls and usage", async () => {
    const m = await pool.start(scenario)
    const res = await post(m, { model: "scripted", messages: [system("parallel"), user("go")], tools: tools("bash", "read") })
    expect(res.status).toBe(200)
    const json = (await res.json()) as any
    expect(json.object).toBe("chat.completion")
    expect(json.choices[0].finish_reason).toBe("tool_calls")
    const calls = json.choices[0].message.tool_calls
    expect(calls.map((c: any) => [c.type, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ["function", "read", { filePath: "a" }],
      ["function", "bash", { command: "ls -la" }],
    ])
    expect(json.usage.total_tokens).toBe(json.usage.prompt_tokens + json.usage.completion_tokens)
  })

  it("returns text with finish_reason stop", async () => {
    const m = await pool.start(scenario)
    const res = await post(m, { model: "scripted", messages: [system("talker"), user("go")], stream: false }, "/chat/completions")
    const json = (await res.json()) as any
    expect(json.choices[0].message).toEqual({ role: "assistant", content: "All done: the build is green." })
    expect(json.choices[0].finish_reason).toBe("stop")
    expect(m.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
  })

  it("accepts /chat/completions without the /v1 prefix", async () => {
    const m = await pool.start(scenario)
    const res = await fetch(m.url.replace(/\/v1$/, "/chat/completions"), {
      method: "POST",
      body: JSON.stringify({ messages: [system("talker"), user("go")] }),
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as any).choices[0].message.content).toBe("All done: the build is green.")
  })

  it("reads content given as an array of text parts", async () => {
    const m = await pool.start({
      name: "parts",
      scripts: [{ agent: "executor", match: "Task (?<id>T-\\d+)", steps: [{ text: "did {{id}}", expect: { systemIncludes: ["be brief"] } }] }],
    })
    const res = await post(m, {
      messages: [
        { role: "system", content: [{ type: "text", text: "AirCoding role: executor\n" }, { type: "text", text: "be brief" }] },
        { role: "user", content: [{ type: "text", text: "Task T-42: do it" }] },
      ],
    })
    expect(((await res.json()) as any).choices[0].message.content).toBe("did T-42")
  })
})

describe("other routes", () => {
  it("lists one model on GET /v1/models", async () => {
    const m = await pool.start(scenario)
    const json = (await (await fetch(`${m.url}/models`)).json()) as any
    expect(json.object).toBe("list")
    expect(json.data.map((d: any) => d.id)).toEqual(["scripted"])
  })

  it("answers unknown paths with a 404 that names the right route", async () => {
    const m = await pool.start(scenario)
    const res = await fetch(`${m.url}/completions`, { method: "POST", body: "{}" })
    expect(res.status).toBe(404)
    expect(((await res.json()) as any).error.message).toContain("POST /v1/chat/completions")
  })

  it("rejects a body that is not a chat-completions request with a 400 naming the problem", async () => {
    const m = await pool.start(scenario)
    const res = await post(m, { prompt: "hello" })
    expect(res.status).toBe(400)
    const json = (await res.json()) as any
    expect(json.error.type).toBe("scripted_model_error")
    expect(json.error.message).toContain("messages")
    expect(m.failures()).toHaveLength(1)
  })
})
