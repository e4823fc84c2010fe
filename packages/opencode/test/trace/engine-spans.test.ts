import { describe, expect, test } from "vitest"
import { EngineSpans } from "../../src/scheduler/runtime/trace/engine-spans"
import { TraceConfig } from "../../src/scheduler/runtime/trace/config"
import { TraceSpans } from "../../src/scheduler/runtime/trace/spans"
import { traceparentOf } from "../../src/scheduler/runtime/ports"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"

/**
 * The engine's spans as the relay receives them (names, parents and attributes as the pinned engine sent them for a
 * worker's prompt, measured with a receiver): the request carrying our traceparent, the chain down to the model
 * call and a tool, with its plumbing (sql.execute, Plugin.trigger, Config.get) between them.
 */
const RUN = "run-test"
const TRACE = TraceSpans.traceId(RUN)
const SESSION_SPAN = TraceSpans.spanId(RUN, TraceSpans.sessionKey("ses_1"))
const kv = (key: string, value: string) => ({ key, value: { stringValue: value } })
const span = (spanId: string, name: string, parentSpanId: string | undefined, extra: Partial<EngineSpans.Span> = {}, traceId = TRACE): EngineSpans.Span => ({
  traceId,
  spanId,
  ...(parentSpanId ? { parentSpanId } : {}),
  name,
  kind: 1,
  startTimeUnixNano: "1796653118837589211",
  endTimeUnixNano: "1796653118937589211",
  ...extra,
})
const request = (spans: EngineSpans.Span[]): EngineSpans.Request => ({
  resourceSpans: [{ resource: { attributes: [kv("service.name", "opencode")] }, scopeSpans: [{ scope: { name: "opencode" }, spans }] }],
})

const prompt = [
  span("a1", "http.server POST", SESSION_SPAN, { kind: 2, attributes: [kv("http.route", "/session/:sessionID/prompt_async"), kv("http.request.header.traceparent", TraceSpans.traceparent(RUN, "ses_1"))] }),
  span("a2", "SessionHttpApi.promptAsync", "a1"),
  span("p1", "Plugin.trigger", "a2", { attributes: [kv("plugin.id", "air")] }),
  span("c1", "Config.get", "p1"),
  // A kept span under two dropped ones: it hangs under SessionHttpApi.promptAsync.
  span("a3", "SessionPrompt.prompt", "c1"),
  span("a4", "LLM.run", "a3", { attributes: [kv("ai.prompt.messages", "[{\"role\":\"user\",\"content\":\"Task T-1: …\"}]"), kv("gen_ai.request.model", "scripted")] }),
  span("s1", "sql.execute", "a4", { attributes: [kv("db.query.text", "insert into part values ('secret code')")] }),
  span("a5", "Tool.execute", "a3", {
    attributes: [kv("tool.name", "edit")],
    events: [{ name: "exception", timeUnixNano: "1796653118837589300", attributes: [kv("exception.type", "EditError"), kv("exception.message", "oldString not found: const key = 1")] }],
    status: { code: 2, message: "oldString not found: const key = 1" },
  }),
]

describe("EngineSpans: the engine's spans of a run, without its plumbing or content", () => {
  const split = EngineSpans.split(request(prompt))
  const resolved = EngineSpans.resolve(split.kept, new Map(split.dropped))
  const byName = new Map(resolved.map((e) => [e.span.name, e.span]))

  test("the model-call chain is kept; sql.execute, Plugin.* and Config.* are dropped", () => {
    expect(resolved.map((e) => e.span.name)).toEqual(["http.server POST", "SessionHttpApi.promptAsync", "SessionPrompt.prompt", "LLM.run", "Tool.execute"])
    expect(split.dropped.map(([id]) => id).sort()).toEqual(["c1", "p1", "s1"])
    expect(resolved.every((e) => e.resource.some((a) => a.key === "service.name"))).toBe(true)
  })

  test("a kept span whose parent was dropped hangs under its nearest kept ancestor; the request under our session span", () => {
    expect(byName.get("http.server POST")?.parentSpanId).toBe(SESSION_SPAN)
    expect(byName.get("SessionPrompt.prompt")?.parentSpanId).toBe("a2")
    expect(byName.get("LLM.run")?.parentSpanId).toBe("a3")
    // Walking up from the model call reaches our session span.
    const ids = new Map(resolved.map((e) => [e.span.spanId, e.span]))
    let at = byName.get("LLM.run")
    const chain: string[] = []
    while (at?.parentSpanId && ids.has(at.parentSpanId)) at = ids.get(at.parentSpanId)
    chain.push(at!.parentSpanId!)
    expect(chain).toEqual([SESSION_SPAN])
  })

  test("a trace that hangs under none of ours (the engine's start-up, Main's first turn) is not the run's", () => {
    const other = "f".repeat(32)
    const s = EngineSpans.split(request([span("b1", "http.server GET", undefined, {}, other), span("b2", "LLM.run", "b3", {}, other), span("b3", "SessionPrompt.loop", "b1", {}, other)]))
    expect(EngineSpans.resolve(s.kept, new Map(s.dropped))).toEqual([])
    // The same spans beside the run's: only the run's remain.
    const both = EngineSpans.split(request([...prompt, span("b1", "http.server GET", undefined, {}, other)]))
    expect(new Set(EngineSpans.resolve(both.kept, new Map(both.dropped)).map((e) => e.span.traceId))).toEqual(new Set([TRACE]))
  })

  test("a span whose parent the engine never sent (a prompt still open when it stopped) goes under the run's span; the rest stay", () => {
    const runSpan = TraceSpans.spanId(RUN, "run")
    const cutOff = EngineSpans.split(request([...prompt, span("m1", "SessionPrompt.createUserMessage", "never-sent")]))
    const entries = EngineSpans.resolve(cutOff.kept, new Map(cutOff.dropped))
    const hung = new Map(EngineSpans.underOurs(entries, new Set([SESSION_SPAN, runSpan]), runSpan).map((e) => [e.span.name, e.span.parentSpanId]))
    expect(hung.get("SessionPrompt.createUserMessage")).toBe(runSpan)
    expect(hung.get("http.server POST")).toBe(SESSION_SPAN)
    expect(hung.get("LLM.run")).toBe("a3")
  })

  test("strip takes off what can hold prompts or code: messages, statements, exception messages, request headers, the status message", () => {
    const llm = EngineSpans.strip(byName.get("LLM.run")!)
    expect(llm.attributes?.map((a) => a.key)).toEqual(["gen_ai.request.model"])
    const tool = EngineSpans.strip(byName.get("Tool.execute")!)
    expect(tool.attributes?.map((a) => a.key)).toEqual(["tool.name"])
    expect(tool.events?.[0]?.attributes?.map((a) => a.key)).toEqual(["exception.type"])
    expect(tool.status).toEqual({ code: 2, message: "" })
    expect(JSON.stringify(resolved.map((e) => EngineSpans.strip(e.span)))).not.toMatch(/const key|Task T-1|secret code/)
    for (const key of ["ai.prompt", "ai.response.text", "ai.toolCall.args", "ai.toolCall.result", "gen_ai.input.messages", "db.query.text", "exception.stacktrace"]) expect(EngineSpans.isContent(key), key).toBe(true)
    for (const key of ["tool.name", "session.id", "http.route", "gen_ai.usage.input_tokens", "ai.usage.totalTokens"]) expect(EngineSpans.isContent(key), key).toBe(false)
  })
})

describe("the traceparent of a prompt", () => {
  test("our trace id, the session's span id (the run's for a session with no span), sampled", () => {
    expect(TraceSpans.traceparent(RUN, "ses_1")).toBe(`00-${TRACE}-${SESSION_SPAN}-01`)
    expect(TraceSpans.traceparent(RUN)).toBe(`00-${TRACE}-${TraceSpans.spanId(RUN, TraceSpans.RUN_KEY)}-01`)
    expect(TraceSpans.traceparent(RUN)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
  })

  test("a task's worker and reviewer prompt under their own span, any other session under the run, none before a run", () => {
    const state = { ...initialState(), runId: RUN, tasks: [{ id: "T-1", sessionId: "ses_1", reviewSessionId: "ses_2" }] } as unknown as SchedulerState
    expect(traceparentOf(state, "ses_1")).toBe(TraceSpans.traceparent(RUN, "ses_1"))
    expect(traceparentOf(state, "ses_2")).toBe(TraceSpans.traceparent(RUN, "ses_2"))
    expect(traceparentOf(state, "ses_architect")).toBe(TraceSpans.traceparent(RUN))
    expect(traceparentOf(initialState(), "ses_1")).toBeUndefined()
    expect(traceparentOf(undefined, "ses_1")).toBeUndefined()
  })
})

describe("the engine's OTEL variables", () => {
  test("relayed when a trace is exported and AIRCODING_OTEL_ENGINE is not 1; the relay gets JSON and the resource attributes, never the headers", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20T", OTEL_RESOURCE_ATTRIBUTES: "a=b" }
    expect(TraceConfig.relayed(env)).toBe(true)
    expect(TraceConfig.relayed({ ...env, AIRCODING_OTEL_ENGINE: "1" })).toBe(false)
    expect(TraceConfig.relayed({})).toBe(false)
    expect(TraceConfig.relayEnvironment("http://127.0.0.1:5", env)).toEqual({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:5", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_RESOURCE_ATTRIBUTES: "a=b" })
  })
})
