import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, trace as otelTrace, type AttributeValue, type Attributes, type HrTime, type SpanKind } from "@opentelemetry/api"
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto"
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources"
import { BasicTracerProvider, type IdGenerator, type ReadableSpan, type SpanExporter, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { StoredEvent } from "../../core/event.schema"
import { JsonLines } from "../store/jsonl"
import { RunData } from "../store/run-data"
import { TraceRecord } from "../store/trace-record"
import { TraceSpans } from "./spans"
import { TraceConfig } from "./config"
import { AirPaths } from "../../core/air-paths"
import { EngineSpans } from "./engine-spans"

/**
 * Sends a run's trace, derived from its log (TraceSpans), with the OpenTelemetry SDK's OTLP/HTTP exporters. The
 * spans are made by the SDK's tracer, their ids given by an id generator that hands out the derived ones, and sent
 * in one bounded export: an unreachable endpoint costs at most the timeout, and the spans it could not take are
 * recorded as dropped (TraceRecord), never retried into the run's time. The engine's spans of the trace that our
 * relay kept (EngineRelay, stored by trace id) go in the same send, with the engine's resource and ids. Runs outside
 * the Scheduler's step: the CLI calls it when the run's process ends, and `aircoding traces export` for a finished or
 * archived run.
 */
export namespace TraceExport {
  export type Outcome = { sent: boolean; spans: number; traceId: string; reason?: string; ms: number }

  /** Where a run's log and evidence are: the project's current run, or one archived under .air/local/archive/<run-id>/. */
  export type Source = { eventsFile: string; evidenceRoot: string }

  export function currentRun(root: string): Source {
    return { eventsFile: RunData.eventsFile(root), evidenceRoot: RunData.evidenceRoot(root) }
  }
  export function archivedRun(root: string, runId: string): Source {
    const dir = AirPaths.archive(root, runId)
    return { eventsFile: join(dir, "state", "events.jsonl"), evidenceRoot: join(dir, "evidence") }
  }

  /** The spans of the run at `source`, from its log and the gate reports it points at; null when it holds no run. */
  export function spansOf(source: Source): TraceSpans.Trace | null {
    if (!existsSync(source.eventsFile)) return null
    const events: StoredEvent[] = []
    const lines = new JsonLines.Tail(source.eventsFile, 0).read()
    if (lines === "reset") return null
    for (const { text, lineNo } of lines) {
      const event = RunData.parseLine(text, lineNo, source.eventsFile)
      if (typeof event !== "string") events.push(event)
    }
    const reportOf = (taskId: string, run: number): RunData.GateReportFile | null => {
      if (!RunData.safeId(taskId)) return null
      try {
        return JSON.parse(readFileSync(join(source.evidenceRoot, taskId, `attempt-${run}`, "report.json"), "utf8")) as RunData.GateReportFile
      } catch {
        return null
      }
    }
    return TraceSpans.derive(events, reportOf)
  }

  /** Hands out the derived ids in the order the spans are started: the SDK's spans carry the log's ids. */
  class DerivedIds implements IdGenerator {
    next: { traceId: string; spanId: string } = { traceId: "", spanId: "" }
    generateTraceId = () => this.next.traceId
    generateSpanId = () => this.next.spanId
  }

  class Collect implements SpanProcessor {
    readonly spans: ReadableSpan[] = []
    onStart(): void {}
    onEnd(span: ReadableSpan): void {
      this.spans.push(span)
    }
    forceFlush = () => Promise.resolve()
    shutdown = () => Promise.resolve()
  }

  /** The derived spans as the SDK's ReadableSpans (parents before children: the log's order). */
  export function readable(derived: TraceSpans.Trace, config: TraceConfig.Config): ReadableSpan[] {
    const ids = new DerivedIds()
    const collect = new Collect()
    const resource = resourceFromAttributes({ "service.name": config.serviceName }).merge(detectResources({ detectors: [envDetector] }))
    const provider = new BasicTracerProvider({ resource, idGenerator: ids, spanProcessors: [collect] })
    const tracer = provider.getTracer("aircoding")
    for (const s of derived.spans) {
      ids.next = { traceId: derived.traceId, spanId: s.spanId }
      const parent = s.parentId
        ? otelTrace.setSpanContext(ROOT_CONTEXT, { traceId: derived.traceId, spanId: s.parentId, traceFlags: TraceFlags.SAMPLED, isRemote: false })
        : ROOT_CONTEXT
      const span = tracer.startSpan(s.name, { startTime: s.startMs, attributes: { ...s.attributes, "aircoding.span": s.kind } }, parent)
      if (s.status === "error") span.setStatus({ code: SpanStatusCode.ERROR, message: s.message ?? "" })
      else if (s.status === "ok") span.setStatus({ code: SpanStatusCode.OK })
      span.end(s.endMs)
    }
    return collect.spans
  }

  /** The engine's kept spans of the trace (EngineRelay), when the relay stored any. */
  export function engineEntries(root: string, traceId: string): EngineSpans.Entry[] {
    return JsonLines.readValid(TraceRecord.engineFile(root, traceId), EngineSpans.Entry)
  }

  const valueOf = (v: unknown): AttributeValue | undefined => {
    if (!v || typeof v !== "object") return undefined
    const o = v as Record<string, unknown>
    if (typeof o.stringValue === "string") return o.stringValue
    if (typeof o.boolValue === "boolean") return o.boolValue
    if (o.intValue !== undefined) return Number(o.intValue)
    if (o.doubleValue !== undefined) return Number(o.doubleValue)
    if (o.arrayValue || o.kvlistValue) return JSON.stringify(o.arrayValue ?? o.kvlistValue)
    return undefined
  }
  const attributesOf = (kvs: readonly EngineSpans.KeyValue[] | undefined): Attributes => {
    const out: Attributes = {}
    for (const kv of kvs ?? []) {
      const v = valueOf(kv.value)
      if (v !== undefined) out[kv.key] = v
    }
    return out
  }
  const hr = (nanos: string | number): HrTime => {
    const n = BigInt(nanos)
    return [Number(n / 1_000_000_000n), Number(n % 1_000_000_000n)]
  }

  /**
   * The engine's spans as the SDK's ReadableSpans, with the engine's resource and ids as it sent them (its ids, our
   * trace id), stripped of content unless `content` (AIRCODING_OTEL_CONTENT=1).
   */
  export function engineReadable(entries: readonly EngineSpans.Entry[], content: boolean): ReadableSpan[] {
    const ids = new DerivedIds()
    const collect = new Collect()
    const providers = new Map<string, BasicTracerProvider>()
    for (const entry of entries) {
      const span = content ? entry.span : EngineSpans.strip(entry.span)
      const key = JSON.stringify(entry.resource)
      let provider = providers.get(key)
      if (!provider) {
        provider = new BasicTracerProvider({ resource: resourceFromAttributes(attributesOf(entry.resource)), idGenerator: ids, spanProcessors: [collect] })
        providers.set(key, provider)
      }
      ids.next = { traceId: span.traceId, spanId: span.spanId }
      const parent = span.parentSpanId
        ? otelTrace.setSpanContext(ROOT_CONTEXT, { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: false })
        : ROOT_CONTEXT
      // OTLP numbers kinds from 1 (internal), the API from 0.
      const kind = Math.max(0, (span.kind ?? 1) - 1) as SpanKind
      const s = provider.getTracer(entry.scope || "opencode").startSpan(span.name, { kind, startTime: hr(span.startTimeUnixNano), attributes: attributesOf(span.attributes) }, parent)
      for (const e of span.events ?? []) s.addEvent(e.name, attributesOf(e.attributes), e.timeUnixNano !== undefined ? hr(e.timeUnixNano) : undefined)
      if (span.status?.code === 2) s.setStatus({ code: SpanStatusCode.ERROR, message: span.status.message ?? "" })
      else if (span.status?.code === 1) s.setStatus({ code: SpanStatusCode.OK })
      s.end(hr(span.endTimeUnixNano))
    }
    return collect.spans
  }

  function exporterOf(config: TraceConfig.Config): SpanExporter {
    const options = { url: config.url, timeoutMillis: config.timeoutMs }
    return config.protocol === "http/json" ? new JsonExporter(options) : new ProtoExporter(options)
  }

  const bounded = <T>(work: Promise<T>, ms: number, late: T): Promise<T> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(late), ms)
      timer.unref?.()
      work.then(
        (v) => (clearTimeout(timer), resolve(v)),
        () => (clearTimeout(timer), resolve(late)),
      )
    })

  /**
   * Exports the run's trace once — our spans and the engine's kept under `recordRoot` — bounded by the config's
   * timeout (and a second for the exporter's shutdown), and records the outcome under `recordRoot`. undefined: no
   * endpoint is set, nothing done.
   */
  export async function send(
    derived: TraceSpans.Trace,
    recordRoot: string,
    env: NodeJS.ProcessEnv = process.env,
  ): Promise<Outcome | undefined> {
    const config = TraceConfig.fromEnv(env)
    if (config === undefined) return undefined
    const started = Date.now()
    const finish = (outcome: Omit<Outcome, "ms" | "traceId">): Outcome => {
      const ms = Date.now() - started
      TraceRecord.append(recordRoot, {
        at: new Date().toISOString(),
        runId: derived.runId,
        traceId: derived.traceId,
        spans: outcome.spans,
        outcome: outcome.sent ? "sent" : "dropped",
        ...(outcome.reason ? { reason: outcome.reason } : {}),
        ms,
      })
      return { ...outcome, traceId: derived.traceId, ms }
    }
    if (typeof config === "string") return finish({ sent: false, spans: derived.spans.length, reason: config })
    const ours = new Set(derived.spans.map((s) => s.spanId))
    const runSpan = derived.spans.find((s) => !s.parentId)?.spanId
    const engine = engineEntries(recordRoot, derived.traceId)
    const spans = [...readable(derived, config), ...engineReadable(runSpan ? EngineSpans.underOurs(engine, ours, runSpan) : engine, env.AIRCODING_OTEL_CONTENT === "1")]
    const exporter = exporterOf(config)
    const result = await bounded(
      new Promise<{ ok: boolean; reason?: string }>((resolve) =>
        exporter.export(spans, (r) => resolve(r.code === 0 ? { ok: true } : { ok: false, reason: r.error?.message ?? "the endpoint refused the spans" })),
      ),
      config.timeoutMs + 1_000,
      { ok: false, reason: `no answer from ${config.url} within ${config.timeoutMs} ms` },
    )
    await bounded(exporter.shutdown(), 1_000, undefined)
    return finish(result.ok ? { sent: true, spans: spans.length } : { sent: false, spans: spans.length, reason: `${config.url}: ${result.reason}` })
  }

  /**
   * What the CLI calls as a run's process ends (done, blocked, or stopped at a question): the current run's trace,
   * sent once within the bounded send. A resumed run sends it again with the same ids and more spans. Returns a line
   * for the person when the spans were dropped, else undefined.
   */
  export async function afterRun(root: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
    if (TraceConfig.fromEnv(env) === undefined) return undefined
    const derived = spansOf(currentRun(root))
    if (!derived) return undefined
    const outcome = await send(derived, root, env)
    return outcome && !outcome.sent ? `the run's trace was not exported (${outcome.spans} spans dropped: ${outcome.reason}); \`aircoding traces export\` sends it again` : undefined
  }
}
