import { CHAOS_ID, CHAOS_TEXT, Chaos, FAULTS, type FaultName, type Inject } from "./fault-schema.ts"
import type { Conversation } from "./conversation.ts"
import type { Decision } from "./route.ts"
import type { Step } from "./schema.ts"
import { fillPlaceholders } from "./template.ts"

export { FAULTS, FaultName, Chaos, Inject, CHAOS_ID, CHAOS_TEXT, isChaosTurn } from "./fault-schema.ts"

// Provider faults on purpose: HTTP errors a real provider sends, broken streams, stalls, and turns a
// real model gets wrong. Two ways in:
// - `inject`: deterministic, the first `times` matching requests get the fault (measuring the engine);
// - `chaos`: seeded and random per conversation position, so the same seed gives the same faults
//   whatever order parallel sessions reach the server in.
// A turn the chaos model made up is marked (text starting "[chaos]", tool-call ids "chaos_…") and does
// not consume a scripted step, so the script goes on where it was once the session recovers.

/** The HTTP answer of each error fault: status, OpenAI-style error type and code, message. */
export const HTTP_FAULTS: Partial<Record<FaultName, { status: number; type: string; code: string; message: string }>> = {
  "rate-limit": { status: 429, type: "rate_limit_error", code: "rate_limit_exceeded", message: "Rate limit reached for requests. Please try again later." },
  "server-error": { status: 500, type: "server_error", code: "internal_error", message: "The server had an error while processing your request." },
  unavailable: { status: 503, type: "server_error", code: "service_unavailable", message: "The service is temporarily unavailable." },
  overloaded: { status: 529, type: "overloaded_error", code: "overloaded", message: "Overloaded" },
  "context-too-long": {
    status: 400,
    type: "invalid_request_error",
    code: "context_length_exceeded",
    message: "This model's maximum context length is 200000 tokens. However, your messages resulted in 212345 tokens. Please reduce the length of the messages.",
  },
  unauthorized: { status: 401, type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided." },
  "model-not-found": { status: 404, type: "invalid_request_error", code: "model_not_found", message: "The model `scripted` does not exist or you do not have access to it." },
}

/** Tools whose call is a session's report to the Scheduler (a duplicate of one is the `report-twice` fault). */
export const REPORT_TOOLS = ["air_report", "air_review", "air_decide", "air_milestone", "air_plan", "air_propose", "air_delta"]

/** What the server does instead of (or to) the scripted answer. */
export type Fault =
  | { kind: "http"; name: string; status: number; body: object; headers: Record<string, string> }
  | { kind: "stream-cut" }
  | { kind: "stall"; ms: number }
  | { kind: "step"; name: FaultName; step: Step }

/** 32-bit FNV-1a then a splitmix step: a uniform number in [0, 1) from a string, the same on every run. */
export function unitHash(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return (h >>> 0) / 2 ** 32
}

/** The fault a chaos seed gives the conversation position `key` (one draw, probabilities cumulative). */
export function chaosPick(chaos: Chaos, key: string): FaultName | undefined {
  const u = unitHash(`${chaos.seed}|${key}`)
  let cumulative = 0
  for (const name of FAULTS) {
    cumulative += chaos.faults[name] ?? 0
    if (u < cumulative) return name
  }
  return undefined
}

function httpFault(name: FaultName | `status-${number}`, status: number, headers: Record<string, string>): Fault {
  const known = HTTP_FAULTS[name as FaultName]
  const message = known?.message ?? `scripted fault: HTTP ${status}`
  return { kind: "http", name, status, headers, body: { error: { message, type: known?.type ?? "scripted_fault", param: null, code: known?.code ?? null } } }
}

/**
 * The fault a named fault becomes for this request, or undefined when it does not apply here (a
 * semantic fault needs a scripted tool step; `false-success` a worker with a report still ahead).
 */
function realise(name: FaultName, decision: Decision, conv: Conversation, opts: { retryAfterS?: number; stallMs?: number; retryAfter?: string; retryAfterMs?: string } = {}): Fault | undefined {
  if (HTTP_FAULTS[name]) {
    const headers: Record<string, string> = {}
    if (name === "rate-limit") headers["retry-after"] = opts.retryAfter ?? String(opts.retryAfterS ?? 2)
    else if (opts.retryAfter !== undefined) headers["retry-after"] = opts.retryAfter
    if (opts.retryAfterMs !== undefined) headers["retry-after-ms"] = opts.retryAfterMs
    return httpFault(name, HTTP_FAULTS[name]!.status, headers)
  }
  if (name === "stall") return { kind: "stall", ms: opts.stallMs ?? 120_000 }
  if (decision.kind !== "play") return undefined
  if (name === "stream-cut") return { kind: "stream-cut" }
  const step = decision.step
  const calls = step.tool !== undefined ? [{ tool: step.tool, args: step.args }] : (step.tools ?? [])
  if (!calls.length) return undefined
  const first = calls[0]!
  switch (name) {
    case "text-no-tool":
      return { kind: "step", name, step: { text: `${CHAOS_TEXT} I believe the work is done.` } }
    case "invalid-args":
      return { kind: "step", name, step: { tool: first.tool, rawArgs: JSON.stringify({ chaos: "these are not this tool's arguments" }), allowUnoffered: true } }
    case "unoffered-tool": {
      const missing = ["bash", "write", "edit", "air_report", "air_plan", "air_submit"].find((t) => !conv.offered.includes(t)) ?? "chaos_no_such_tool"
      return { kind: "step", name, step: { tool: missing, args: {}, allowUnoffered: true } }
    }
    case "report-twice": {
      const report = calls.find((c) => REPORT_TOOLS.includes(c.tool))
      if (!report) return undefined
      return { kind: "step", name, step: { tools: [...calls, report].map((c) => ({ tool: c.tool, args: c.args ?? {} })) } }
    }
    case "false-success": {
      if (decision.agent !== "executor" && decision.agent !== "debugger") return undefined
      const ahead = decision.script.script.steps.slice(decision.stepIndex + 1).find((s) => s.tool === "air_report")
      if (!ahead || first.tool === "air_report") return undefined
      return { kind: "step", name, step: { tool: "air_report", args: fillPlaceholders(ahead.args ?? {}, decision.script.groups) } }
    }
  }
  return undefined
}

/**
 * Decides the fault of one request. `seen` counts the requests of each conversation position: chaos
 * strikes a position only the first time, so the engine's retry or a fresh session gets the scripted
 * answer (a fault model that never relents proves nothing about recovery).
 */
export class FaultPlan {
  private readonly seen = new Map<string, number>()
  private readonly used: number[]

  constructor(
    private readonly chaos: Chaos | undefined,
    private readonly inject: Inject[] = [],
  ) {
    this.used = inject.map(() => 0)
  }

  decide(decision: Decision, conv: Conversation): Fault | undefined {
    if (decision.agent === "title") return undefined
    for (let i = 0; i < this.inject.length; i++) {
      const rule = this.inject[i]!
      if (rule.agent !== undefined && rule.agent !== decision.agent) continue
      if (rule.match !== undefined && !new RegExp(rule.match).test(conv.firstUser)) continue
      if (rule.times !== undefined && this.used[i]! >= rule.times) continue
      const fault =
        rule.status !== undefined
          ? httpFault(`status-${rule.status}`, rule.status, { ...(rule.retryAfter !== undefined ? { "retry-after": rule.retryAfter } : {}), ...(rule.retryAfterMs !== undefined ? { "retry-after-ms": rule.retryAfterMs } : {}) })
          : realise(rule.fault!, decision, conv, rule)
      if (!fault) continue
      this.used[i]!++
      return fault
    }
    const chaos = this.chaos
    if (!chaos || (chaos.agents && !chaos.agents.includes(decision.agent))) return undefined
    if (decision.kind !== "play") return undefined
    // The script step, not the request's text: prompts carry paths and ids that differ from run to run.
    const key = `${decision.agent}|${decision.script.index}|${JSON.stringify(decision.script.groups)}|${decision.stepIndex}`
    const n = this.seen.get(key) ?? 0
    this.seen.set(key, n + 1)
    if (n > 0) return undefined
    const name = chaosPick(chaos, key)
    return name ? realise(name, decision, conv, chaos) : undefined
  }
}

/** `--chaos SEED` and `--faults rate-limit=0.1,stall=0.02` as a `chaos` scenario key. */
export function parseChaosFlags(seed: string, faults: string | undefined): Chaos {
  const entries = (faults ?? FAULTS.map((f) => `${f}=0.02`).join(",")).split(",").filter(Boolean)
  const parsed: Record<string, number> = {}
  for (const entry of entries) {
    const [name, p] = entry.split("=")
    parsed[name!.trim()] = p === undefined ? 0.05 : Number(p)
  }
  return Chaos.parse({ seed: Number(seed), faults: parsed })
}
