import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { Roles } from "../../src/agent/roles"
import { TASK_KINDS } from "../../src/scheduler/core/task.schema"
import { GATE_IDS } from "../../src/scheduler/runtime/gates/registry"

/**
 * The READMEs' examples name gates, tools and task kinds the way the code spells them: a README that names a gate
 * id no gate declares (`id: "secret-scan"` beside the shipped `secrets`), a tool no role has, or a task kind the plan
 * refuses teaches the reader, and the model that reads it, a name that does not work.
 */
const ROOT = fileURLToPath(new URL("../../../../", import.meta.url))
const SRC = join(ROOT, "packages/opencode/src")

function readmes(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...readmes(path))
    else if (name === "README.md") out.push(path)
  }
  return out
}

/** Words that stand before "gate" without naming one: "the failed gate", "the last gate". */
const NOT_IDS = new Set(["failed", "failing", "last", "first", "next", "same", "one", "each", "every", "new", "a", "whole"])

/** The names a README text gives that the code does not know, as `<what> <name>`. */
function unknownNames(text: string): string[] {
  const out = new Set<string>()
  const gates = new Set<string>(GATE_IDS)
  const gate = (id: string) => {
    if (!gates.has(id) && !NOT_IDS.has(id)) out.add(`gate ${id}`)
  }
  for (const m of text.matchAll(/`([a-z][a-z0-9-]*)` gates?\b/g)) gate(m[1]!)
  for (const m of text.matchAll(/\bthe ([a-z][a-z0-9-]*) gate\b/g)) gate(m[1]!)
  // The catalogue's key `gate.<id>`, not a file (gate.ts, backend-gate.ts).
  for (const m of text.matchAll(/(?<![\w-])gate\.(?!ts\b)([a-z][a-z0-9-]*)/g)) gate(m[1]!)
  // A gate in a code example: `id: "…"` beside a `route:`, the two facts every gate declares.
  for (const m of text.matchAll(/\bid: "([^"]+)",[^\n]*\n(?:[^\n]*\n){0,3}?\s*(?:\/\/\s*)?route: "/g)) gate(m[1]!)
  const tools = new Set<string>(Roles.AIR_TOOLS)
  for (const m of text.matchAll(/\bair_[a-z_]+\b/g)) if (!tools.has(m[0])) out.add(`tool ${m[0]}`)
  // A task in a JSON example: a line with its "kind" and its "doneWhen" (notifiers have kinds of their own).
  const kinds = new Set<string>(TASK_KINDS)
  for (const line of text.split("\n")) {
    if (!line.includes('"doneWhen"')) continue
    for (const m of line.matchAll(/"kind":\s*"([^"]+)"/g)) if (!kinds.has(m[1]!)) out.add(`task kind ${m[1]}`)
  }
  return [...out]
}

describe("the READMEs name gates, tools and task kinds as the code does", () => {
  const files = [join(ROOT, "README.md"), ...readmes(SRC)]

  it("finds the READMEs and the names in them", () => {
    expect(files.length).toBeGreaterThan(5)
    const all = files.map((file) => readFileSync(file, "utf8")).join("\n")
    expect(all).toMatch(/`service-probe` gate/)
    expect(all).toMatch(/id: "secrets"/)
    expect(all).toMatch(/"kind": "ui"/)
  })

  for (const file of files)
    it(relative(ROOT, file), () => {
      expect(unknownNames(readFileSync(file, "utf8"))).toEqual([])
    })

  it("fails on a planted name: a gate, a tool and a task kind the code does not have", () => {
    const planted = [
      "export const secretScan = {",
      '  id: "secret-scan",                 // spelled here only',
      '  route: "user",',
      "}",
      "The `coverage` gate runs after the lint gate; its words are `gate.coverage`.",
      "The executor calls `air_finish` when done.",
      '{ "id": "T-9", "kind": "feature", "title": "x", "doneWhen": "y" }',
      "The failed gate's log; the write-set gate; `air_report`; the `ui-capture` gate.",
    ].join("\n")
    expect(unknownNames(planted).sort()).toEqual(["gate coverage", "gate lint", "gate secret-scan", "task kind feature", "tool air_finish"])
  })
})
