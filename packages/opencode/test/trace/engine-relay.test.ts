import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SpanKind } from "@opentelemetry/api"
import { afterAll, describe, expect, test } from "vitest"
import { JsonLines } from "../../src/scheduler/runtime/store/jsonl"
import { TraceRecord } from "../../src/scheduler/runtime/store/trace-record"
import { EngineRelay } from "../../src/scheduler/runtime/trace/engine-relay"
import { TraceExport } from "../../src/scheduler/runtime/trace/exporter"
import { TraceSpans } from "../../src/scheduler/runtime/trace/spans"

/**
 * The relay over HTTP as the engine uses it (OTLP/HTTP JSON posts to /v1/traces and /v1/logs), then what the
 * exporter makes of what it stored: the engine's ids and resource, its kinds, and no content.
 */
const RUN = "run-relay"
const TRACE = TraceSpans.traceId(RUN)
const SESSION_SPAN = TraceSpans.spanId(RUN, TraceSpans.sessionKey("ses_1"))
/** A span id as the engine makes them (16 hex digits; the SDK takes no other as a parent). */
const id = (short: string) => Buffer.from(short).toString("hex").padStart(16, "0")
const kv = (key: string, value: string) => ({ key, value: { stringValue: value } })
const span = (spanId: string, name: string, parentSpanId: string, kind = 1, attributes: ReturnType<typeof kv>[] = []) => ({
  traceId: TRACE,
  spanId,
  parentSpanId,
  name,
  kind,
  startTimeUnixNano: "1796653118837589211",
  endTimeUnixNano: "1796653118937589211",
  attributes,
  status: { code: 0 },
})
const body = (spans: unknown[]) => JSON.stringify({ resourceSpans: [{ resource: { attributes: [kv("service.name", "opencode"), kv("service.version", "1.18.33")] }, scopeSpans: [{ scope: { name: "opencode" }, spans }] }] })

const root = mkdtempSync(join(tmpdir(), "air-relay-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("EngineRelay: the engine's endpoint on 127.0.0.1", () => {
  test("keeps the run's spans across requests (a child before its parent), drops the plumbing and the logs, stores them by trace id", async () => {
    const relay = await EngineRelay.start(root)
    expect(relay.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const post = (path: string, text: string) => fetch(`${relay.endpoint}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: text })
    // As the engine's batches come: the model call ends first, the request last.
    const first = await post("/v1/traces", body([span(id("a4"), "LLM.run", id("c1"), 1, [kv("ai.prompt.messages", "Task T-1: write")]), span(id("s1"), "sql.execute", id("a4"), 1, [kv("db.query.text", "select 1")])]))
    expect(first.status).toBe(200)
    expect((await post("/v1/logs", JSON.stringify({ resourceLogs: [] }))).status).toBe(200)
    await post("/v1/traces", body([span(id("c1"), "Config.get", id("a2")), span(id("a2"), "SessionHttpApi.promptAsync", id("a1")), span(id("a1"), "http.server POST", SESSION_SPAN, 2, [kv("http.request.header.traceparent", TraceSpans.traceparent(RUN, "ses_1"))])]))
    expect((await post("/v1/traces", "not json")).status).toBe(200)
    expect(await relay.close()).toEqual({ stored: 3, dropped: 0 })

    const stored = TraceExport.engineEntries(root, TRACE)
    expect(stored.map((e) => [e.span.name, e.span.parentSpanId])).toEqual([
      ["LLM.run", id("a2")],
      ["SessionHttpApi.promptAsync", id("a1")],
      ["http.server POST", SESSION_SPAN],
    ])
    expect(JsonLines.read(TraceRecord.file(root))).toEqual([])

    const readable = TraceExport.engineReadable(stored, false)
    expect(readable.map((s) => [s.name, s.spanContext().traceId, s.spanContext().spanId, s.parentSpanContext?.spanId])).toEqual([
      ["LLM.run", TRACE, id("a4"), id("a2")],
      ["SessionHttpApi.promptAsync", TRACE, id("a2"), id("a1")],
      ["http.server POST", TRACE, id("a1"), SESSION_SPAN],
    ])
    expect(readable[2]!.kind).toBe(SpanKind.SERVER)
    expect(readable[0]!.resource.attributes["service.name"]).toBe("opencode")
    expect(readable[0]!.attributes).toEqual({})
    expect(readable[2]!.attributes).toEqual({})
    // With content allowed, the same spans keep what the engine said.
    expect(TraceExport.engineReadable(stored, true)[0]!.attributes["ai.prompt.messages"]).toBe("Task T-1: write")
  })
})
