import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"

/** The machine's rules for the model provider's rate limit: no new model call before the time it names, fewer tasks at work until calls succeed again. */

export function rateLimited(d: Draft, e: EventOf<"rate.limited">): string | undefined {
  if (d.s.runId === null || !d.s.config) return "no run has started; a rate limit concerns nothing"
  const cap = Math.min(e.cap, d.s.config.concurrency)
  d.s.rateLimit = { until: d.s.rateLimit && d.s.rateLimit.until > e.until ? d.s.rateLimit.until : e.until, cap }
  d.notify(`the model provider limits the rate: no new model call before ${e.until}; at most ${cap} task(s) at work until calls succeed again`)
  return undefined
}

/** Told to the views only: the engine's own retry is under way, and the inactivity clock already counts from it. */
export function modelRetrying(d: Draft): string | undefined {
  return d.s.runId === null ? "no run has started; a retry concerns nothing" : undefined
}

export function rateEased(d: Draft, e: EventOf<"rate.eased">): string | undefined {
  if (!d.s.rateLimit || !d.s.config) return "no rate limit is in force"
  d.s.rateLimit = e.cap >= d.s.config.concurrency ? null : { ...d.s.rateLimit, cap: e.cap }
  d.schedule()
  return undefined
}
