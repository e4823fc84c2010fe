import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { Orchestrators } from "../../src/scheduler/runtime/orchestrator"
import { Store } from "../../src/scheduler/runtime/store/store"
import { TEST_CONFIG } from "../scheduler/simulate"

/**
 * In the TUI, air_listen answers at once and Main ends its turn; news wakes it later. A model that calls
 * air_listen again instead of ending its turn must not loop on instant answers (a scripted Main did: eight
 * model requests a second, the engine at 1.7 cores for as long as the run lasted): a call within 3 s of the
 * last answer waits up to 10 s for news that needs the user, and news ends the wait at once.
 */
const root = mkdtempSync(join(tmpdir(), "air-listen-repeat-"))
const previous = process.env.AIRCODING_INTERACTIVE

beforeAll(async () => {
  const store = await Store.open(join(root, ".air"))
  store.append({ type: "run.started", at: new Date().toISOString(), runId: "r1", requirement: "Add tabs.", config: TEST_CONFIG })
  store.close()
  process.env.AIRCODING_INTERACTIVE = "1"
  // No engine: the orchestrator is only asked to listen.
  Orchestrators.attach(root, {} as never)
})
afterEach(() => vi.useRealTimers())
afterAll(() => {
  if (previous === undefined) delete process.env.AIRCODING_INTERACTIVE
  else process.env.AIRCODING_INTERACTIVE = previous
  rmSync(root, { recursive: true, force: true })
})

/** Whether the promise has settled after the microtasks queued so far ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false
  void p.then(() => (done = true))
  for (let i = 0; i < 20; i++) await Promise.resolve()
  return done
}

describe("air_listen in the TUI, called again and again", () => {
  it("answers the first call at once; a repeat waits for news, or 10 s; a call after a pause answers at once", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] })
    const orchestrator = Orchestrators.forRoot(root)

    // The first calls take what is queued, at once: the note that the run was resumed from its log, then
    // what its start led to here, with no engine (the plan session cannot start; the user is asked).
    expect(await settled(orchestrator.listen())).toBe(true)
    await vi.advanceTimersByTimeAsync(3_100)
    expect(await orchestrator.listen()).toMatch(/QUESTION plan:failed/)

    // At once again: it waits, and news that needs the user ends the wait with that news.
    const second = orchestrator.listen()
    await vi.advanceTimersByTimeAsync(9_000)
    expect(await settled(second)).toBe(false)
    orchestrator.inbox.push("PLAN PROPOSED: two tasks.", true)
    expect(await second).toMatch(/^PLAN PROPOSED: two tasks\./)

    // At once again, and no news: answered after 10 s, never sooner.
    const third = orchestrator.listen()
    await vi.advanceTimersByTimeAsync(9_900)
    expect(await settled(third)).toBe(false)
    await vi.advanceTimersByTimeAsync(200)
    expect(await third).toMatch(/^No news that needs the user now/)

    // A model woken by news later (more than 3 s after the last answer) is answered at once.
    await vi.advanceTimersByTimeAsync(3_100)
    expect(await settled(orchestrator.listen())).toBe(true)
  })
})
