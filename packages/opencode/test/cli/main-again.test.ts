import { describe, expect, test } from "vitest"
import { parseEngineEvents } from "../../src/cli/headless"
import { mainAgain, RESUME_PROMPT, SUBMIT_NUDGE } from "../../src/cli/run"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"

/**
 * Headless, Main's turn carries the engine that hosts the Scheduler (src/cli/run.ts): when that turn ends
 * before the run does, `aircoding run` decides from the run's state whether Main is started again, and how.
 */
const at = (patch: Partial<SchedulerState>): SchedulerState => ({ ...initialState(), runId: "run-1", ...patch })
const ok = { errors: [], faults: [], exitCode: 0 }
const failed = (cls: "server" | "auth" | "context-too-long", retryable: boolean) => ({ errors: [`the main agent's model request failed: ${cls}`], faults: [{ class: cls, retryable, message: "m" }], exitCode: 1 })

describe("whether Main is started again", () => {
  test("a run still at work is resumed from its log, whatever ended the turn", () => {
    for (const transcript of [ok, failed("auth", false), failed("server", true)]) {
      const again = mainAgain(at({ stage: "running" }), transcript, "the requirement")
      expect(again?.prompt).toBe(RESUME_PROMPT)
      expect(again?.note).toContain("the run was still at work (running)")
    }
  })

  test("a run that waits for the user or has ended is left to the exit code", () => {
    expect(mainAgain(at({ stage: "confirming", planSummary: "a plan" }), ok, "r")).toBeUndefined()
    expect(mainAgain(at({ stage: "running", paused: true }), ok, "r")).toBeUndefined()
  })

  test("a question while other tasks are at work: Main is started again to follow them; with --exit-on-question the exit code decides", async () => {
    const { apply, graphOf, started, steps, task } = await import("../scheduler/fixtures")
    const questioned = apply(
      started(graphOf(task("T-1"), task("T-2")), { concurrency: 2 }).state,
      steps.dispatched("T-1"),
      steps.dispatched("T-2"),
      { type: "worker.reported", taskId: "T-1", sessionId: "s-T-1-1", result: { taskId: "T-1", role: "executor", summary: "", blocked: { reason: "which API?" } } },
      { type: "consult.answered", taskId: "T-1", choice: "block", by: "architect", reason: "the user must pick" },
    ).state
    expect(questioned.questions.map((q) => q.questionId)).toEqual(["T-1:blocked:1"])
    expect(mainAgain(questioned, ok, "r")?.prompt).toBe(RESUME_PROMPT)
    expect(mainAgain(questioned, ok, "r", false, true)).toBeUndefined()
  })

  test("before any run: a failure waiting may cure gets the requirement again; one only a person fixes, or an engine that did not start, does not", () => {
    expect(mainAgain(undefined, failed("server", true), "the requirement")?.prompt).toBe("the requirement")
    expect(mainAgain(initialState(), failed("auth", false), "r")).toBeUndefined()
    expect(mainAgain(initialState(), failed("context-too-long", false), "r")).toBeUndefined()
    expect(mainAgain(initialState(), { errors: [], faults: [], exitCode: 1 }, "r")).toBeUndefined()
  })

  test("before any run: a turn that ended well but started nothing is told once which tool to call, then left to its exit", () => {
    const nudge = mainAgain(initialState(), ok, "Write docs/usage.md.")
    expect(nudge).toEqual({
      prompt: `Write docs/usage.md.\n\n${SUBMIT_NUDGE}`,
      note: "the main agent ended its turn without starting a run, so it was told once to call air_submit",
      nudge: true,
    })
    // The requirement stays first: what Main reads first, and what a scripted model matches on.
    expect(nudge!.prompt.startsWith("Write docs/usage.md.")).toBe(true)
    expect(SUBMIT_NUDGE).toContain("air_submit")
    expect(mainAgain(initialState(), ok, "Write docs/usage.md.", true)).toBeUndefined()
    // Nudged or not, a run at work is resumed and a provider's curable failure is tried again.
    expect(mainAgain(at({ stage: "running" }), ok, "r", true)?.prompt).toBe(RESUME_PROMPT)
    expect(mainAgain(undefined, failed("server", true), "r", true)?.prompt).toBe("r")
  })
})

describe("Main's failed turn, as the engine's JSON stream reports it", () => {
  test("is said in words, one line, with the class for the decision above; never the payload", () => {
    const error = { name: "APIError", data: { message: "Incorrect API key provided.", statusCode: 401, isRetryable: false, responseBody: '{"error":{"message":"Incorrect API key provided."}}' } }
    const out = parseEngineEvents([JSON.stringify({ type: "text", part: { text: "hello" } }), JSON.stringify({ type: "error", error })].join("\n"))
    expect(out.errors).toEqual(["the main agent's model request failed: the credentials were refused (Incorrect API key provided.)"])
    expect(out.faults).toEqual([{ class: "auth", retryable: false, message: "Incorrect API key provided." }])
    expect(parseEngineEvents(JSON.stringify({ type: "error", error }), "zh-CN").errors).toEqual(["主控的模型请求失败：凭据被拒绝（Incorrect API key provided.）"])
  })
})
