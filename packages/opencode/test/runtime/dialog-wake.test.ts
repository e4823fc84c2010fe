import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"

/**
 * The Orchestrator's own rule (issue 39 item 2): what the user did in the TUI's dialog is news for Main that
 * goes at once, not held until the next wake (in the demo that was the run's end, a minute later).
 */
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe("a dialog confirmation in the TUI", () => {
  it("wakes an idle Main with it at once", async () => {
    process.env.AIRCODING_INTERACTIVE = "1"
    const { Orchestrators } = await import("../../src/scheduler/runtime/orchestrator")
    const root = mkdtempSync(join(tmpdir(), "air-dialog-wake-"))
    dirs.push(root)
    const sent: string[] = []
    const client = { session: { promptAsync: async (req: { body: { parts: { text: string }[] } }) => (sent.push(req.body.parts[0]!.text), {}) } }
    Orchestrators.attach(root, client as never)
    const orchestrator = Orchestrators.forRoot(root)
    orchestrator.noteMain("main-1")
    orchestrator.sessionStatus("main-1", false)
    orchestrator.heardFromTui({ verb: "confirm" })
    await Promise.resolve()
    expect(sent).toHaveLength(1)
    expect(sent[0]).toContain("confirmed the plan in AirCoding's dialog")
  })
})
