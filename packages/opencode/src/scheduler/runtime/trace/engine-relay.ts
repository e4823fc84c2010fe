import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import type { AddressInfo } from "node:net"
import { serve, type ServerType } from "@hono/node-server"
import { Hono } from "hono"
import { JsonLines } from "../store/jsonl"
import { TraceRecord } from "../store/trace-record"
import { EngineSpans } from "./engine-spans"

/**
 * The engine's OTLP endpoint while a run's trace is exported (TraceConfig): a receiver on 127.0.0.1 in the launcher's
 * process, so the engine's plumbing never leaves the machine. It takes OTLP/HTTP JSON (the engine is told
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), holds the kept spans and the parent links of the dropped ones (bounded:
 * past MAX_KEPT / MAX_LINKS they are counted as dropped), answers /v1/logs and drops them, and when the launcher
 * closes it — after the engine is gone, before the CLI sends the run's trace — writes the run's traces' kept spans,
 * re-parented, under `.air/local/trace/engine/`, where the exporter sends them from with ours.
 */
export namespace EngineRelay {
  export const MAX_KEPT = 50_000
  export const MAX_LINKS = 1_000_000

  export type Running = { endpoint: string; close(): Promise<{ stored: number; dropped: number }> }

  export async function start(root: string): Promise<Running> {
    const kept: EngineSpans.Entry[] = []
    const dropped = new Map<string, string | undefined>()
    let overflow = 0
    const app = new Hono()
    app.post("/v1/traces", async (c) => {
      const parsed = EngineSpans.Request.safeParse(await c.req.json().catch(() => undefined))
      // The engine's exporter would retry a refusal: an unreadable body is answered and counted as nothing.
      if (!parsed.success) return c.json({ partialSuccess: { rejectedSpans: 0, errorMessage: "not an OTLP JSON trace request" } })
      const split = EngineSpans.split(parsed.data)
      for (const e of split.kept) kept.length < MAX_KEPT ? kept.push(e) : overflow++
      for (const [id, parent] of split.dropped) if (dropped.size < MAX_LINKS) dropped.set(id, parent)
      return c.json({})
    })
    app.post("/v1/logs", (c) => c.json({}))
    app.notFound((c) => c.json({}, 404))
    const server: ServerType = await new Promise((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 })
      s.once("listening", () => resolve(s))
      s.once("error", reject)
    })
    const port = (server.address() as AddressInfo).port
    let closed: Promise<{ stored: number; dropped: number }> | undefined
    return {
      endpoint: `http://127.0.0.1:${port}`,
      close: () =>
        (closed ??= (async () => {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 1_000)
            server.close(() => (clearTimeout(timer), resolve()))
            ;(server as { closeAllConnections?: () => void }).closeAllConnections?.()
          })
          const run = EngineSpans.resolve(kept, dropped)
          for (const e of run) {
            const file = TraceRecord.engineFile(root, e.span.traceId)
            mkdirSync(dirname(file), { recursive: true })
            JsonLines.append(file, e, { fsync: false })
          }
          // Counted where the metrics count the trace's drops (aircoding_trace_spans_dropped_total).
          if (overflow > 0)
            TraceRecord.append(root, { at: new Date().toISOString(), runId: "engine", traceId: "engine", spans: overflow, outcome: "dropped", reason: `the engine's spans past the relay's bound of ${MAX_KEPT}`, ms: 0 })
          return { stored: run.length, dropped: overflow }
        })()),
    }
  }
}
