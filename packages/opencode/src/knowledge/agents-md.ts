import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { writeFileAtomicSync } from "../scheduler/runtime/store/atomic"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * What runs learn about a project (commands, conventions, pitfalls) in AGENTS.md's own section, between
 * two markers, so the person's own text is never touched. Each fact once (compared without case, spacing
 * or a trailing full stop); newest first; over `MAX_FACTS` or `MAX_CHARS`, the oldest are folded into
 * `.air/shared/knowledge/facts-archive.md` and the section says how many. Ten runs that learn the same
 * facts leave the file as it was.
 */
export namespace AgentsMd {
  export const START = "<!-- aircoding:learned:start -->"
  export const END = "<!-- aircoding:learned:end -->"
  export const HEADING = "## Learned by AirCoding runs"
  export const MAX_FACTS = 20
  export const MAX_CHARS = 3000
  export const KINDS = ["command", "convention", "pitfall"] as const
  export type Fact = { kind: (typeof KINDS)[number]; text: string }

  export function file(root: string): string {
    return join(root, "AGENTS.md")
  }

  export function archiveFile(root: string): string {
    return join(root, AirPaths.FACTS_ARCHIVE)
  }

  const key = (line: string) => line.replace(/^- /, "").toLowerCase().replace(/\s+/g, " ").replace(/[.。]\s*$/, "").trim()
  const lineOf = (fact: Fact) => `- ${fact.kind}: ${fact.text.replace(/\s+/g, " ").trim()}`

  /** The section's fact lines and the count folded before, from AGENTS.md's text. */
  export function parse(text: string): { facts: string[]; folded: number } {
    const start = text.indexOf(START)
    const end = text.indexOf(END)
    if (start < 0 || end < start) return { facts: [], folded: 0 }
    const body = text.slice(start + START.length, end).split("\n")
    const folded = Number(/^_(\d+) older facts? folded/.exec(body.find((l) => /^_\d+ older/.test(l)) ?? "")?.[1] ?? 0)
    return { facts: body.filter((l) => l.startsWith("- ")), folded }
  }

  /**
   * AGENTS.md's text with `learned` merged in, and the lines folded out of it. A fact already there stays
   * where it is (a repeat is no news); new facts go on top.
   */
  export function merge(text: string, learned: readonly Fact[]): { text: string; folded: string[]; changed: boolean } {
    const { facts, folded } = parse(text)
    const known = new Set(facts.map(key))
    const fresh: string[] = []
    for (const fact of learned) {
      const line = lineOf(fact)
      if (known.has(key(line))) continue
      known.add(key(line))
      fresh.push(line)
    }
    if (fresh.length === 0 && text.includes(START)) return { text, folded: [], changed: false }
    let kept = [...fresh, ...facts]
    const out: string[] = []
    while (kept.length > MAX_FACTS || (kept.length > 1 && kept.join("\n").length > MAX_CHARS)) out.unshift(kept.pop()!)
    const total = folded + out.length
    const section = [
      START,
      HEADING,
      "",
      "Facts AirCoding's runs learned about this project (each once; the oldest folded away). Edit or delete freely.",
      "",
      ...kept,
      ...(total > 0 ? ["", `_${total} older fact${total === 1 ? "" : "s"} folded into ${AirPaths.FACTS_ARCHIVE}_`] : []),
      END,
    ].join("\n")
    const start = text.indexOf(START)
    const end = text.indexOf(END)
    const next = start >= 0 && end > start ? text.slice(0, start) + section + text.slice(end + END.length) : `${text.trimEnd()}${text.trim() ? "\n\n" : ""}${section}\n`
    return { text: next, folded: out, changed: next !== text }
  }

  /** Merges `learned` into the project's AGENTS.md (created when absent); returns whether it changed. */
  export function learn(root: string, learned: readonly Fact[]): boolean {
    if (learned.length === 0) return false
    const path = file(root)
    const before = existsSync(path) ? readFileSync(path, "utf8") : ""
    const merged = merge(before, learned)
    if (!merged.changed) return false
    writeFileAtomicSync(path, merged.text, { backup: false })
    if (merged.folded.length > 0) {
      const archive = archiveFile(root)
      mkdirSync(dirname(archive), { recursive: true })
      const old = existsSync(archive) ? readFileSync(archive, "utf8") : "# Facts folded out of AGENTS.md\n\n"
      writeFileAtomicSync(archive, old + merged.folded.join("\n") + "\n", { backup: false })
    }
    return true
  }
}
