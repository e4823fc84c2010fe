import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, test } from "vitest"
import { CompactionGuard } from "../../src/scheduler/runtime/sessions/compaction-guard"

/**
 * Issue 38, item 4: the guard reads the engine's messages as they come from the API (a compaction is a user
 * message with a `compaction` part and an assistant message with `summary: true`), and decides from the check.
 */
const user = (id: string, text: string) => ({ info: { id, role: "user" }, parts: [{ type: "text", text }] })
const tool = (id: string, input: unknown, output: string) => ({
  info: { id, role: "assistant", finish: "tool-calls" },
  parts: [{ type: "tool", tool: "edit", state: { status: "completed", input, output } }],
})
const asked = (id: string) => ({ info: { id, role: "user" }, parts: [{ type: "compaction", auto: true }] })
const summary = (id: string, parentID: string, text: string) => ({ info: { id, role: "assistant", parentID, summary: true, finish: "stop" }, parts: [{ type: "text", text }] })

const conversation = [
  user("m1", "Fix src/a.cpp and src/b.cpp per ADR-4 for T-2."),
  tool("m2", { filePath: "src/c.cpp" }, "Edit applied."),
  asked("m3"),
  summary("m4", "m3", "We fixed the sources."),
  user("m5", "Continue if you have next steps"),
]

describe("the engine's messages", () => {
  test("the latest summary and the conversation before it, tool inputs included", () => {
    const c = CompactionGuard.latest(conversation)!
    expect(c.summaryId).toBe("m4")
    expect(c.summary).toBe("We fixed the sources.")
    expect(c.original).toContain("src/a.cpp")
    expect(c.original).toContain('"filePath":"src/c.cpp"')
    expect(c.original).not.toContain("We fixed the sources.")
  })

  test("no compaction yet, or one still being written: nothing to check", () => {
    expect(CompactionGuard.latest(conversation.slice(0, 3))).toBeUndefined()
    const writing = { ...summary("m4", "m3", "We"), info: { id: "m4", role: "assistant", parentID: "m3", summary: true } }
    expect(CompactionGuard.latest([...conversation.slice(0, 3), writing])).toBeUndefined()
  })
})

describe("the decision", () => {
  const c = CompactionGuard.latest(conversation)!
  test("a summary that keeps everything is kept, and nothing is redone", async () => {
    let redone = 0
    const keeping = { ...c, summary: "Fixed src/a.cpp, src/b.cpp, src/c.cpp (ADR-4, T-2)." }
    const o = await CompactionGuard.decide(keeping, async () => String(++redone))
    expect(redone).toBe(0)
    expect(o.event.outcome).toBe("kept")
    expect(o.appended).toBeUndefined()
  })

  test("a lossy summary is redone with a prompt naming what it lost; a faithful retry stands", async () => {
    const prompts: string[] = []
    const o = await CompactionGuard.decide(c, async (p) => (prompts.push(p), "Fixed src/a.cpp, src/b.cpp and src/c.cpp under ADR-4 for T-2."))
    expect(prompts).toHaveLength(1)
    for (const item of ["- src/a.cpp", "- src/b.cpp", "- src/c.cpp", "- ADR-4", "- T-2"]) expect(prompts[0]).toContain(item)
    expect(o.event).toMatchObject({ outcome: "retried", attempts: 2, appended: [] })
    expect(o.appended).toContain("Fixed src/a.cpp")
  })

  test("a retry that loses them again (or fails) is repaired from the record", async () => {
    for (const redo of [async () => "We fixed things.", async () => Promise.reject(new Error("provider down"))]) {
      const o = await CompactionGuard.decide(c, redo)
      expect(o.event).toMatchObject({ outcome: "repaired", attempts: 2 })
      expect(o.event.appended).toEqual(["src/a.cpp", "src/b.cpp", "src/c.cpp", "ADR-4", "T-2"])
      expect(o.event.counts.path).toEqual({ kept: 0, lost: 3 })
      for (const item of o.event.appended) expect(o.appended).toContain(item)
    }
  })
})

describe("what the engine would send now", () => {
  test("the latest summary and what followed, never what it replaced", () => {
    const now = CompactionGuard.sinceLastSummary(conversation)
    expect(now).toContain("We fixed the sources.")
    expect(now).toContain("Continue if you have next steps")
    expect(now).not.toContain("src/a.cpp")
    expect(CompactionGuard.sinceLastSummary(conversation.slice(0, 2))).toContain("src/a.cpp")
  })
})

describe("the checked summary is sent after the engine's, also by an engine started again", () => {
  test("read from the file kept beside the run, for the summary it names only", () => {
    const dir = mkdtempSync(join(tmpdir(), "air-compaction-"))
    try {
      writeFileSync(join(dir, "ses_a.json"), JSON.stringify({ summaryId: "m4", text: "Kept from the conversation: src/a.cpp" }))
      CompactionGuard.keepIn(dir)
      const sent = [
        { info: { id: "m4", sessionID: "ses_a" }, parts: [{ type: "text", text: "We fixed the sources." }] as unknown[] },
        { info: { id: "m5", sessionID: "ses_a" }, parts: [] as unknown[] },
        { info: { id: "m4", sessionID: "ses_b" }, parts: [] as unknown[] },
      ]
      CompactionGuard.transform(sent)
      expect(sent[0]!.parts).toHaveLength(2)
      expect(sent[0]!.parts[1]).toMatchObject({ type: "text", text: "Kept from the conversation: src/a.cpp", synthetic: true })
      expect(sent[1]!.parts).toEqual([])
      expect(sent[2]!.parts).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
