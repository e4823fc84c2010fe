import { describe, expect, test } from "vitest"
import { ProviderError } from "../../src/scheduler/runtime/sessions/provider-error"

const api = (statusCode: number | undefined, message: string, extra: { responseHeaders?: Record<string, string>; responseBody?: string } = {}) => ({
  name: "APIError",
  data: { message, statusCode, isRetryable: false, ...extra },
})

// Payloads shaped as the engine reports them (assistant message `error` / session.error), bodies as providers send them.
const cases: { name: string; payload: unknown; class: string; retryable: boolean; retryAfterMs?: number; says: string }[] = [
  {
    name: "429 with retry-after",
    payload: api(429, "Too Many Requests", { responseHeaders: { "Retry-After": "2" }, responseBody: '{"error":{"message":"Rate limit reached for requests","type":"rate_limit_error"}}' }),
    class: "rate-limit",
    retryable: true,
    retryAfterMs: 2000,
    says: "Rate limit reached for requests",
  },
  {
    name: "429 with retry-after-ms",
    payload: api(429, "Too Many Requests", { responseHeaders: { "retry-after-ms": "1500" } }),
    class: "rate-limit",
    retryable: true,
    retryAfterMs: 1500,
    says: "Too Many Requests",
  },
  {
    name: "429 quota exhausted",
    payload: api(429, "You exceeded your current quota", { responseBody: '{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","code":"insufficient_quota"}}' }),
    class: "quota",
    retryable: false,
    says: "You exceeded your current quota",
  },
  {
    name: "400 context length",
    payload: api(400, "Bad Request", {
      responseBody: JSON.stringify({ error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.", type: "invalid_request_error", code: "context_length_exceeded" } }),
    }),
    class: "context-too-long",
    retryable: false,
    says: "This model's maximum context length is 128000 tokens",
  },
  {
    name: "ContextOverflowError with the JSON in its message",
    payload: { name: "ContextOverflowError", data: { message: '{"message":"This model\'s maximum context length is 8192 tokens","type":"invalid_request_error"}' } },
    class: "context-too-long",
    retryable: false,
    says: "maximum context length is 8192 tokens",
  },
  { name: "400 plain", payload: api(400, "scripted model: no script answers the architect", { responseBody: '{"error":{"message":"scripted model: no script answers the architect","type":"scripted_model_error","param":null,"code":null}}' }), class: "bad-request", retryable: false, says: "no script answers the architect" },
  { name: "401", payload: api(401, "Unauthorized", { responseBody: '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}' }), class: "auth", retryable: false, says: "invalid x-api-key" },
  { name: "ProviderAuthError", payload: { name: "ProviderAuthError", data: { providerID: "anthropic", message: "No API key found for anthropic" } }, class: "auth", retryable: false, says: "No API key found" },
  { name: "403", payload: api(403, "Forbidden", { responseBody: '{"error":{"message":"Project does not have access to this model"}}' }), class: "forbidden", retryable: false, says: "does not have access" },
  {
    name: "404 model",
    payload: api(404, "Not Found", { responseBody: '{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}' }),
    class: "model-not-found",
    retryable: false,
    says: "model: claude-x",
  },
  { name: "500", payload: api(500, "Internal Server Error", { responseBody: '{"error":{"message":"The server had an error while processing your request."}}' }), class: "server", retryable: true, says: "The server had an error" },
  { name: "529 overloaded", payload: api(529, "Overloaded", { responseBody: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }), class: "overloaded", retryable: true, says: "Overloaded" },
  { name: "503", payload: api(503, "Service Unavailable"), class: "overloaded", retryable: true, says: "Service Unavailable" },
  { name: "408", payload: api(408, "Request Timeout"), class: "timeout", retryable: true, says: "Request Timeout" },
  { name: "a cut stream", payload: { name: "UnknownError", data: { message: "TypeError: terminated" } }, class: "stream-cut", retryable: true, says: "terminated" },
  { name: "connection reset", payload: { name: "UnknownError", data: { message: "read ECONNRESET" } }, class: "connection", retryable: true, says: "ECONNRESET" },
  { name: "an Error", payload: new Error("socket hang up"), class: "connection", retryable: true, says: "socket hang up" },
  { name: "nothing known", payload: { name: "UnknownError", data: { message: "something odd" } }, class: "unknown", retryable: false, says: "something odd" },
]

describe("provider errors are classified from the engine's payload", () => {
  for (const c of cases)
    test(c.name, () => {
      const got = ProviderError.classify(c.payload, Date.parse("2026-01-01T00:00:00Z"))
      expect(got.class).toBe(c.class)
      expect(got.retryable).toBe(c.retryable)
      expect(got.retryAfterMs).toBe(c.retryAfterMs)
      expect(got.message).toContain(c.says)
      expect(got.message).not.toMatch(/[{}\n]|\\"/)
      expect(got.message.length).toBeLessThanOrEqual(200)
    })

  test("retry-after as an HTTP date", () => {
    const got = ProviderError.classify(api(429, "slow down", { responseHeaders: { "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" } }), Date.parse("2026-01-01T00:00:00Z"))
    expect(got.retryAfterMs).toBe(5000)
  })

  test("a triple-escaped payload comes out as one readable line", () => {
    const inner = JSON.stringify({ message: "This model's maximum context length is 4096 tokens" })
    const escaped = JSON.stringify(JSON.stringify(inner))
    const got = ProviderError.oneLine(`error: ContextOverflowError: ${escaped}\n  at line 2`)
    expect(got).not.toMatch(/[{}\n]|\\"/)
    expect(got).toContain("maximum context length is 4096 tokens")
  })
})
