import { describe, expect, test } from "vitest"
import { TuiBridge } from "../../src/tui/bridge"
import { Inbox } from "../../src/scheduler/runtime/sessions/inbox"

/** The TUI → Scheduler channel: a bus command `aircoding:<json>` the server plugin carries out. */
function recorder(reply = "ok") {
  const calls: string[] = []
  const scheduler: TuiBridge.Scheduler = {
    confirm: async (notes) => (calls.push(`confirm ${notes ?? ""}`.trim()), reply),
    change: async (text) => (calls.push(`change ${text}`), reply),
    answer: async (q, a) => (calls.push(`answer ${q} ${a}`), reply),
    pause: async () => (calls.push("pause"), reply),
    resumeRun: async () => (calls.push("resume"), reply),
    heardFromTui: (r) => void calls.push(`heard ${r.verb}`),
  }
  return { calls, scheduler }
}

const bus = (command: unknown) => ({ type: "tui.command.execute", properties: { command } })

describe("TuiBridge", () => {
  test("every request survives the trip through a bus command", () => {
    const requests: TuiBridge.Request[] = [
      { verb: "confirm" },
      { verb: "confirm", notes: "go" },
      { verb: "change", text: "use int64 — 用 64 位" },
      { verb: "answer", questionId: "Q-1", answer: "round down" },
      { verb: "pause" },
      { verb: "resume" },
    ]
    for (const r of requests) expect(TuiBridge.decode(TuiBridge.encode(r))).toEqual(r)
  })

  test("commands that are not ours, or malformed, are left alone", () => {
    for (const c of ["session.new", "aircoding:", "aircoding:{", 'aircoding:{"verb":"delete"}', 'aircoding:{"verb":"change","text":""}', 42, undefined])
      expect(TuiBridge.decode(c)).toBeUndefined()
    expect(() => TuiBridge.encode({ verb: "answer", questionId: "", answer: "x" })).toThrow()
  })

  test("the server side carries the request out on the Scheduler and says nothing when it worked", async () => {
    const { calls, scheduler } = recorder("Run paused: tasks in flight finish.")
    const toasts: string[] = []
    for (const r of [{ verb: "pause" }, { verb: "answer", questionId: "Q-2", answer: "yes" }, { verb: "change", text: "add div" }] as TuiBridge.Request[])
      await TuiBridge.onBusEvent(bus(TuiBridge.encode(r)), () => scheduler, () => "en", async (m) => toasts.push(m))
    await TuiBridge.onBusEvent({ type: "session.idle", properties: {} }, () => scheduler, () => "en", async (m) => toasts.push(m))
    await TuiBridge.onBusEvent(bus("session.new"), () => scheduler, () => "en", async (m) => toasts.push(m))
    // After each success Main's news is brought in line with what the user did (heardFromTui).
    expect(calls).toEqual(["pause", "heard pause", "answer Q-2 yes", "heard answer", "change add div", "heard change"])
    expect(toasts).toEqual([])
  })

  test("a refusal or a throw comes back as an error toast in the user's language", async () => {
    const toasts: [string, string][] = []
    const { scheduler } = recorder("Cannot resume: the run is not paused")
    await TuiBridge.onBusEvent(bus(TuiBridge.encode({ verb: "resume" })), () => scheduler, () => "zh-CN", async (m, v) => toasts.push([m, v]))
    const broken = () => {
      throw new Error("no project")
    }
    await TuiBridge.onBusEvent(bus(TuiBridge.encode({ verb: "confirm" })), broken, () => "en", async (m, v) => toasts.push([m, v]))
    expect(toasts).toEqual([
      ["AirCoding 拒绝了请求：Cannot resume: the run is not paused", "error"],
      ["AirCoding refused: Error: no project", "error"],
    ])
  })

  test("a refused request tells Main nothing; Main's queued proposal goes once the user confirmed in the dialog", async () => {
    const { calls, scheduler } = recorder("Nothing to confirm: no plan waits for confirmation (stage: running)")
    await TuiBridge.onBusEvent(bus(TuiBridge.encode({ verb: "confirm" })), () => scheduler, () => "en", async () => undefined)
    expect(calls).toEqual(["confirm"])
    const inbox = new Inbox()
    inbox.push("task T-1 merged")
    inbox.push("PLAN PROPOSED — show the user this plan", true)
    inbox.push("QUESTION Q-1 — ask the user", true)
    expect(inbox.drop((text) => text.startsWith("PLAN PROPOSED"))).toBe(1)
    expect(inbox.take()).toEqual(["task T-1 merged", "QUESTION Q-1 — ask the user"])
  })
})
