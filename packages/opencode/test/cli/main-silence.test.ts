import { describe, expect, test } from "vitest"
import { silentTranscript } from "../../src/cli/headless"
import { MainSilence } from "../../src/cli/main-silence"
import { mainAgain } from "../../src/cli/run"

/**
 * Headless, before a run begins, Main's model request is the only thing at work: silence past the run's
 * `inactivityMs` stops it (src/cli/main-silence.ts), and its turn counts as a request that timed out.
 */
describe("when Main has been silent too long", () => {
  const silenceMs = 10_000
  const boot = MainSilence.BOOT_MS
  test.each([
    ["nothing printed yet, within start-up and the silence", { startedAt: 0 }, silenceMs + boot, false],
    ["nothing printed yet, past start-up and the silence", { startedAt: 0 }, silenceMs + boot + 1, true],
    ["printed, then silent for exactly the bound", { startedAt: 0, lastOutputAt: 50_000 }, 50_000 + silenceMs, false],
    ["printed, then silent past the bound", { startedAt: 0, lastOutputAt: 50_000 }, 50_000 + silenceMs + 1, true],
    // Output ends the start-up allowance: a request sent later and never answered gets the silence alone.
    ["printed early, silent since", { startedAt: 0, lastOutputAt: 1_000 }, 1_000 + silenceMs + 1, true],
  ])("%s", (_name, clock, now, overdue) => {
    expect(MainSilence.overdue(clock, now, silenceMs)).toBe(overdue)
  })
})

describe("the watch on one start of Main", () => {
  // The clock is ours; the watch's own timer only polls it.
  const settle = () => new Promise((r) => setTimeout(r, 30))

  test("output restarts the silence; past the bound with no output, Main is stopped, once", async () => {
    let now = 0
    let stops = 0
    const watch = MainSilence.start({ silenceMs: 100, bootMs: 0, pollMs: 1, now: () => now, begun: () => false, onSilent: () => stops++ })
    for (let i = 0; i < 10; i++) {
      now += 60
      watch.touch()
      await settle()
    }
    expect([watch.silent, stops]).toEqual([false, 0])
    now += 101
    await settle()
    now += 1_000
    await settle()
    watch.stop()
    expect([watch.silent, stops]).toEqual([true, 1])
  })

  test("a run that has begun is never Main's silence to judge", async () => {
    let now = 0
    let stops = 0
    const watch = MainSilence.start({ silenceMs: 100, pollMs: 1, now: () => now, begun: () => true, onSilent: () => stops++ })
    now += 10 * 60_000
    await settle()
    watch.stop()
    expect([watch.silent, stops]).toEqual([false, 0])
  })
})

describe("Main stopped for its silence", () => {
  const transcript = { exitCode: 143, text: "", toolCalls: [], errors: [], faults: [], stderr: "(killed: aborted)" }

  test("is a timed-out request said in words (en, zh-CN), which gets the requirement again before any run", () => {
    const en = silentTranscript(transcript, 600_000, "en")
    expect(en.errors).toEqual(["the main agent's model gave no answer for 600 s, before any run began"])
    expect(en.faults).toEqual([{ class: "timeout", retryable: true, message: en.errors[0] }])
    expect(silentTranscript(transcript, 15_000, "zh-CN").errors).toEqual(["运行开始前，主控的模型 15 秒没有任何回应"])
    expect(mainAgain(undefined, en, "the requirement")).toEqual({
      prompt: "the requirement",
      note: "the main agent's model gave no answer for 600 s, before any run began; no run had started, so the main agent was given the requirement again",
    })
  })
})
