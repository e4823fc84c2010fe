import fc from "fast-check"
import { describe, expect, test } from "vitest"
import { RateLimiter, retryClass, type LimiterChange } from "../../src/scheduler/runtime/sessions/rate-limiter"

/** A clock that moves only when told; `sleep` resolves when `advance` passes its time. */
function fakeClock(start = 1_000_000) {
  let now = start
  let sleepers: { at: number; wake: () => void }[] = []
  return {
    now: () => now,
    sleep: (ms: number) => new Promise<void>((wake) => sleepers.push({ at: now + ms, wake })),
    async advance(ms: number) {
      now += ms
      const due = sleepers.filter((s) => s.at <= now)
      sleepers = sleepers.filter((s) => s.at > now)
      for (const s of due) s.wake()
      // Let the woken acquirers run (and go back to sleep if the pause was extended).
      for (let i = 0; i < 5; i++) await Promise.resolve()
    },
  }
}

function limiter(clock = fakeClock(), opts: Partial<ConstructorParameters<typeof RateLimiter>[0]> = {}) {
  const changes: LimiterChange[] = []
  const l = new RateLimiter({ concurrency: 4, maxAttempts: 6, maxMs: 10 * 60_000, clock, random: () => 0.5, onChange: (c) => changes.push(c), ...opts })
  return { l, clock, changes }
}

const rateLimited = (attempt: number, next: number) => ({ attempt, message: "Rate limit reached for requests. Please try again later.", next })

describe("the run's rate limiter", () => {
  test("a 429 holds every new call until the advised time, then lets them all through", async () => {
    const { l, clock, changes } = limiter()
    l.onRetry("s1", rateLimited(1, clock.now() + 2_000))
    const through: number[] = []
    const calls = [l.acquire(), l.acquire(), l.acquire()].map((p) => p.then(() => through.push(clock.now())))
    await clock.advance(1_999)
    expect(through).toEqual([])
    await clock.advance(1)
    await Promise.all(calls)
    expect(through).toEqual([1_002_000, 1_002_000, 1_002_000])
    expect(changes).toEqual([{ kind: "paused", until: 1_002_000, cap: 2, sessionId: "s1", cause: "rate-limit", message: "Rate limit reached for requests. Please try again later." }])
  })

  test("without an advised time the pause is a jittered exponential backoff", () => {
    const { l, clock } = limiter(fakeClock(), { random: () => 0 })
    l.onRetry("s1", rateLimited(1, 0))
    expect(l.until - clock.now()).toBe(500)
    l.onRetry("s2", rateLimited(1, 0))
    expect(l.until - clock.now()).toBe(1_000)
    expect(limiter(fakeClock(), { random: () => 0.999 }).l.backoffMs(3)).toBe(3_998)
    expect(limiter(fakeClock(), { random: () => 1 }).l.backoffMs(30)).toBe(60_000)
  })

  test("429s halve the cap down to one; successes after the pause raise it one step per two calls", async () => {
    const { l, clock, changes } = limiter()
    l.onRetry("s1", rateLimited(1, clock.now() + 1_000))
    l.onRetry("s2", rateLimited(1, clock.now() + 1_000))
    l.onRetry("s3", rateLimited(1, clock.now() + 1_000))
    expect(l.cap).toBe(1)
    l.onSuccess("s1") // still inside the pause: no step up
    await clock.advance(1_000)
    for (const id of ["s1", "s2", "s3", "s1", "s2", "s3"]) l.onSuccess(id)
    expect(l.cap).toBe(4)
    expect(changes.filter((c) => c.kind === "eased")).toEqual([
      { kind: "eased", cap: 2 },
      { kind: "eased", cap: 3 },
      { kind: "eased", cap: 4 },
    ])
    l.onSuccess("s1")
    expect(changes.length).toBe(5)
  })

  test("server errors are left to the engine's own retries: no pause, no lower cap", () => {
    const { l, clock, changes } = limiter()
    l.onRetry("s1", { attempt: 1, message: "The service is temporarily unavailable.", next: clock.now() + 2_000 })
    expect([l.until, l.cap, changes]).toEqual([0, 4, []])
  })

  test("a call retried past the attempt bound is given up with its class", () => {
    const { l, clock } = limiter(fakeClock(), { maxAttempts: 3 })
    for (let attempt = 1; attempt <= 3; attempt++) expect(l.onRetry("s1", { attempt, message: "Overloaded", next: clock.now() + 1 }).giveUp).toBe(false)
    expect(l.onRetry("s1", { attempt: 4, message: "Overloaded", next: clock.now() + 1 })).toEqual({ giveUp: true, cause: "overloaded", message: "Overloaded (still failing after 4 attempts over 0 s)" })
  })

  test("a call retried past the time bound is given up, counted from its first retry", async () => {
    const { l, clock } = limiter(fakeClock(), { maxMs: 60_000 })
    expect(l.onRetry("s1", { attempt: 1, message: "HTTP 500 internal", next: 0 }).giveUp).toBe(false)
    await clock.advance(60_001)
    expect(l.onRetry("s1", { attempt: 2, message: "HTTP 500 internal", next: 0 })).toMatchObject({ giveUp: true, cause: "server" })
  })

  test("a success starts the next call's count afresh", async () => {
    const { l, clock } = limiter(fakeClock(), { maxMs: 60_000 })
    l.onRetry("s1", { attempt: 1, message: "Overloaded", next: 0 })
    await clock.advance(50_000)
    l.onSuccess("s1")
    await clock.advance(50_000)
    expect(l.onRetry("s1", { attempt: 1, message: "Overloaded", next: 0 }).giveUp).toBe(false)
  })

  test("the provider's message is cut to one line", () => {
    const { l, clock } = limiter(fakeClock(), { maxAttempts: 1 })
    const verdict = l.onRetry("s1", { attempt: 2, message: `Overloaded\n${"x".repeat(500)}`, next: clock.now() })
    expect(verdict.giveUp && verdict.message).toMatch(/^Overloaded x+… \(still failing after 2 attempts over 0 s\)$/)
  })

  test("retry messages are classed", () => {
    expect(["Rate limit reached", "429 Too Many Requests", "Overloaded", "HTTP 529", "The server had an error", "503 Service Unavailable", "ECONNRESET"].map(retryClass)).toEqual([
      "rate-limit",
      "rate-limit",
      "overloaded",
      "overloaded",
      "server",
      "server",
      "connection",
    ])
  })

  test("property: no call gets through before the advised time of any 429 seen before it", async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("429" as const), session: fc.integer({ min: 0, max: 3 }), advise: fc.option(fc.integer({ min: 1, max: 30_000 }), { nil: undefined }) }),
      fc.record({ kind: fc.constant("call" as const) }),
      fc.record({ kind: fc.constant("ok" as const), session: fc.integer({ min: 0, max: 3 }) }),
      fc.record({ kind: fc.constant("tick" as const), ms: fc.integer({ min: 1, max: 20_000 }) }),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), async (ops, r) => {
        const clock = fakeClock()
        const l = new RateLimiter({ concurrency: 4, maxAttempts: 100, maxMs: 1e9, clock, random: () => r })
        /** The latest advised time of a 429 seen so far: nothing may pass before it. */
        let advised = 0
        const violations: string[] = []
        const pending: Promise<void>[] = []
        for (const o of ops) {
          if (o.kind === "429") {
            const next = o.advise === undefined ? 0 : clock.now() + o.advise
            l.onRetry(`s${o.session}`, rateLimited(1, next))
            advised = Math.max(advised, next, l.until)
            expect(l.until).toBeGreaterThanOrEqual(next)
          } else if (o.kind === "call") {
            const floor = advised
            pending.push(l.acquire().then(() => void (clock.now() < floor && violations.push(`through at ${clock.now()} before ${floor}`))))
          } else if (o.kind === "ok") l.onSuccess(`s${o.session}`)
          else await clock.advance(o.ms)
          expect(l.cap).toBeGreaterThanOrEqual(1)
          expect(l.cap).toBeLessThanOrEqual(4)
        }
        await clock.advance(10_000_000)
        await Promise.all(pending)
        expect(violations).toEqual([])
      }),
      { numRuns: 300 },
    )
  })
})
