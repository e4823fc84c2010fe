import type { ProviderErrorClass } from "../../core/provider-fault"

/**
 * One rate limiter per run. The engine retries a retryable provider error inside its session on its own
 * (see the runtime README, "The engine's retries, measured"); what it does not do is tell the other
 * sessions. Here a 429 on any session pauses every new model call the Scheduler makes (new sessions,
 * prompts, nudges) until the advised time, and lowers the number of sessions at work until calls succeed
 * again, then raises it one step at a time. A call that keeps failing is bounded: past `maxAttempts`
 * retries or `maxMs` the session is given up on, with the class of its error.
 *
 * Time and randomness come in (`clock`, `random`), so tests drive it with a fake clock.
 */

/** What the engine's `session.status` says while it waits to retry. */
export type RetryStatus = { attempt: number; message: string; next: number }

/** The kinds of retryable provider error, read from the engine's retry message: the provider classes waiting can cure. */
export type RetryClass = Extract<ProviderErrorClass, "rate-limit" | "overloaded" | "server" | "connection">

export function retryClass(message: string): RetryClass {
  if (/\b429\b|rate.?limit|too many requests/i.test(message)) return "rate-limit"
  if (/\b529\b|overload/i.test(message)) return "overloaded"
  if (/\b5\d\d\b|server|unavailable|internal/i.test(message)) return "server"
  return "connection"
}

/** A change the limiter made, for the log (the runtime turns each into an event). */
export type LimiterChange =
  | { kind: "paused"; until: number; cap: number; sessionId: string; cause: RetryClass; message: string }
  | { kind: "eased"; cap: number }

type LimiterClock = { now(): number; sleep(ms: number): Promise<void> }

type LimiterOptions = {
  /** The run's configured concurrency: the cap goes back up to it. */
  concurrency: number
  /** Retries of one call before its session is given up on. */
  maxAttempts: number
  /** Time from a call's first retry before its session is given up on. */
  maxMs: number
  /** Backoff when the engine advises no time: base × 2^(n−1), jittered, at most `capMs`. */
  baseMs?: number
  capMs?: number
  /** Successful calls after the pause before the cap goes up one step. */
  successesPerStep?: number
  clock: LimiterClock
  random?: () => number
  onChange?: (change: LimiterChange) => void
}

/** The limiter's verdict on one retry status: let the engine retry, or give the session up. */
type RetryVerdict = { giveUp: false } | { giveUp: true; cause: RetryClass; message: string }

export class RateLimiter {
  /** No new model call before this time (ms since the epoch). */
  private pausedUntil = 0
  /** Sessions at work allowed now (≤ concurrency). */
  private currentCap: number
  /** Consecutive 429s without a success between them: the backoff exponent. */
  private strikes = 0
  private successes = 0
  /** Per session: when its current call first had to be retried. */
  private firstRetry = new Map<string, number>()

  constructor(private readonly opts: LimiterOptions) {
    this.currentCap = opts.concurrency
  }

  get cap(): number {
    return this.currentCap
  }

  get until(): number {
    return this.pausedUntil
  }

  /** Waits until new model calls are allowed again (returns at once when they are). */
  async acquire(): Promise<void> {
    for (;;) {
      const wait = this.pausedUntil - this.opts.clock.now()
      if (wait <= 0) return
      await this.opts.clock.sleep(wait)
    }
  }

  /** The time a 429 without advice pauses the run for: exponential with full jitter in its upper half. */
  backoffMs(strike: number): number {
    const base = this.opts.baseMs ?? 1_000
    const cap = this.opts.capMs ?? 60_000
    const exp = Math.min(cap, base * 2 ** Math.max(0, strike - 1))
    return Math.round(exp / 2 + (this.opts.random ?? Math.random)() * (exp / 2))
  }

  /**
   * A session's engine is waiting to retry. A 429 pauses the whole run until the advised time (the
   * engine's `next`, which honours retry-after / retry-after-ms; else our backoff) and halves the cap.
   * Past the per-call bound the session is given up on.
   */
  onRetry(sessionId: string, status: RetryStatus): RetryVerdict {
    const now = this.opts.clock.now()
    const cause = retryClass(status.message)
    const first = this.firstRetry.get(sessionId) ?? now
    this.firstRetry.set(sessionId, first)
    if (cause === "rate-limit") {
      this.strikes++
      this.successes = 0
      const advised = status.next > now ? status.next : now + this.backoffMs(this.strikes)
      const lowered = Math.max(1, Math.min(this.currentCap, Math.ceil(this.opts.concurrency / 2 ** this.strikes)))
      if (advised > this.pausedUntil || lowered < this.currentCap) {
        this.pausedUntil = Math.max(this.pausedUntil, advised)
        this.currentCap = lowered
        this.opts.onChange?.({ kind: "paused", until: this.pausedUntil, cap: this.currentCap, sessionId, cause, message: oneLine(status.message) })
      }
    }
    if (status.attempt > this.opts.maxAttempts || now - first > this.opts.maxMs) {
      this.firstRetry.delete(sessionId)
      const spent = Math.round((now - first) / 1000)
      return { giveUp: true, cause, message: `${oneLine(status.message)} (still failing after ${status.attempt} attempts over ${spent} s)` }
    }
    return { giveUp: false }
  }

  /** A model call of the session succeeded (an assistant message completed). */
  onSuccess(sessionId: string): void {
    this.firstRetry.delete(sessionId)
    if (this.opts.clock.now() < this.pausedUntil) return
    this.strikes = 0
    if (this.currentCap >= this.opts.concurrency) return
    if (++this.successes < (this.opts.successesPerStep ?? 2)) return
    this.successes = 0
    this.currentCap++
    this.opts.onChange?.({ kind: "eased", cap: this.currentCap })
  }

  /** The session is over: its retry count goes with it. */
  forget(sessionId: string): void {
    this.firstRetry.delete(sessionId)
  }
}

/** A provider's message on one line and short: never a JSON dump for a person. */
export function oneLine(message: string, max = 200): string {
  const flat = message.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
