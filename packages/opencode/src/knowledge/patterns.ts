import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { z } from "zod"
import { Settings } from "../scheduler/runtime/settings"
import { writeFileAtomicSync } from "../scheduler/runtime/store/atomic"
import { Fingerprint } from "./fingerprint"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * Repair patterns: a repair that passed its gates, kept by the failure's fingerprint with its root cause,
 * the shape of the fix and the command that verified it. The project's store is
 * `.air/shared/knowledge/patterns.json` (committed, reviewable); with `shareKnowledge` on, the same pattern
 * also goes to the user's store (`$XDG_DATA_HOME/aircoding/knowledge/patterns.json`), which every project on
 * the machine reads. Deduplicated by fingerprint (a repeat counts up), aged (unseen for `MAX_AGE_DAYS`:
 * dropped), bounded (`MAX_PATTERNS`, the least used and oldest go first).
 */
export namespace RepairPatterns {
  export const Pattern = z
    .object({
      id: z.string().min(1),
      fingerprint: Fingerprint.Schema,
      rootCause: z.string().min(1),
      fix: z.string().min(1),
      verify: z.string().min(1),
      count: z.number().int().min(1),
      firstSeen: z.string(),
      lastSeen: z.string(),
    })
    .strict()
  export type Pattern = z.infer<typeof Pattern>
  export const File = z.object({ version: z.literal(1), patterns: z.array(Pattern) }).strict()

  export const MAX_PATTERNS = 200
  export const MAX_AGE_DAYS = 365
  /** At most this many patterns, and this many characters, go into a Debugger's context. */
  export const OFFER_COUNT = 3
  export const OFFER_CHARS = 1500

  /** Whether the user allowed the store shared by every project (`shareKnowledge`); a bad config.json: no. */
  export function sharedAllowed(root: string, env: NodeJS.ProcessEnv = process.env): boolean {
    try {
      return Settings.load(root, env).shareKnowledge
    } catch {
      return false
    }
  }

  export function projectFile(root: string): string {
    return join(root, AirPaths.PATTERNS)
  }

  export function userFile(env: NodeJS.ProcessEnv = process.env): string {
    return join(env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share"), "aircoding", "knowledge", "patterns.json")
  }

  export function read(file: string): Pattern[] {
    if (!existsSync(file)) return []
    try {
      return File.parse(JSON.parse(readFileSync(file, "utf8"))).patterns
    } catch {
      return []
    }
  }

  function write(file: string, patterns: Pattern[]): void {
    mkdirSync(join(file, ".."), { recursive: true })
    writeFileAtomicSync(file, JSON.stringify({ version: 1, patterns }, null, 2) + "\n")
  }

  /** Adds (or counts up) a pattern in `file`; old and surplus patterns are folded away. */
  export function add(file: string, entry: Omit<Pattern, "id" | "count" | "firstSeen" | "lastSeen">, now: Date = new Date()): Pattern {
    const id = Fingerprint.id(entry.fingerprint)
    const at = now.toISOString()
    const patterns = read(file)
    const known = patterns.find((p) => p.id === id)
    let kept: Pattern
    if (known) {
      // The newest repair's words: the same failure, the fix as it was last made.
      Object.assign(known, { rootCause: entry.rootCause, fix: entry.fix, verify: entry.verify, count: known.count + 1, lastSeen: at })
      kept = known
    } else {
      kept = { id, ...entry, count: 1, firstSeen: at, lastSeen: at }
      patterns.push(kept)
    }
    write(file, age(patterns, now))
    return kept
  }

  /** Unseen for too long: dropped; then the least used, oldest first, until the store fits. */
  export function age(patterns: Pattern[], now: Date = new Date()): Pattern[] {
    const cutoff = now.getTime() - MAX_AGE_DAYS * 86_400_000
    const fresh = patterns.filter((p) => Date.parse(p.lastSeen) >= cutoff)
    if (fresh.length <= MAX_PATTERNS) return fresh
    const ranked = [...fresh].sort((a, b) => b.count - a.count || Date.parse(b.lastSeen) - Date.parse(a.lastSeen))
    const keep = new Set(ranked.slice(0, MAX_PATTERNS).map((p) => p.id))
    return fresh.filter((p) => keep.has(p.id))
  }

  export function forget(file: string, id: string): boolean {
    const patterns = read(file)
    const left = patterns.filter((p) => p.id !== id && !(id.length >= 4 && p.id.startsWith(id)))
    if (left.length === patterns.length) return false
    write(file, left)
    return true
  }

  /**
   * The patterns for a failure, best first: the same fingerprint; then the same gate and error; then the
   * same gate and check. Project patterns before the user's on a tie; each id once.
   */
  export function match(fp: Fingerprint.Fingerprint, stores: readonly Pattern[][]): Pattern[] {
    const all = stores.flat()
    const score = (p: Pattern) => {
      const f = p.fingerprint
      if (f.gate !== fp.gate) return 0
      if (Fingerprint.id(f) === Fingerprint.id(fp)) return 3
      if (f.error && f.error === fp.error) return 2
      if (f.check && f.check === fp.check) return 1
      return 0
    }
    const seen = new Set<string>()
    return all
      .map((p, order) => ({ p, s: score(p), order }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s || b.p.count - a.p.count || a.order - b.order)
      .map((x) => x.p)
      .filter((p) => (seen.has(p.id) ? false : (seen.add(p.id), true)))
      .slice(0, OFFER_COUNT)
  }

  /** The lines a Debugger's context gets for its task's failure (empty when nothing matches). */
  export function contextLines(root: string, taskId: string, options: { shared?: boolean; env?: NodeJS.ProcessEnv } = {}): string[] {
    const shared = options.shared ?? sharedAllowed(root, options.env)
    const failed = newestFailedReport(AirPaths.evidence(root, taskId))
    if (!failed) return []
    const fp = Fingerprint.ofReport(failed)
    const stores = [read(projectFile(root)), ...(shared ? [read(userFile(options.env))] : [])]
    const found = match(fp, stores)
    if (found.length === 0) return []
    const lines = ["", "Repair patterns that fixed failures like this one before (say in your report's `pattern` which applied, or none):"]
    let used = 0
    for (const p of found) {
      const text = `- ${p.id} (seen ${p.count}×): cause: ${p.rootCause}; fix: ${p.fix}; verified with \`${p.verify}\``
      if (used + text.length > OFFER_CHARS) break
      used += text.length
      lines.push(text)
    }
    return lines.length > 2 ? lines : []
  }

  type Report = { passed?: boolean; failedGate?: string; message?: string; findings?: { id?: string; file?: string }[] }

  function attempts(dir: string): string[] {
    try {
      return readdirSync(dir)
        .filter((d) => /^attempt-\d+$/.test(d))
        .sort((a, b) => Number(b.slice(8)) - Number(a.slice(8)))
    } catch {
      return []
    }
  }

  function readJson<T>(file: string): T | undefined {
    try {
      return JSON.parse(readFileSync(file, "utf8")) as T
    } catch {
      return undefined
    }
  }

  /** The newest failed gate report of a task (its attempts, newest first). */
  export function newestFailedReport(taskDir: string): Report | undefined {
    for (const attempt of attempts(taskDir)) {
      const report = readJson<Report>(join(taskDir, attempt, "report.json"))
      if (report?.passed === false) return report
    }
    return undefined
  }

  /**
   * After a task's gates passed: a Debugger's report whose steps were accepted (debug-*.json, not learned
   * yet) becomes a pattern of the failure it repaired, in the project's store and, when allowed, the user's.
   */
  export function learn(root: string, taskId: string, options: { shared?: boolean; env?: NodeJS.ProcessEnv; now?: Date } = {}): Pattern | undefined {
    const dir = AirPaths.evidence(root, taskId)
    const failed = newestFailedReport(dir)
    if (!failed) return undefined
    let files: string[]
    try {
      files = readdirSync(dir).filter((f) => /^debug-.+\.json$/.test(f) && !existsSync(join(dir, f.replace(/\.json$/, ".learned"))))
    } catch {
      return undefined
    }
    type Debug = { verdict?: { ok?: boolean; route?: string }; report?: { rootCause?: { file: string; line: number; explanation: string }; fix?: string; verification?: { command: string } } | null }
    const accepted = files
      .map((f) => ({ f, d: readJson<Debug>(join(dir, f)) }))
      .filter((x) => x.d?.verdict?.ok && x.d.verdict.route === "gates" && x.d.report?.rootCause && x.d.report.fix && x.d.report.verification)
    const last = accepted.at(-1)
    if (!last) return undefined
    const r = last.d!.report!
    const entry = {
      fingerprint: Fingerprint.ofReport(failed),
      rootCause: `${r.rootCause!.explanation} (${Fingerprint.fileKind(r.rootCause!.file) || r.rootCause!.file})`,
      fix: r.fix!,
      verify: r.verification!.command,
    }
    const pattern = add(projectFile(root), entry, options.now)
    if (options.shared ?? sharedAllowed(root, options.env)) add(userFile(options.env), entry, options.now)
    for (const x of accepted) writeFileAtomicSync(join(dir, x.f.replace(/\.json$/, ".learned")), `${pattern.id}\n`)
    return pattern
  }
}
