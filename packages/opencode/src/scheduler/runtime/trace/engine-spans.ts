import { z } from "zod"

/**
 * The engine's own spans as the run's trace shows them (pure). The engine (OpenCode) exports its spans over OTLP
 * with JSON bodies to our relay (engine-relay.ts); what it sends is mostly its plumbing — for one demo run 1,107
 * `sql.execute`, 558 `Plugin.trigger`, 217 `Config.get` of 3,687 spans — around the few that are the run: the
 * request that carried a prompt (`http.server POST` with our `traceparent`: TraceSpans.traceparent), then
 * `SessionHttpApi.promptAsync` → `SessionPrompt.*` → `SessionProcessor.process` → `LLM.run`, and `Tool.execute`.
 * Those are kept, the rest dropped; a kept span whose parent was dropped hangs under its nearest kept ancestor;
 * only traces that hang under one of our spans are the run's (the engine's start-up and Main's first turn, before
 * the run exists, are traces of their own and go); and the attributes and events that can hold prompts, code or
 * file contents are taken off unless the user allows them (AIRCODING_OTEL_CONTENT=1).
 */
export namespace EngineSpans {
  const AnyValue: z.ZodType<unknown> = z.unknown()
  const KeyValue = z.object({ key: z.string(), value: AnyValue }).passthrough()
  export type KeyValue = z.infer<typeof KeyValue>
  const SpanEvent = z.object({ name: z.string(), timeUnixNano: z.union([z.string(), z.number()]).optional(), attributes: z.array(KeyValue).optional() }).passthrough()
  export const Span = z
    .object({
      traceId: z.string(),
      spanId: z.string(),
      parentSpanId: z.string().optional(),
      name: z.string(),
      kind: z.number().optional(),
      startTimeUnixNano: z.union([z.string(), z.number()]),
      endTimeUnixNano: z.union([z.string(), z.number()]),
      attributes: z.array(KeyValue).optional(),
      events: z.array(SpanEvent).optional(),
      status: z.object({ code: z.number().optional(), message: z.string().optional() }).passthrough().optional(),
    })
    .passthrough()
  export type Span = z.infer<typeof Span>
  const Scope = z.object({ name: z.string().optional(), version: z.string().optional() }).passthrough()
  /** An OTLP/HTTP JSON ExportTraceServiceRequest, as far as we read it. */
  export const Request = z.object({
    resourceSpans: z
      .array(
        z
          .object({
            resource: z.object({ attributes: z.array(KeyValue).optional() }).passthrough().optional(),
            scopeSpans: z.array(z.object({ scope: Scope.optional(), spans: z.array(Span).optional() }).passthrough()).optional(),
          })
          .passthrough(),
      )
      .optional(),
  })
  export type Request = z.infer<typeof Request>

  /** One kept span with what it came with: the engine's resource (service `opencode`, its version) and scope. */
  export const Entry = z.object({ resource: z.array(KeyValue), scope: z.string(), span: Span })
  export type Entry = z.infer<typeof Entry>

  /**
   * The spans that are the run: the request of a prompt and what it caused, down to the model call and the tool.
   * `SessionPrompt.*`, `SessionRunState.*` and `SessionTools.resolve` are the chain between the request and the
   * model call (kept, so the tree reads as the engine did it); every other name is plumbing.
   */
  const KEPT = [/^http\.server /, /^SessionHttpApi\./, /^SessionPrompt\./, /^SessionRunState\./, /^SessionProcessor\./, /^SessionTools\./, /^LLM\./, /^Tool\.execute$/, /^ai\./]
  export function kept(name: string): boolean {
    return KEPT.some((re) => re.test(name))
  }

  /**
   * Attributes that can hold a prompt, a reply, code or a file's contents: the AI SDK's (`ai.prompt*`,
   * `ai.response.text` …, on when the engine's `experimental.openTelemetry` is), the GenAI conventions' message
   * attributes, a database statement, and an exception's message and stack (a failed edit quotes the code).
   */
  const CONTENT = [
    /^ai\.prompt/,
    /^ai\.response\.(text|reasoning|toolCalls|object|providerMetadata)$/,
    /^ai\.toolCall\.(args|result)$/,
    /^ai\.schema/,
    /^ai\.telemetry\.metadata\./,
    /^gen_ai\.(prompt|completion|input\.messages|output\.messages|system_instructions|tool\.call\.(arguments|result))/,
    /^db\.(query\.text|statement)$/,
    /^exception\.(message|stacktrace)$/,
    /^http\.request\.header\./,
  ]
  export function isContent(key: string): boolean {
    return CONTENT.some((re) => re.test(key))
  }

  /** The span with no attribute or event attribute that can hold content (events keep their name and time). */
  export function strip(span: Span): Span {
    const clean = (attrs: KeyValue[] | undefined) => attrs?.filter((a) => !isContent(a.key))
    return {
      ...span,
      ...(span.attributes ? { attributes: clean(span.attributes) } : {}),
      ...(span.events ? { events: span.events.map((e) => ({ ...e, ...(e.attributes ? { attributes: clean(e.attributes) } : {}) })) } : {}),
      ...(span.status?.message ? { status: { ...span.status, message: "" } } : {}),
    }
  }

  /** What the relay holds of a request: the kept spans whole, the dropped ones as their parent link only. */
  export type Split = { kept: Entry[]; dropped: [spanId: string, parentSpanId: string | undefined][] }

  export function split(request: Request): Split {
    const out: Split = { kept: [], dropped: [] }
    for (const rs of request.resourceSpans ?? []) {
      const resource = rs.resource?.attributes ?? []
      for (const ss of rs.scopeSpans ?? [])
        for (const span of ss.spans ?? []) {
          if (kept(span.name)) out.kept.push({ resource, scope: ss.scope?.name ?? "", span })
          else out.dropped.push([span.spanId, span.parentSpanId || undefined])
        }
    }
    return out
  }

  /**
   * The kept spans of the run's traces, each under its nearest kept ancestor. A parent the engine never sent is one
   * of ours (the traceparent of the prompt): a trace none of whose spans hangs under such a parent is not a run's.
   */
  export function resolve(kept: readonly Entry[], dropped: ReadonlyMap<string, string | undefined>): Entry[] {
    const keptIds = new Set(kept.map((e) => e.span.spanId))
    const anchored = new Set<string>()
    const out: Entry[] = []
    for (const e of kept) {
      let parent = e.span.parentSpanId || undefined
      const seen = new Set<string>()
      while (parent && dropped.has(parent) && !seen.has(parent)) {
        seen.add(parent)
        parent = dropped.get(parent)
      }
      if (parent && !keptIds.has(parent) && !dropped.has(parent)) anchored.add(e.span.traceId)
      const { parentSpanId: _old, ...rest } = e.span
      out.push({ ...e, span: parent ? { ...rest, parentSpanId: parent } : rest })
    }
    return out.filter((e) => anchored.has(e.span.traceId))
  }

  /**
   * The engine's spans hung in the tree of ours: a span whose parent is neither the engine's (sent) nor ours goes under
   * the run's span. The engine sends a span when it ends, so a prompt still open when the engine stopped (Main's
   * last turn, cut off at the run's end) leaves children whose parent never came; without this they would point
   * at nothing, and a receiver would show them as roots of their own.
   */
  export function underOurs(entries: readonly Entry[], ours: ReadonlySet<string>, runSpanId: string): Entry[] {
    const engine = new Set(entries.map((e) => e.span.spanId))
    return entries.map((e) => {
      const parent = e.span.parentSpanId
      if (!parent || engine.has(parent) || ours.has(parent)) return e
      return { ...e, span: { ...e.span, parentSpanId: runSpanId } }
    })
  }
}
