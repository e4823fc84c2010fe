import type { AddressInfo } from "node:net"
import { serve } from "@hono/node-server"
import { Hono } from "hono"
import { ChatRequest, readConversation } from "./conversation.ts"
import { failResponse, failureMessage } from "./failure.ts"
import { CHAOS_ID, FaultPlan, type Fault } from "./faults.ts"
import { RequestLog, truncate, type LogEntry } from "./log.ts"
import { logReply, toReply, usageFor } from "./reply.ts"
import { decide, scriptLabel } from "./route.ts"
import { loadScenario } from "./scenario.ts"
import type { Scenario, Step } from "./schema.ts"
import { httpErrorResponse } from "./http-error.ts"
import { completionBody, errorBody, sseEvents, sseResponse, type Reply } from "./sse.ts"

export interface ScriptedModelOptions {
  scenario: Scenario | string
  /** 0 (the default) picks a free port. */
  port?: number
  host?: string
  /** Append every request as one JSON line to this file. */
  logPath?: string
  /** Called with each failure message as it happens (the CLI prints them to stderr). */
  onFailure?: (message: string) => void
}

export interface ScriptedModel {
  /** Base URL for an OpenAI-compatible client, e.g. http://127.0.0.1:PORT/v1 */
  url: string
  port: number
  /** The scenario's price for the model (USD per million tokens), for the provider config; none: unpriced. */
  price?: { input: number; output: number }
  requests(): LogEntry[]
  failures(): string[]
  requestsByAgent(): Record<string, number>
  close(): Promise<void>
}

export const MODEL_ID = "scripted"
const DEFAULT_TITLE = "AirCoding session"

export async function startScriptedModel(opts: ScriptedModelOptions): Promise<ScriptedModel> {
  const scenario = loadScenario(opts.scenario)
  const log = new RequestLog(opts.logPath)
  const host = opts.host ?? "127.0.0.1"
  const app = createApp(scenario, log, opts.onFailure)

  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: opts.port ?? 0, hostname: host }, () => resolve(s))
    s.once("error", (e: Error) => reject(new Error(`scripted model cannot listen on ${host}:${opts.port ?? 0}: ${e.message} (choose another --port, or 0 for a free one)`)))
  })
  const port = (server.address() as AddressInfo).port
  const urlHost = host.includes(":") ? `[${host}]` : host

  return {
    url: `http://${urlHost}:${port}/v1`,
    port,
    ...(scenario.defaults?.price ? { price: scenario.defaults.price } : {}),
    requests: () => log.all(),
    failures: () => log.failures(),
    requestsByAgent: () => log.countByAgent(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()))
        // Clients keep connections alive; without this close() waits for them to time out.
        const s = server as { closeAllConnections?: () => void }
        s.closeAllConnections?.()
      }),
  }
}

export function createApp(scenario: Scenario, log: RequestLog, onFailure?: (message: string) => void): Hono {
  const app = new Hono()
  let callCounter = 0
  const faults = new FaultPlan(scenario.chaos, scenario.inject)

  const models = () => ({ object: "list", data: [{ id: MODEL_ID, object: "model", created: 0, owned_by: "scripted-model" }] })
  app.get("/v1/models", (c) => c.json(models()))
  app.get("/models", (c) => c.json(models()))

  const complete = async (body: unknown): Promise<Response> => {
    const parsed = ChatRequest.safeParse(body)
    if (!parsed.success) {
      const message = `scripted model: request is not an OpenAI chat-completions request (${parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")})`
      return failResponse(log, onFailure, { agent: "unknown", script: null, step: null, stream: false, offered: [], lastUser: "", lastToolResult: "" }, message)
    }
    const req = parsed.data
    const conv = readConversation(req)
    const decision = decide(scenario, conv)
    const base = {
      agent: decision.agent,
      script: decision.kind === "auto-title" ? "auto-title" : decision.script ? scriptLabel(decision.script) : null,
      step: decision.kind === "auto-title" ? null : (decision.stepIndex ?? null),
      stream: req.stream === true,
      offered: conv.offered,
      lastUser: truncate(conv.lastUser),
      ...(conv.lastUserImages.length ? { images: conv.lastUserImages } : {}),
      lastToolResult: truncate(conv.lastToolResult),
    }
    if (decision.kind === "fail") return failResponse(log, onFailure, base, failureMessage(decision, conv))

    const fault: Fault | undefined = faults.decide(decision, conv)
    if (fault?.kind === "http") {
      log.add({ ts: new Date().toISOString(), ...base, reply: { kind: "error" }, fault: fault.name })
      return Response.json(fault.body, { status: fault.status, headers: fault.headers })
    }
    if (fault?.kind === "stall") await new Promise((r) => setTimeout(r, fault.ms))

    const step: Step | undefined = fault?.kind === "step" ? fault.step : decision.kind === "play" ? decision.step : undefined
    const delayMs = step?.delayMs ?? scenario.defaults?.delayMs ?? 0
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs))

    if (step?.httpError) {
      log.add({ ts: new Date().toISOString(), ...base, reply: { kind: "error", text: `HTTP ${step.httpError.status}` } })
      return httpErrorResponse(step.httpError)
    }
    // A made-up call gets a chaos id (it answers no scripted step); a duplicated report only its copy.
    const scripted = fault?.kind === "step" && fault.name === "report-twice" ? (step?.tools?.length ?? 1) - 1 : fault?.kind === "step" ? 0 : Infinity
    let n = 0
    const reply: Reply = step ? toReply(step, () => (n++ < scripted ? `call_${++callCounter}` : `${CHAOS_ID}${++callCounter}`)) : { kind: "text", text: scenario.defaults?.titleText ?? DEFAULT_TITLE }
    const usage = usageFor(req, reply, { ...scenario.defaults?.usage, ...step?.usage })
    log.add({ ts: new Date().toISOString(), ...base, reply: logReply(reply, step), ...(fault ? { fault: fault.kind === "step" ? fault.name : fault.kind } : {}) })

    const meta = { id: `chatcmpl-scripted-${++callCounter}`, model: req.model ?? MODEL_ID, created: Math.floor(Date.now() / 1000) }
    if (!req.stream) return Response.json(completionBody(reply, meta, usage))
    const events = sseEvents(reply, meta, req.stream_options?.include_usage ? usage : undefined)
    // A stream cut mid-response: half the chunks, then the connection fails (no finish reason, no [DONE]).
    if (fault?.kind === "stream-cut") return sseResponse(events.slice(0, Math.max(1, Math.floor(events.length / 2))), true)
    return sseResponse(events)
  }

  for (const path of ["/v1/chat/completions", "/chat/completions"]) {
    // An unparsable body becomes `undefined`, which `complete` reports as not a chat request.
    app.post(path, async (c) => complete(await c.req.json().catch(() => undefined)))
  }

  app.notFound((c) =>
    c.json(errorBody(`scripted model: no route ${c.req.method} ${c.req.path} (use POST /v1/chat/completions or GET /v1/models)`), 404),
  )
  return app
}
