import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { Orchestrators } from "../../src/scheduler/runtime/orchestrator"
import { Store } from "../../src/scheduler/runtime/store/store"
import { TEST_CONFIG } from "../scheduler/simulate"

/**
 * In the TUI, air_listen answers at once and Main ends its turn; news wakes it in a new turn. A model that
 * calls air_listen again in the same turn must not loop on instant answers (a scripted Main did: eight model
 * requests a second, the engine at 1.7 cores for as long as the run lasted): that call waits up to 10 s for
 * news that needs the user, and news ends the wait at once. A new turn (the session was idle between) is
 * answered at once, however soon it comes.
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

const MAIN = "ses_main"
/** Main's turn ends, as the engine says it (session.idle). */
const turnEnds = () => Orchestrators.observe(root, { type: "session.idle", properties: { sessionID: MAIN } })

describe("air_listen in the TUI, called again in one turn", () => {
  it("answers a turn's first call at once; a second call in the turn waits for news, or 10 s; the next turn is answered at once", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] })
    const orchestrator = Orchestrators.forRoot(root)
    orchestrator.noteMain(MAIN)

    // A turn's first call takes what is queued, at once: the note that the run was resumed from its log.
    expect(await settled(orchestrator.listen())).toBe(true)
    // Meanwhile the run's start, with no engine here, asks the user (the plan session cannot start): news
    // for the wake, which delivers it in a turn of its own. That turn's first call is answered at once too.
    await vi.advanceTimersByTimeAsync(3_000)
    turnEnds()
    expect(await settled(orchestrator.listen())).toBe(true)

    // Again in the same turn: it waits, and news that needs the user ends the wait with that news.
    const second = orchestrator.listen()
    await vi.advanceTimersByTimeAsync(9_000)
    expect(await settled(second)).toBe(false)
    orchestrator.inbox.push("PLAN PROPOSED: two tasks.", true)
    expect(await second).toMatch(/^PLAN PROPOSED: two tasks\./)

    // Again, and no news: answered after 10 s, never sooner.
    const third = orchestrator.listen()
    await vi.advanceTimersByTimeAsync(9_900)
    expect(await settled(third)).toBe(false)
    await vi.advanceTimersByTimeAsync(200)
    expect(await third).toMatch(/^No news that needs the user now/)

    // Main woken in a new turn (by news, or the user) is answered at once, with no time passed.
    turnEnds()
    expect(await settled(orchestrator.listen())).toBe(true)
    // Another session's end is not Main's: the next call is still a second one in Main's turn.
    Orchestrators.observe(root, { type: "session.idle", properties: { sessionID: "ses_worker" } })
    expect(await settled(orchestrator.listen())).toBe(false)
  })
})
