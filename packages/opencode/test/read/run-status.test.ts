import { describe, expect, test } from "vitest"
import { exitCodeOf, headlessEnd, RUN_WORDS, runStatus, runWord } from "../../src/text/run-status"
import { RunView } from "../../src/read/view"
import { ViewText } from "../../src/read/view-text"
import { ViewRender } from "../../src/read/view-render"
import { isRefused, transition } from "../../src/scheduler/core/machine"
import { RunReport } from "../../src/scheduler/runtime/report/run-report"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import type { Event } from "../../src/scheduler/core/event.schema"
import { recordedEvents } from "../fixtures/recorded-run/generate"
import { FIXTURE } from "../cli-view/helpers"

function apply(state: SchedulerState, event: Event): SchedulerState {
  const result = transition(state, event)
  if (isRefused(result)) throw new Error(result.refused)
  return result.state
}

describe("one derivation of run status", () => {
  test("the recorded run's words, step by step: planning → waiting (confirm) → planning (graph) → running → done", () => {
    const { events, states } = recordedEvents()
    const at = (type: string) => states[events.findIndex((e) => e.type === type)]!
    expect(runWord(initialState())).toBe("idle")
    expect(runWord(at("run.started"))).toBe("planning")
    expect(runStatus(at("plan.proposed"))).toMatchObject({ word: "waiting", stage: "confirming", needsUser: true, waitingFor: [{ kind: "confirm" }] })
    expect(runWord(at("plan.confirmed"))).toBe("planning")
    expect(runWord(at("graph.accepted"))).toBe("running")
    expect(runStatus(states[states.length - 1]!)).toMatchObject({ word: "done", needsUser: false, waitingFor: [{ kind: "nothing" }], tasks: { total: 3, merged: 3, blocked: 0 } })
  })

  test("status, air_status, the dashboard and the run summary say the same word at every step", () => {
    const { states } = recordedEvents()
    for (const state of states) {
      const word = runWord(state)
      expect(RUN_WORDS).toContain(word)
      expect(RunView.build({ state }).status).toBe(word)
      expect(RunReport.summary(FIXTURE, state).status).toBe(word)
    }
  })

  test("a paused run is paused; a question makes a live run wait; a run that ended blocked stays blocked, its question first", () => {
    const { events, states } = recordedEvents()
    const running = states[events.findIndex((e) => e.type === "task.dispatched")]!
    const paused = apply(running, { type: "run.paused", at: "2026-11-29T09:01:30.000Z" } as Event)
    expect(runWord(paused)).toBe("paused")
    expect(runStatus(paused).waitingFor.map((w) => w.kind)).toContain("paused")
    // One word, said once: never "paused (stage: running)" nor "paused — paused".
    expect(ViewRender.render(paused, "en").split("\n")[0]).toBe("Run run-20261129-0900 — paused")
    expect(ViewRender.render(paused, "zh-CN").split("\n")[0]).toBe("运行 run-20261129-0900 — 已暂停")
    // A worker's "blocked" reaches the Architect first; the Architect's "block" asks the user.
    const consulted = apply(running, {
      type: "worker.reported",
      at: "2026-11-29T09:02:10.000Z",
      taskId: "T-1",
      sessionId: "ses_t1_exec1",
      result: { taskId: "T-1", role: "executor", summary: "", blocked: { reason: "unary minus?" } },
    } as Event)
    expect(consulted.questions.length).toBe(0)
    const blocked = apply(consulted, { type: "consult.answered", at: "2026-11-29T09:02:20.000Z", taskId: "T-1", choice: "block", by: "architect", reason: "the user decides" } as Event)
    expect(blocked.questions.length).toBe(1)
    // Every task of the recorded run hangs on T-1, so the run ended blocked with the question open.
    expect(blocked.finished).toEqual({ status: "blocked" })
    expect(runStatus(blocked)).toMatchObject({ word: "blocked", needsUser: true })
    expect(runStatus(blocked).waitingFor[0]).toMatchObject({ kind: "question", taskId: "T-1" })
    // The same question while the run still goes on: waiting.
    const live = { ...blocked, stage: "running" as const, finished: null }
    expect(runStatus(live)).toMatchObject({ word: "waiting", needsUser: true })
  })

  test("exit codes from the state: done with its final check 0; waiting, blocked and paused 2; an unsettled run or a failed final check 1", () => {
    const { events, states } = recordedEvents()
    const at = (type: string) => states[events.findIndex((e) => e.type === type)]!
    const last = states[states.length - 1]!
    const passed = { ...last, finalCheck: { status: "passed" as const, message: "ok" } }
    // No run: 0 when the engine ended well (Main answered a question), 1 when it failed.
    expect(exitCodeOf(undefined)).toBe(0)
    expect(exitCodeOf(initialState(), { engineFailed: true })).toBe(1)
    expect(exitCodeOf(at("run.started"))).toBe(1)
    expect(exitCodeOf(at("graph.accepted"))).toBe(1)
    // A headless run stopped at the plan's confirmation exits 2, as the README promises.
    expect(exitCodeOf(at("plan.proposed"))).toBe(2)
    expect(exitCodeOf(apply(at("task.dispatched"), { type: "run.paused", at: "2026-11-29T09:01:30.000Z" } as Event))).toBe(2)
    // Done counts only with the final check passed; Main's engine failing afterwards changes nothing.
    expect(exitCodeOf(passed, { engineFailed: true })).toBe(0)
    expect(exitCodeOf({ ...last, finalCheck: { status: "failed", message: "ctest: 1 failed" } })).toBe(1)
    expect(exitCodeOf({ ...last, finalCheck: null })).toBe(1)
    expect(exitCodeOf({ ...last, finalCheck: null }, { final: { passed: true } })).toBe(0)
    expect(exitCodeOf({ ...last, finished: { status: "blocked" } })).toBe(2)
  })

  test("a headless process ends when the run waits for the user, or once it finished and its final check is recorded", () => {
    const { events, states } = recordedEvents()
    const at = (type: string) => states[events.findIndex((e) => e.type === type)]!
    const last = states[states.length - 1]!
    expect(headlessEnd(initialState())).toBeUndefined()
    expect(headlessEnd(at("run.started"))).toBeUndefined()
    expect(headlessEnd(at("plan.proposed"))).toBe("waits")
    expect(headlessEnd(at("graph.accepted"))).toBeUndefined()
    // A question while tasks are at work stops only what waits on it (issue 39 item 8); --exit-on-question stops at it.
    const asked = { ...at("graph.accepted"), questions: [{ questionId: "T-9:blocked:1", taskId: null, text: "which API?" }] }
    expect(headlessEnd(asked)).toBeUndefined()
    expect(headlessEnd(asked, { exitOnQuestion: true })).toBe("waits")
    expect(headlessEnd({ ...last, finalCheck: null })).toBeUndefined()
    expect(headlessEnd({ ...last, finalCheck: { status: "passed", message: "ok" } })).toBe("ended")
  })
})

describe("the headline, for the TUI and toasts", () => {
  test("says the word and what the run waits for first, in either language", () => {
    const { events, states } = recordedEvents()
    const confirming = states[events.findIndex((e) => e.type === "plan.proposed")]!
    expect(ViewText.headline(confirming, "en")).toMatch(/^waiting — waiting for your confirmation of the plan: Three tasks/)
    expect(ViewText.headline(confirming, "zh-CN")).toMatch(/^等待中 — 正在等待你对计划的确认：Three tasks/)
    expect(ViewText.headline(states[states.length - 1]!, "en")).toBe("done")
  })

  test("a run taking its baseline waits for it (not for a free slot); a failed one waits for the user's answer", async () => {
    const { started, apply: applyAll, graphOf, task } = await import("../scheduler/fixtures")
    const running = started(graphOf(task("T-1")), { baseline: true }).state
    expect(runStatus(running)).toMatchObject({ word: "running", waitingFor: [{ kind: "baseline" }] })
    expect(ViewText.waitingText("en", { kind: "baseline" })).toMatch(/integration branch is built and tested/)
    expect(ViewText.waitingText("zh-CN", { kind: "baseline" })).toMatch(/基线/)
    const failed = applyAll(running, { type: "baseline.done", commit: "c0ffee", status: "failed", failingTests: ["old"], message: "ctest failed" }).state
    expect(runStatus(failed)).toMatchObject({ word: "waiting", needsUser: true, waitingFor: [{ kind: "question", questionId: "baseline:1:question" }] })
  })
})
