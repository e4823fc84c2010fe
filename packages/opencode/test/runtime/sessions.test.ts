import type { PluginInput } from "@opencode-ai/plugin"
import type { AssistantMessage, Event, EventMessagePartUpdated, EventSessionError, EventSessionIdle, TextPart } from "@opencode-ai/sdk"
import { afterEach, describe, expect, test } from "vitest"
import { ChildSessions } from "../../src/scheduler/runtime/sessions/sessions"
import { TokenEstimate } from "../../src/scheduler/runtime/sessions/token-estimate"

// ChildSessions against the engine's own event shapes (typed by the pinned SDK, so a changed shape fails to
// compile here): what each event means for a session the Scheduler started. The client is the engine's
// HTTP surface, stood in for by a recorder; the thing under test is the watching, not the engine.

type Client = PluginInput["client"]

function recorder(options: { promptError?: unknown; createError?: unknown } = {}) {
  const calls: string[] = []
  let next = 0
  const client = {
    session: {
      create: async (req: { body: { parentID?: string; title: string }; query: { directory: string } }) => {
        calls.push(`create ${req.query.directory} ${req.body.title}`)
        return options.createError ? { error: options.createError } : { data: { id: `ses_${++next}` } }
      },
      promptAsync: async (req: { path: { id: string }; body: { agent: string } }) => {
        calls.push(`prompt ${req.path.id} ${req.body.agent}`)
        return options.promptError ? { error: options.promptError } : {}
      },
      abort: async (req: { path: { id: string } }) => {
        calls.push(`abort ${req.path.id}`)
        return {}
      },
      messages: async () => ({ data: [] }),
    },
  }
  return { client: client as unknown as Client, calls }
}

const assistant = (sessionID: string, id: string, completed?: number, tokens = { input: 10, output: 5, reasoning: 1 }): Event => ({
  type: "message.updated",
  properties: {
    info: {
      id,
      sessionID,
      role: "assistant",
      time: { created: 1, ...(completed ? { completed } : {}) },
      parentID: "msg_user",
      modelID: "scripted",
      providerID: "air",
      mode: "executor",
      path: { cwd: "/repo", root: "/repo" },
      cost: 0,
      tokens: { ...tokens, cache: { read: 0, write: 0 } },
    } as AssistantMessage,
  },
})
const part = (sessionID: string, messageID: string): EventMessagePartUpdated => ({
  type: "message.part.updated",
  properties: { part: { id: "prt_1", sessionID, messageID, type: "text", text: "working" } as TextPart },
})
const idle = (sessionID: string): EventSessionIdle => ({ type: "session.idle", properties: { sessionID } })
const apiError = (sessionID: string, statusCode: number): EventSessionError => ({
  type: "session.error",
  properties: { sessionID, error: { name: "APIError", data: { message: "Not Found", statusCode, isRetryable: false, responseBody: '{"error":{"message":"model not found"}}' } } },
})
const aborted = (sessionID: string): EventSessionError => ({
  type: "session.error",
  properties: { sessionID, error: { name: "MessageAbortedError", data: { message: "The operation was aborted." } } },
})

const started: string[] = []
async function start(client: Client, outcomes: ChildSessions.Outcome[], now = 1_000): Promise<string> {
  const id = await ChildSessions.create(client, { agent: "executor", directory: "/repo/wt", title: "T-1" }, (o) => outcomes.push(o), now)
  started.push(id)
  return id
}
afterEach(() => {
  for (const id of started.splice(0)) ChildSessions.release(id)
})

describe("a session the Scheduler started", () => {
  test("its turn ending is one idle outcome, and only after a prompt made it busy", async () => {
    const { client, calls } = recorder()
    const outcomes: ChildSessions.Outcome[] = []
    const id = await start(client, outcomes)
    ChildSessions.observe(idle(id))
    expect(outcomes).toEqual([])
    await ChildSessions.prompt(client, id, "Task T-1")
    ChildSessions.observe(idle(id))
    ChildSessions.observe(idle(id))
    expect(outcomes).toEqual([{ kind: "idle" }])
    expect(calls).toEqual(["create /repo/wt T-1", `prompt ${id} executor`])
  })

  test("a provider error is an error outcome at once; an abort is an aborted outcome", async () => {
    const { client } = recorder()
    const errors: ChildSessions.Outcome[] = []
    const a = await start(client, errors)
    await ChildSessions.prompt(client, a, "go")
    ChildSessions.observe(apiError(a, 404))
    expect(errors.map((o) => o.kind)).toEqual(["error"])
    const stops: ChildSessions.Outcome[] = []
    const b = await start(client, stops)
    await ChildSessions.prompt(client, b, "go")
    ChildSessions.observe(aborted(b))
    expect(stops.map((o) => o.kind)).toEqual(["aborted"])
  })

  test("events of sessions it does not own change nothing", async () => {
    const { client } = recorder()
    const outcomes: ChildSessions.Outcome[] = []
    const id = await start(client, outcomes)
    await ChildSessions.prompt(client, id, "go")
    ChildSessions.observe(idle("ses_someone_else"))
    ChildSessions.observe(apiError("ses_someone_else", 500))
    expect(outcomes).toEqual([])
    expect(ChildSessions.isWatched("ses_someone_else")).toBe(false)
  })

  test("each completed assistant message counts once, however often the engine reports it", async () => {
    const { client } = recorder()
    const id = await start(client, [])
    ChildSessions.observe(assistant(id, "msg_1"))
    ChildSessions.observe(assistant(id, "msg_1", 2))
    ChildSessions.observe(assistant(id, "msg_1", 2))
    ChildSessions.observe(assistant(id, "msg_2", 3, { input: 100, output: 20, reasoning: 0 }))
    expect(ChildSessions.stats(id)).toEqual({ requests: 2, tokens: 16 + 120, agent: "executor", estimated: 0, model: "air/scripted" })
  })

  test("a call the provider reported no usage for is held on the estimate; where both are known, their ratio is kept", async () => {
    const { client } = recorder()
    const id = await start(client, [])
    const text = (messageID: string, partID: string, body: string): Event => ({ type: "message.part.updated", properties: { part: { id: partID, sessionID: id, messageID, type: "text", text: body } as TextPart } })
    const prompt = "Task T-1: 给计算器加上 mul(a, b)，并写一个测试。\nint mul(int a, int b);"
    const reply = "I will add mul to src/calc.cpp and a check to the test."
    ChildSessions.observe(text("msg_user", "prt_u", prompt))
    ChildSessions.observe(assistant(id, "msg_1"))
    ChildSessions.observe(text("msg_1", "prt_1", reply))
    // The provider said nothing of this call's tokens: the budget counts the estimate (the prompt, then the reply).
    ChildSessions.observe(assistant(id, "msg_1", 2, { input: 0, output: 0, reasoning: 0 }))
    const first = TokenEstimate.tokens(prompt) + TokenEstimate.tokens(reply)
    expect(ChildSessions.stats(id)).toEqual({ requests: 1, tokens: first, agent: "executor", estimated: first, model: "air/scripted" })
    // The next call is reported: its figure counts, and its ratio to the estimate of the same call is kept.
    ChildSessions.observe(assistant(id, "msg_2"))
    ChildSessions.observe(text("msg_2", "prt_2", "Done."))
    ChildSessions.observe(assistant(id, "msg_2", 3, { input: 90, output: 10, reasoning: 0 }))
    const second = first + TokenEstimate.tokens("Done.")
    expect(ChildSessions.stats(id)).toEqual({ requests: 2, tokens: first + 100, agent: "executor", estimated: first, ratio: Math.round((100 / second) * 100) / 100, model: "air/scripted" })
  })

  test("silence is measured from the last event; before the model first answers, the start-up grace applies", async () => {
    const { client } = recorder()
    const id = await start(client, [], 0)
    await ChildSessions.prompt(client, id, "go", 0)
    // No model step yet: the engine may still be starting the worktree's instance.
    expect(ChildSessions.stalled(1_000, 5_000, 60_000)).not.toContain(id)
    expect(ChildSessions.stalled(1_000, 61_000, 60_000)).toContain(id)
    // Once the model answers, the inactivity limit alone counts, from the last event.
    ChildSessions.observe(assistant(id, "msg_1"), 70_000)
    ChildSessions.observe(part(id, "msg_1"), 70_000)
    expect(ChildSessions.stalled(1_000, 70_500, 60_000)).not.toContain(id)
    expect(ChildSessions.stalled(1_000, 71_500, 60_000)).toContain(id)
    // A session whose turn ended is not stalled: it waits for nobody.
    ChildSessions.observe(idle(id), 71_600)
    expect(ChildSessions.stalled(1_000, 999_999, 60_000)).not.toContain(id)
  })

  test("a refused prompt or creation throws with the engine's reason; an unknown session cannot be prompted", async () => {
    const refused = recorder({ promptError: { name: "NotFound" } })
    const id = await start(refused.client, [])
    await expect(ChildSessions.prompt(refused.client, id, "go")).rejects.toThrow(/refused/)
    await expect(start(recorder({ createError: { name: "Unknown" } }).client, [])).rejects.toThrow(/could not create an? executor session/)
    await expect(ChildSessions.prompt(refused.client, "ses_nobody", "go")).rejects.toThrow(/not one of the Scheduler's/)
  })

  test("an abort stops watching first, so the engine's abort error that follows is nobody's outcome", async () => {
    const { client, calls } = recorder()
    const outcomes: ChildSessions.Outcome[] = []
    const id = await start(client, outcomes)
    await ChildSessions.prompt(client, id, "go")
    await ChildSessions.abort(client, id)
    ChildSessions.observe(aborted(id))
    expect(outcomes).toEqual([])
    expect(calls).toContain(`abort ${id}`)
    expect(ChildSessions.isWatched(id)).toBe(false)
  })
})
