import { describe, expect, it, vi } from "vitest"
import { MainWake } from "../../src/scheduler/runtime/sessions/main-wake"
import { Inbox } from "../../src/scheduler/runtime/sessions/inbox"

function setup(target: string | null = "main-1") {
  const inbox = new Inbox()
  const sent: { id: string; text: string }[] = []
  let who = target ?? undefined
  const wake = new MainWake(() => who, () => inbox.take(), async (id, text) => void sent.push({ id, text }))
  inbox.onAttention = () => wake.poke()
  return { inbox, wake, sent, setTarget: (id: string) => (who = id) }
}

describe("waking Main in the TUI", () => {
  it("writes what needs the user into Main's session at once when it is idle, progress included", () => {
    const { inbox, sent } = setup()
    inbox.push("T-1 merged")
    expect(sent).toEqual([])
    inbox.push("PLAN PROPOSED — v1", true)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.id).toBe("main-1")
    expect(sent[0]!.text).toContain("T-1 merged")
    expect(sent[0]!.text).toContain("PLAN PROPOSED — v1")
    expect(inbox.take()).toEqual([])
  })

  it("waits for Main's turn to end, then sends everything queued in one message", () => {
    const { inbox, wake, sent } = setup()
    wake.status("main-1", true)
    inbox.push("QUESTION q1", true)
    inbox.push("MILESTONE phase 1: pass", true)
    expect(sent).toEqual([])
    wake.status("other-session", false)
    expect(sent).toEqual([])
    wake.status("main-1", false)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.text).toMatch(/QUESTION q1[\s\S]*MILESTONE phase 1/)
    wake.status("main-1", false)
    expect(sent).toHaveLength(1)
  })

  it("keeps the news while no Main session is known, and gives it to the first one that speaks", () => {
    const { inbox, wake, sent, setTarget } = setup(null)
    inbox.push("RUN ENDED: done.", true)
    expect(sent).toEqual([])
    setTarget("main-2")
    wake.status("main-2", true)
    wake.status("main-2", false)
    expect(sent.map((s) => s.id)).toEqual(["main-2"])
    expect(sent[0]!.text).toContain("RUN ENDED: done.")
  })

  it("never wakes Main while it waits in air_listen (headless): the waiting listen gets the news", async () => {
    const { inbox, sent } = setup()
    const listening = inbox.drain(60_000)
    inbox.push("PLAN PROPOSED", true)
    expect(await listening).toEqual(["PLAN PROPOSED"])
    expect(sent).toEqual([])
  })
  it("never drops news the engine did not take: it goes again, first, after a pause or with the next wake", async () => {
    vi.useFakeTimers()
    try {
      const inbox = new Inbox()
      const sent: string[] = []
      let refuse = 2
      const wake = new MainWake(
        () => "main-1",
        () => inbox.take(),
        async (_id, text) => {
          if (refuse-- > 0) throw new Error("busy")
          sent.push(text)
        },
        1_000,
      )
      inbox.onAttention = () => wake.poke()
      inbox.push("PLAN PROPOSED — v1", true)
      await vi.advanceTimersByTimeAsync(0)
      expect(wake.undelivered()).toEqual(["PLAN PROPOSED — v1"])
      inbox.push("QUESTION q1", true) // refused too: both kept, in order
      await vi.advanceTimersByTimeAsync(0)
      expect(wake.undelivered()).toEqual(["PLAN PROPOSED — v1", "QUESTION q1"])
      expect(sent).toEqual([])
      await vi.advanceTimersByTimeAsync(1_000) // the pause after the first refusal
      expect(sent).toHaveLength(1)
      expect(sent[0]).toMatch(/PLAN PROPOSED — v1[\s\S]*QUESTION q1/)
      expect(wake.undelivered()).toEqual([])
    } finally {
      vi.useRealTimers()
    }
  })
})

describe("news from the TUI's dialog reaches Main as it happens (issue 39 item 2)", () => {
  it("a dialog confirmation wakes an idle Main at once, before the run's end, in its own message", () => {
    const { inbox, sent } = setup()
    // What Orchestrator.heardFromTui pushes: with attention, so it is not held for the next wake.
    inbox.push("The user confirmed the plan in AirCoding's dialog (not in this chat)", true)
    expect(sent).toHaveLength(1)
    expect(sent[0]!.text).toContain("confirmed the plan in AirCoding's dialog")
    inbox.push("RUN ENDED: done.", true)
    expect(sent).toHaveLength(2)
    expect(sent[1]!.text).toContain("RUN ENDED")
    expect(sent[1]!.text).not.toContain("confirmed the plan")
  })

  it("news queued while Main is busy goes when its turn ends, not with a later wake", () => {
    const { inbox, wake, sent } = setup()
    wake.status("main-1", true)
    inbox.push("The user confirmed the plan in AirCoding's dialog", true)
    wake.status("main-1", false)
    expect(sent.map((s) => s.text.includes("confirmed the plan"))).toEqual([true])
    wake.status("main-1", true)
    inbox.push("RUN ENDED: done.", true)
    wake.status("main-1", false)
    expect(sent).toHaveLength(2)
    expect(sent[1]!.text).not.toContain("confirmed the plan")
  })
})
