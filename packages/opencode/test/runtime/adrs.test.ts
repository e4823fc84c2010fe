import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { Adrs } from "../../src/scheduler/runtime/adrs"
import { apply, graphOf, started, task } from "../scheduler/fixtures"

/** The runtime's side of ADR edits: which files are new, which changed, against the hashes in the log. */
let root: string
afterEach(() => rmSync(root, { recursive: true, force: true }))

function project(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "air-adrs-"))
  mkdirSync(Adrs.dir(root), { recursive: true })
  for (const [name, text] of Object.entries(files)) writeFileSync(join(Adrs.dir(root), name), text)
  return root
}

const adr = (status: string, body: string) => `# ADR-1: ints\n\nStatus: ${status}\n\n${body}\n`
const running = () => started(graphOf(task("A", { adrRefs: ["ADR-1"] }))).state

describe("ADR files against the log", () => {
  test("an accepted ADR not in the log is to be recorded; a proposed one is not", () => {
    project({ "ADR-1.md": adr("accepted", "ints"), "ADR-2.md": "# ADR-2: x\n\nStatus: proposed\n" })
    expect(Adrs.changes(root, running()).map((c) => [c.type, c.adr, c.hash])).toEqual([["adr.recorded", "ADR-1", Adrs.hash(adr("accepted", "ints"))]])
  })

  test("a recorded ADR whose file changed is an edit, reported once while the Architect has not classified it", () => {
    project({ "ADR-1.md": adr("accepted", "longs") })
    const recorded = apply(running(), { type: "adr.recorded", adr: "ADR-1", hash: Adrs.hash(adr("accepted", "ints")) }).state
    const [edit] = Adrs.changes(root, recorded)
    expect(edit).toMatchObject({ type: "adr.edited", adr: "ADR-1", hash: Adrs.hash(adr("accepted", "longs")) })
    const waiting = apply(recorded, { type: "adr.edited", adr: "ADR-1", hash: edit!.hash }).state
    expect(Adrs.changes(root, waiting)).toEqual([])
    expect(Adrs.textWithHash(root, "ADR-1", edit!.hash)).toContain("longs")
    expect(Adrs.textWithHash(root, "ADR-1", "0000")).toBeNull()
  })

  test("an unchanged file, or a plan not running yet, says nothing", () => {
    project({ "ADR-1.md": adr("accepted", "ints") })
    expect(Adrs.changes(root, apply(running(), { type: "adr.recorded", adr: "ADR-1", hash: Adrs.hash(adr("accepted", "ints")) }).state)).toEqual([])
    const planning = apply(started(graphOf(task("A"))).state).state
    expect(Adrs.changes(root, { ...planning, stage: "planning", graph: null })).toEqual([])
  })
})
