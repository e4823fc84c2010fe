import { z } from "zod"

// A step that answers with an HTTP error instead of a completion: how a test makes the "model provider"
// refuse one chosen request (a 400 context-too-long, a 401, a 404 model, a 429 with Retry-After, a 5xx).
// Kept apart from the normal replies so a fault-injection mode can sit next to it.

export const HttpError = z.strictObject({
  /** The HTTP status, 400–599. */
  status: z.number().int().min(400).max(599),
  /** The JSON body; by default the OpenAI-style { error: { message, type, code } } with `message`. */
  body: z.unknown().optional(),
  /** Used in the default body. */
  message: z.string().optional(),
  /** Response headers, e.g. { "retry-after": "2" }. */
  headers: z.record(z.string(), z.string()).optional(),
})
export type HttpError = z.infer<typeof HttpError>

export function httpErrorResponse(error: HttpError): Response {
  const body = error.body ?? { error: { message: error.message ?? `scripted model: HTTP ${error.status}`, type: "scripted_http_error", param: null, code: null } }
  return Response.json(body, { status: error.status, headers: error.headers })
}
