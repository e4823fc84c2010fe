import { RETRYABLE_CLASSES, type ProviderErrorClass, type ProviderFault } from "../../core/provider-fault"

/**
 * Reads the engine's error payload — an assistant message's `error`, or `session.error`'s — into one class
 * of provider fault, whether waiting can cure it, when the provider says to come back, and the provider's
 * message on one line. The engine's shapes (@opencode-ai/sdk types.gen): APIError { message, statusCode?,
 * isRetryable, responseHeaders?, responseBody? }, ProviderAuthError { providerID, message }, UnknownError,
 * MessageOutputLengthError, MessageAbortedError, and ContextOverflowError (named by the engine, not typed).
 * A person never sees the payload itself: no JSON, no escaped quotes.
 */
export namespace ProviderError {
  export type Classified = ProviderFault & {
    /** From `retry-after-ms` or `retry-after` (seconds or an HTTP date), when the provider sent one. */
    retryAfterMs?: number
  }

  const MAX_MESSAGE = 200

  export function classify(payload: unknown, now = Date.now()): Classified {
    const { name, data } = parts(payload)
    const status = typeof data.statusCode === "number" ? data.statusCode : undefined
    const body = typeof data.responseBody === "string" ? data.responseBody : ""
    const raw = providerMessage(body) ?? (typeof data.message === "string" ? data.message : typeof payload === "string" ? payload : "")
    const message = oneLine(raw) || (name ? name : "no message")
    const cls = classOf(name, status, `${raw} ${body}`)
    const headers = lowerKeys(data.responseHeaders)
    const retryAfterMs = cls === "rate-limit" || cls === "overloaded" || cls === "server" ? retryAfter(headers, now) : undefined
    return {
      class: cls,
      retryable: RETRYABLE_CLASSES.has(cls),
      message,
      ...(status !== undefined ? { status } : {}),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    }
  }

  /** The error's name and data, whatever shape reached us (the engine's object, an Error, a string). */
  function parts(payload: unknown): { name: string; data: Record<string, unknown> } {
    if (payload instanceof Error) return { name: payload.name, data: { message: payload.message } }
    if (typeof payload !== "object" || payload === null) return { name: "", data: {} }
    const p = payload as { name?: unknown; data?: unknown; message?: unknown }
    const data = typeof p.data === "object" && p.data !== null ? (p.data as Record<string, unknown>) : { message: p.message }
    return { name: typeof p.name === "string" ? p.name : "", data }
  }

  function classOf(name: string, status: number | undefined, text: string): ProviderErrorClass {
    const t = text.toLowerCase()
    if (name === "ContextOverflowError" || name === "MessageOutputLengthError") return "context-too-long"
    if (name === "ProviderAuthError") return "auth"
    const quota = /insufficient_quota|quota|billing|credit balance|payment required/.test(t)
    const context = /context[ _-]?length|context window|maximum context|too many tokens|prompt is too long|context_length_exceeded|request too large/.test(t)
    const model = /model[^.]{0,40}(not found|does not exist|not_found|unknown|unsupported)|no such model|model_not_found/.test(t)
    if (status !== undefined) {
      if (status === 429) return quota ? "quota" : "rate-limit"
      if (status === 529 || status === 503 || (status >= 500 && /overloaded/.test(t))) return "overloaded"
      if (status === 408 || status === 504) return "timeout"
      if (status >= 500) return "server"
      return classOf4xx(status, quota, context, model)
    }
    if (context) return "context-too-long"
    if (quota) return "quota"
    if (model) return "model-not-found"
    if (/overloaded/.test(t)) return "overloaded"
    if (/timed? ?out|etimedout/.test(t)) return "timeout"
    if (/econnreset|econnrefused|enotfound|socket hang up|fetch failed|network|connection (reset|refused|closed)/.test(t)) return "connection"
    if (/terminated|premature close|stream (ended|closed|cut)|unexpected end|aborted mid|incomplete/.test(t)) return "stream-cut"
    return "unknown"
  }

  function classOf4xx(status: number, quota: boolean, context: boolean, model: boolean): ProviderErrorClass {
    if (status === 401) return "auth"
    if (status === 402 || quota) return "quota"
    if (status === 403) return "forbidden"
    if (status === 404) return "model-not-found"
    if (status === 413 || context) return "context-too-long"
    if (model) return "model-not-found"
    return "bad-request"
  }

  /** The provider's own message inside a JSON body ({ error: { message } }, { message }, { detail }), if any. */
  function providerMessage(body: string): string | undefined {
    const parsed = parseJson(body)
    if (parsed === undefined) return undefined
    return messageIn(parsed)
  }

  function messageIn(value: unknown, depth = 0): string | undefined {
    if (depth > 4) return undefined
    if (typeof value === "string") {
      const inner = parseJson(value)
      return inner === undefined ? value : messageIn(inner, depth + 1)
    }
    if (typeof value !== "object" || value === null) return undefined
    const v = value as Record<string, unknown>
    for (const key of ["error", "message", "detail", "error_description"]) {
      const found = v[key] === undefined ? undefined : messageIn(v[key], depth + 1)
      if (found) return found
    }
    return undefined
  }

  function parseJson(text: string): unknown {
    const s = text.trim()
    if (!s.startsWith("{") && !s.startsWith("[") && !s.startsWith('"')) return undefined
    try {
      return JSON.parse(s)
    } catch {
      return undefined
    }
  }

  /**
   * One line a person can read: a message field pulled out of any JSON left in it, escaped quotes and
   * braces gone, whitespace folded, at most MAX_MESSAGE characters.
   */
  export function oneLine(text: string): string {
    let s = messageIn(text) ?? text
    // A JSON fragment with a message field (a cut or nested payload): its message only.
    const field = /"message"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(s.replace(/\\"/g, '"'))
    if (s.includes("{") && field) s = field[1]!
    s = s
      .replace(/\\+"/g, "'")
      .replace(/\\[nrt]/g, " ")
      .replace(/[{}"]/g, "")
      .replace(/\s+/g, " ")
      .trim()
    return s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE - 1)}…` : s
  }

  function lowerKeys(headers: unknown): Record<string, string> {
    const out: Record<string, string> = {}
    if (typeof headers !== "object" || headers === null) return out
    for (const [k, v] of Object.entries(headers)) if (typeof v === "string") out[k.toLowerCase()] = v
    return out
  }

  function retryAfter(headers: Record<string, string>, now: number): number | undefined {
    const ms = Number(headers["retry-after-ms"])
    if (headers["retry-after-ms"] !== undefined && Number.isFinite(ms) && ms >= 0) return ms
    const value = headers["retry-after"]
    if (value === undefined) return undefined
    const seconds = Number(value)
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
    const date = Date.parse(value)
    return Number.isNaN(date) ? undefined : Math.max(0, date - now)
  }
}
