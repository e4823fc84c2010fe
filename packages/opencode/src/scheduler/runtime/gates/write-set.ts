import type { Gate, GateContext, GateOutcome, WriteSetEntry } from "./gate.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * The write-set gate, as a pure function: a task's diff may change only the files its write-set lets it
 * change, and delete only those it says it deletes (design 002 P1-24; the V1 incident that deleted src/).
 * A wider write-set is asked for through a consult, which the Architect answers with a plan delta.
 */
export namespace WriteSetGate {
  export type Action = WriteSetEntry["action"]
  export type Entry = WriteSetEntry
  export type Why = "outside" | "kept" | "deleted" | "deploy-rules"

  /**
   * The deploy targets decide what reaches the user's machines: a task may change them only when its
   * write-set names the file itself (not a folder or a pattern that happens to cover it), in a plan the
   * user confirmed.
   */
  export const DEPLOY_RULES = AirPaths.DEPLOY_RULES

  export function deployRulesViolations(changed: readonly string[], writeSet: readonly Entry[] | undefined): Violation[] {
    if (!changed.map(normal).includes(DEPLOY_RULES)) return []
    const declared = (writeSet ?? []).some((e) => normal(e.path) === DEPLOY_RULES && e.action !== "keep")
    return declared ? [] : [{ path: DEPLOY_RULES, why: "deploy-rules" }]
  }
  export type Violation = { path: string; why: Why }

  function normal(p: string): string {
    return p.replace(/\\/g, "/").replace(/^\.\//, "").replace(/\/+/g, "/")
  }

  /** An entry names one file, a directory (`src/parser/`), or a pattern (`*` any characters, `?` one). */
  export function covers(entry: string, path: string): boolean {
    const e = normal(entry)
    const p = normal(path)
    if (e === p) return true
    if (e.endsWith("/")) return p.startsWith(e)
    if (/[*?]/.test(e)) {
      const source = e.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")
      return new RegExp(`^${source}$`).test(p)
    }
    return false
  }

  function entriesFor(writeSet: readonly Entry[], path: string): Entry[] {
    return writeSet.filter((e) => covers(e.path, path))
  }

  /**
   * What the diff does that the write-set does not allow, sorted by path: a changed file no entry covers
   * (or only `keep` entries), a deleted file no `delete` entry covers.
   */
  export function violations(changedFiles: readonly string[], deletedFiles: readonly string[], writeSet: readonly Entry[]): Violation[] {
    const out: Violation[] = []
    const deleted = new Set(deletedFiles.map(normal))
    for (const path of new Set(changedFiles.map(normal))) {
      if (deleted.has(path)) continue
      const entries = entriesFor(writeSet, path)
      if (entries.length === 0) out.push({ path, why: "outside" })
      else if (entries.every((e) => e.action === "keep")) out.push({ path, why: "kept" })
    }
    for (const path of deleted) if (!entriesFor(writeSet, path).some((e) => e.action === "delete")) out.push({ path, why: "deleted" })
    for (const v of deployRulesViolations([...changedFiles, ...deletedFiles], writeSet)) {
      const at = out.findIndex((o) => o.path === v.path)
      if (at >= 0) out.splice(at, 1)
      out.push(v)
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  }

  /** The gate's message for the worker: the list, and the way to a wider write-set. */
  export function message(label: string, found: readonly Violation[], limit = 20): string {
    const line = (v: Violation) =>
      `- ${v.path}: ${v.why === "outside" ? "not in the write-set" : v.why === "kept" ? "the write-set says keep" : v.why === "deploy-rules" ? "the deploy rules change only in a task whose write-set names this file itself, in a plan the user confirmed" : "deleted, and the write-set does not delete it"}`
    const shown = found.slice(0, limit).map(line)
    if (found.length > limit) shown.push(`- … and ${found.length - limit} more`)
    return (
      `${label}: the change touches files outside the task's write-set:\n${shown.join("\n")}\n` +
      `Undo those changes (git checkout <base> -- <file>, or restore the deleted files) and commit again, or — if ` +
      `the task really needs them — ask for a wider write-set through a consult; the Architect answers with a plan delta.`
    )
  }
}

/**
 * The gate: after the diff gate has read the changed files, every change must be one the task's write-set
 * allows. Tasks run without a write-set (a caller that gives none) skip it. A failure goes back to the
 * executor: undo the stray changes, or ask for a wider write-set.
 */
export const writeSetGate = {
  id: "write-set",
  route: "executor",
  async run(ctx: GateContext): Promise<GateOutcome> {
    const changed = ctx.changed.filter((c) => c.status !== "deleted").map((c) => c.path)
    const deleted = ctx.changed.filter((c) => c.status === "deleted").map((c) => c.path)
    if (!ctx.writeSet) {
      // Even without a write-set, the deploy targets are not a worker's to change.
      const rules = WriteSetGate.deployRulesViolations([...changed, ...deleted], undefined)
      if (rules.length === 0) return { ran: false, summary: "skipped: no write-set given" }
      const summary = `${WriteSetGate.DEPLOY_RULES} changed without being declared`
      return { ran: true, summary, failure: { summary, message: WriteSetGate.message(ctx.label, rules) } }
    }
    const found = WriteSetGate.violations(changed, deleted, ctx.writeSet)
    const declaredRules = changed.concat(deleted).some((p) => p.replace(/^\.\//, "") === WriteSetGate.DEPLOY_RULES)
    if (found.length === 0)
      return { ran: true, summary: `${ctx.changed.length} change(s), all inside the write-set${declaredRules ? `; it changes the deploy targets (${WriteSetGate.DEPLOY_RULES}), as its write-set declares — the user should look` : ""}` }
    const summary = `${found.length} file(s) outside the write-set: ${found
      .slice(0, 5)
      .map((v) => v.path)
      .join(", ")}${found.length > 5 ? ", …" : ""}`
    return { ran: true, summary, failure: { summary, message: WriteSetGate.message(ctx.label, found) } }
  },
} as const satisfies Gate
