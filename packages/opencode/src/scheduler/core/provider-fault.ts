import { z } from "zod"

/**
 * What kind of provider error ended a session, as the runtime classified it (runtime/sessions/provider-error.ts).
 * The machine reads only the class and whether waiting could cure it; the message is the provider's own,
 * cut to one line, for the question to the user.
 */
export const PROVIDER_ERROR_CLASSES = [
  "rate-limit",
  "overloaded",
  "server",
  "timeout",
  "connection",
  "stream-cut",
  "context-too-long",
  "auth",
  "forbidden",
  "model-not-found",
  "quota",
  "bad-request",
  "unknown",
] as const
export type ProviderErrorClass = (typeof PROVIDER_ERROR_CLASSES)[number]

/** Classes a later request can cure by waiting (backoff); the rest fail the same way until a person acts. */
export const RETRYABLE_CLASSES: ReadonlySet<ProviderErrorClass> = new Set(["rate-limit", "overloaded", "server", "timeout", "connection", "stream-cut"])

export const ProviderFault = z.object({
  class: z.enum(PROVIDER_ERROR_CLASSES),
  retryable: z.boolean(),
  /** The provider's message on one line, without JSON or escaped quotes. */
  message: z.string(),
  status: z.number().int().optional(),
})
export type ProviderFault = z.infer<typeof ProviderFault>
