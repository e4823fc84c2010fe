import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { AgentsMd } from "../../src/knowledge/agents-md"

/** AGENTS.md keeps what runs learn in its own section: each fact once, bounded, the person's text untouched. */
const base = mkdtempSync(join(tmpdir(), "air-agents-md-"))
afterAll(() => rmSync(base, { recursive: true, force: true }))

const facts: AgentsMd.Fact[] = [
  { kind: "command", text: "cmake --build .air-build -j 2 builds everything; ctest --test-dir .air-build runs the tests" },
  { kind: "convention", text: "headers live in include/, one class per file" },
  { kind: "pitfall", text: "calc_test fails when sub() adds: check the sign first." },
]

describe("AGENTS.md's learned section", () => {
  test("ten runs that learn the same facts: the section is written once and does not grow", () => {
    const root = join(base, "ten")
    mkdirSync(root)
    const own = "# My project\n\nHand-written rules stay as they are.\n"
    writeFileSync(AgentsMd.file(root), own)
    const sizes: number[] = []
    for (let run = 0; run < 10; run++) {
      // The same facts, worded with other spacing and case now and then.
      AgentsMd.learn(root, run % 2 ? facts.map((f) => ({ ...f, text: `  ${f.text.toUpperCase()}  ` })) : facts)
      sizes.push(readFileSync(AgentsMd.file(root), "utf8").length)
    }
    expect(new Set(sizes).size).toBe(1)
    const text = readFileSync(AgentsMd.file(root), "utf8")
    expect(text.startsWith(own)).toBe(true)
    expect(AgentsMd.parse(text).facts).toHaveLength(3)
    expect(text.split(AgentsMd.START)).toHaveLength(2)
  })

  test("over the limit, the oldest facts are folded into the archive and the section says how many", () => {
    const root = join(base, "many")
    mkdirSync(root)
    for (let run = 0; run < AgentsMd.MAX_FACTS + 5; run++) AgentsMd.learn(root, [{ kind: "pitfall", text: `pitfall number ${run}` }])
    const text = readFileSync(AgentsMd.file(root), "utf8")
    const { facts: kept, folded } = AgentsMd.parse(text)
    expect(kept).toHaveLength(AgentsMd.MAX_FACTS)
    expect(kept[0]).toBe(`- pitfall: pitfall number ${AgentsMd.MAX_FACTS + 4}`)
    expect(folded).toBe(5)
    expect(existsSync(AgentsMd.archiveFile(root))).toBe(true)
    expect(readFileSync(AgentsMd.archiveFile(root), "utf8")).toContain("- pitfall: pitfall number 0")
    // A fact folded away and learned again comes back once, on top; the section stays within its limit.
    AgentsMd.learn(root, [{ kind: "pitfall", text: "pitfall number 0" }])
    expect(AgentsMd.parse(readFileSync(AgentsMd.file(root), "utf8")).facts).toHaveLength(AgentsMd.MAX_FACTS)
  })
})
