import { z } from "zod"

// The fault model's schemas and markers: only zod, so the scenario schema and the conversation reader
// can import them without a cycle.

export const FAULTS = [
  "rate-limit",
  "server-error",
  "unavailable",
  "overloaded",
  "context-too-long",
  "unauthorized",
  "model-not-found",
  "stream-cut",
  "stall",
  "text-no-tool",
  "invalid-args",
  "unoffered-tool",
  "report-twice",
  "false-success",
] as const
export const FaultName = z.enum(FAULTS)
export type FaultName = z.infer<typeof FaultName>

const probability = z.number().min(0).max(1)

export const Chaos = z
  .strictObject({
    seed: z.number().int(),
    faults: z.partialRecord(FaultName, probability),
    /** Only these agents get faults (default: every agent but the title generator). */
    agents: z.array(z.string()).optional(),
    /** Retry-After of a `rate-limit` fault, seconds (default 2). */
    retryAfterS: z.number().min(0).optional(),
    /** How long a `stall` withholds its answer, ms (default 120000). */
    stallMs: z.number().int().min(0).optional(),
  })
  .refine((c) => Object.values(c.faults).reduce((a, p) => a + (p ?? 0), 0) <= 1, { message: "the fault probabilities add up to more than 1", path: ["faults"] })
export type Chaos = z.infer<typeof Chaos>

export const Inject = z
  .strictObject({
    /** A named fault, or `status` for any HTTP status with a generic error body. */
    fault: FaultName.optional(),
    status: z.number().int().min(400).max(599).optional(),
    /** Only requests of this agent (default: every agent but the title generator). */
    agent: z.string().optional(),
    /** Only conversations whose first user message matches this regex. */
    match: z.string().optional(),
    /** How many matching requests get it (default: every one). */
    times: z.number().int().min(1).optional(),
    /** Headers sent with an HTTP error, as given. */
    retryAfter: z.string().optional(),
    retryAfterMs: z.string().optional(),
    stallMs: z.number().int().min(0).optional(),
  })
  .refine((i) => (i.fault === undefined) !== (i.status === undefined), { message: 'give exactly one of "fault" or "status"' })
export type Inject = z.infer<typeof Inject>

export const CHAOS_TEXT = "[chaos]"
export const CHAOS_ID = "chaos_"

/** A chaos turn (made up by the fault model) does not consume a scripted step. */
export function isChaosTurn(content: string, toolCallIds: string[]): boolean {
  if (content.startsWith(CHAOS_TEXT)) return true
  return toolCallIds.length > 0 && toolCallIds.every((id) => id.startsWith(CHAOS_ID))
}

