import { describe, expect, test } from "vitest"
import { rateLimitedSessions, retryingEvent, type RetryNotice } from "../../src/scheduler/runtime/ports"
import { initialState, newTaskRuntime } from "../../src/scheduler/core/state"
import { RateLimiter } from "../../src/scheduler/runtime/sessions/rate-limiter"
import { ChildSessions } from "../../src/scheduler/runtime/sessions/sessions"

/**
 * The wiring of the run's limiter to the engine's sessions (ports.ts, sessions.ts): retry statuses from the
 * bus reach the limiter, new sessions and prompts wait for it, and a call retried past the bound ends its
 * session with an error outcome that carries the class. The engine client is a recording fake.
 */
function fakeClient() {
  const calls: string[] = []
  let n = 0
  const client = {
    session: {
      create: async () => ({ data: { id: `ses-${++n}` } }),
      promptAsync: async (o: { path: { id: string } }) => (calls.push(`prompt ${o.path.id}`), {}),
      abort: async (o: { path: { id: string } }) => (calls.push(`abort ${o.path.id}`), {}),
    },
  }
  return { client: client as any, calls }
}

function clock() {
  let now = 5_000_000
  const sleepers: { at: number; wake: () => void }[] = []
  return {
    now: () => now,
    sleep: (ms: number) => new Promise<void>((wake) => sleepers.push({ at: now + ms, wake })),
    async advance(ms: number) {
      now += ms
      for (const s of sleepers.splice(0).filter((x) => (x.at <= now ? true : (sleepers.push(x), false)))) s.wake()
      for (let i = 0; i < 10; i++) await Promise.resolve()
    },
  }
}

const retry = (sessionID: string, attempt: number, message: string, next: number) =>
  ({ type: "session.status", properties: { sessionID, status: { type: "retry", attempt, message, next } } }) as any

describe("the engine's retries reach the run's limiter", () => {
  test("a 429 on one session holds the next prompt of another until the advised time", async () => {
    const c = clock()
    const { client, calls } = fakeClient()
    const limiter = new RateLimiter({ concurrency: 4, maxAttempts: 6, maxMs: 600_000, clock: c })
    const sessions = rateLimitedSessions(client, () => limiter)
    const a = await sessions.create({ agent: "executor", directory: "/w/a", title: "a" }, () => {})
    const b = await sessions.create({ agent: "executor", directory: "/w/b", title: "b" }, () => {})
    ChildSessions.observe(retry(a, 1, "Rate limit reached for requests", c.now() + 2_000), c.now())
    let sent = false
    const p = sessions.prompt(b, "nudge").then(() => (sent = true))
    await c.advance(1_999)
    expect(sent).toBe(false)
    await c.advance(1)
    await p
    expect(calls).toEqual([`prompt ${b}`])
    expect(limiter.cap).toBe(2)
    ChildSessions.release(a)
    ChildSessions.release(b)
  })

  test("a call retried past the bound is aborted and its session fails with the class", async () => {
    const c = clock()
    const { client, calls } = fakeClient()
    const limiter = new RateLimiter({ concurrency: 4, maxAttempts: 2, maxMs: 600_000, clock: c })
    const sessions = rateLimitedSessions(client, () => limiter)
    const outcomes: ChildSessions.Outcome[] = []
    const id = await sessions.create({ agent: "debugger", directory: "/w/d", title: "d" }, (o) => outcomes.push(o))
    await sessions.prompt(id, "fix it")
    for (let attempt = 1; attempt <= 3; attempt++) ChildSessions.observe(retry(id, attempt, "Overloaded", c.now() + 1_000), c.now())
    await c.advance(0)
    expect(outcomes).toEqual([{ kind: "error", message: "overloaded: Overloaded (still failing after 3 attempts over 0 s)", retryClass: "overloaded" }])
    expect(calls).toEqual([`prompt ${id}`, `abort ${id}`])
    expect(ChildSessions.isWatched(id)).toBe(false)
  })

  test("waiting for the engine's next attempt is not silence: the stall clock starts from it", async () => {
    const c = clock()
    const { client } = fakeClient()
    const limiter = new RateLimiter({ concurrency: 4, maxAttempts: 6, maxMs: 600_000, clock: c })
    const sessions = rateLimitedSessions(client, () => limiter)
    const id = await sessions.create({ agent: "executor", directory: "/w/e", title: "e" }, () => {})
    await sessions.prompt(id, "go")
    const now = Date.now()
    ChildSessions.observe(retry(id, 1, "The server had an error", now + 30_000), now)
    expect(ChildSessions.stalled(15_000, now + 40_000, 0)).toEqual([])
    expect(ChildSessions.stalled(15_000, now + 46_000, 0)).toEqual([id])
    ChildSessions.release(id)
  })

  test("a retry the engine keeps in silence is told (with the session's agent); a 429 is the limiter's pause instead", async () => {
    const c = clock()
    const { client } = fakeClient()
    const limiter = new RateLimiter({ concurrency: 4, maxAttempts: 6, maxMs: 600_000, clock: c })
    const notices: RetryNotice[] = []
    const sessions = rateLimitedSessions(client, () => limiter, (n) => notices.push(n))
    const id = await sessions.create({ agent: "debugger", directory: "/w/f", title: "f" }, () => {})
    ChildSessions.observe(retry(id, 1, "Service Unavailable", c.now() + 8_000), c.now())
    ChildSessions.observe(retry(id, 2, "Rate limit reached for requests", c.now() + 2_000), c.now())
    expect(notices).toEqual([{ sessionId: id, agent: "debugger", status: { attempt: 1, message: "Service Unavailable", next: c.now() + 8_000 } }])
    ChildSessions.release(id)
  })
})

describe("model.retrying", () => {
  const notice = (sessionId: string): RetryNotice => ({ sessionId, agent: "reviewer", status: { attempt: 2, message: "Bad gateway\n<html>…</html>", next: Date.parse("2026-12-01T10:00:08.000Z") } })

  test("names the task whose worker or reviewer the session is, in one line, at the engine's next time", () => {
    const state = { ...initialState(), tasks: [{ ...newTaskRuntime("T-1", 0), sessionId: "ses-w", reviewSessionId: "ses-r" }] }
    expect(retryingEvent(notice("ses-r"), state)).toEqual({
      type: "model.retrying",
      sessionId: "ses-r",
      role: "reviewer",
      taskId: "T-1",
      attempt: 2,
      nextAt: "2026-12-01T10:00:08.000Z",
      message: "Bad gateway <html>…</html>",
    })
    // A session of no task (the Architect's plan): no task is named.
    expect(retryingEvent(notice("ses-plan"), state)).not.toHaveProperty("taskId")
  })
})
