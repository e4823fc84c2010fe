import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { SchedulerState } from "../core/state"
import { writeFileAtomic } from "./store/atomic"
import { AirPaths } from "../core/air-paths"

/**
 * The decisions recorded under .air/shared/plan/adr. An accepted ADR's content hash goes into the event log
 * (`adr.recorded`); a file that no longer matches it was edited, by a person or an agent (`adr.edited`),
 * and the Architect classifies the edit. The text as last accepted is kept in .air/local/adr-accepted, so
 * the Architect sees what changed.
 */
export namespace Adrs {
  export type File = { id: string; text: string; hash: string; accepted: boolean }

  export function dir(root: string): string {
    return AirPaths.adrs(root)
  }

  /** "ADR-1: title (status)", one line each, in id order. */
  export function list(root: string): string[] {
    return files(root).map((f) => {
      const title = /^# (.+)$/m.exec(f.text)?.[1] ?? f.id
      const status = /^Status: (\S+)/m.exec(f.text)?.[1]
      return status ? `${title} (${status})` : title
    })
  }

  export function files(root: string): File[] {
    const d = dir(root)
    if (!existsSync(d)) return []
    const names = readdirSync(d).filter((f) => /^ADR-\d+\.md$/.test(f))
    names.sort((a, b) => Number(a.slice(4, -3)) - Number(b.slice(4, -3)))
    return names.map((name) => {
      const text = readFileSync(join(d, name), "utf8")
      return { id: name.slice(0, -3), text, hash: hash(text), accepted: /^Status:\s*accepted\b/im.test(text) }
    })
  }

  export function hash(text: string): string {
    return createHash("sha256").update(text).digest("hex").slice(0, 16)
  }

  /**
   * What the files say against the log: accepted ADRs not recorded yet, and recorded ones whose file
   * changed (one edit per ADR waits for the Architect at a time). Only while a task graph runs: before it,
   * rewriting the ADRs is planning.
   */
  export function changes(root: string, state: SchedulerState | undefined): { type: "adr.recorded" | "adr.edited"; adr: string; hash: string; text: string }[] {
    if (!state?.graph || (state.stage !== "running" && state.stage !== "milestone")) return []
    const out: { type: "adr.recorded" | "adr.edited"; adr: string; hash: string; text: string }[] = []
    for (const f of files(root)) {
      const recorded = state.adrs[f.id]
      if (recorded === undefined) {
        if (f.accepted) out.push({ type: "adr.recorded", adr: f.id, hash: f.hash, text: f.text })
      } else if (recorded !== f.hash && !state.adrEdits.some((e) => e.adr === f.id)) out.push({ type: "adr.edited", adr: f.id, hash: f.hash, text: f.text })
    }
    return out
  }

  function keptFile(root: string, id: string): string {
    return AirPaths.adrAccepted(root, `${id}.md`)
  }

  /** The text of the ADR as last accepted (recorded, or classified after an edit). */
  export function kept(root: string, id: string): string | null {
    const file = keptFile(root, id)
    return existsSync(file) ? readFileSync(file, "utf8") : null
  }

  export function keep(root: string, id: string, text: string): Promise<void> {
    return writeFileAtomic(keptFile(root, id), text)
  }

  /** The current file's text if its hash is `hash` (the edit the Architect classified), else null. */
  export function textWithHash(root: string, id: string, want: string): string | null {
    const file = join(dir(root), `${id}.md`)
    if (!existsSync(file)) return null
    const text = readFileSync(file, "utf8")
    return hash(text) === want ? text : null
  }
}
