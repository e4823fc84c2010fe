/**
 * Is a compaction's summary good enough to replace the conversation it summarises (issue 38, item 4)? A
 * summary may read well and still drop what the next turns depend on: the files in play, the ADRs and tasks
 * the conversation decided about, the TODO/FIXME/HACK markers left behind, the invariants it argued from.
 * Those are extracted from both texts by class and compared as sets; a class that lost more than
 * LOSS_LIMIT of its items fails the summary. Pure: no I/O; the runtime (sessions/compaction-guard.ts) feeds
 * it the engine's texts and carries out the verdict.
 */
export namespace CompactionCheck {
  /** The roles whose conversations are compacted, never thrown away (workers get a fresh session instead: overflow.ts). */
  export const ROLES = ["main", "architect"] as const
  export type Role = (typeof ROLES)[number]
  /** How a compaction ended: its summary kept what mattered, a retry did, or the record filled in what both lost. */
  export const OUTCOMES = ["kept", "retried", "repaired"] as const
  export type Outcome = (typeof OUTCOMES)[number]

  /**
   * Share of the usable context (the model's context less its output) that a conversation's estimate may
   * fill before it is compacted ahead of the next request: the engine compacts only once the provider's
   * reported tokens reach the whole, after a request that may already have failed; the rest is room for the
   * person's next message and the tool results of the next turn.
   */
  export const COMPACT_AT_SHARE = 0.85

  /** Whether a conversation estimated at `tokens` is compacted before its next request (no limit known: never). */
  export function compactBefore(tokens: number, limits: { context: number; output: number }): boolean {
    if (limits.context <= 0) return false
    const usable = Math.max(0, limits.context - Math.min(limits.output, limits.context))
    return tokens >= usable * COMPACT_AT_SHARE
  }

  export const CLASSES = ["path", "adr", "task", "marker", "invariant"] as const
  export type KeptClass = (typeof CLASSES)[number]
  export type Items = Record<KeptClass, string[]>

  /** More than this share of one class lost fails the summary (the design's 30%). */
  export const LOSS_LIMIT = 0.3
  /** Compactions of one conversation before the lost items are appended from the record instead. */
  export const ATTEMPTS = 2

  /** A file name counts as a path without a slash only with an extension source trees use. */
  const EXTENSIONS =
    "c|cc|cpp|cxx|h|hh|hpp|hxx|ipp|inl|m|mm|cu|ts|tsx|js|jsx|mjs|cjs|json|jsonc|md|txt|py|go|rs|java|kt|swift|rb|php|cs|sh|bash|zsh|ps1|bat|cmake|yml|yaml|toml|ini|cfg|conf|xml|html|css|scss|sql|proto|lock|mk|in|ac|am|patch|diff|log|csv|tsv"
  const SEGMENT = "\\.?[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]*"
  /** A slash path (relative, ./, ../ or absolute) or a bare file name with a known extension. */
  const PATH = new RegExp(
    `(?<![A-Za-z0-9_.@+/:-])((?:\\.{1,2}/|/)?(?:${SEGMENT}/)+(?:${SEGMENT}/?)?|${SEGMENT}\\.(?:${EXTENSIONS}))(?![A-Za-z0-9_@+-]|\\.[A-Za-z0-9_])`,
    "g",
  )
  const URL = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi
  const ADR = /\bADR-(\d{1,4})\b/g
  const TASK = /\bT-\d+(?:\.\d+)*\b/g
  // Its text runs to the end of its sentence or line.
  const MARKER = /\b(TODO|FIXME|HACK)\b[:(\s]*([^\n]*?)(?=[.;!?](?:\s|$)|\n|$)/g
  const INVARIANT = /\b(?:invariant|INV-?)\s*#?(\d{1,3})\b/gi

  /** Words of a marker's text that identify it: its first six, lower-cased, punctuation dropped. */
  function markerKey(kind: string, text: string): string {
    const words = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_./-]+/gu, " ")
      .trim()
      .split(/\s+/)
      .filter((w) => w.length > 0)
      .slice(0, 6)
    return [kind.toUpperCase(), ...words].join(" ")
  }

  /** A slash token that is a path, not prose such as "and/or" or a fraction: an extension, a directory mark, or two slashes. */
  function isPath(token: string): boolean {
    if (!token.includes("/")) return true
    if (/^\d+(\/\d+)+$/.test(token)) return false
    const bare = token.replace(/^\.{1,2}\//, "").replace(/^\//, "")
    const segments = bare.replace(/\/$/, "").split("/")
    return token.startsWith("/") || token.startsWith(".") || token.endsWith("/") || segments.length >= 3 || /\.[A-Za-z][A-Za-z0-9]{0,9}$/.test(bare)
  }

  /** The items of each class `text` holds, each once, sorted. */
  export function extract(text: string): Items {
    const sets: Record<KeptClass, Set<string>> = { path: new Set(), adr: new Set(), task: new Set(), marker: new Set(), invariant: new Set() }
    const noUrls = text.replace(URL, " ")
    for (const m of noUrls.matchAll(PATH)) {
      // A sentence's full stop is not part of the path.
      const raw = m[1]!.replace(/\.+$/, "")
      const token = raw.replace(/\/$/, "")
      if (token.length > 0 && isPath(raw)) sets.path.add(token.replace(/^\.\//, ""))
    }
    for (const m of text.matchAll(ADR)) sets.adr.add(`ADR-${Number(m[1])}`)
    for (const m of text.matchAll(TASK)) sets.task.add(m[0])
    for (const m of text.matchAll(MARKER)) sets.marker.add(markerKey(m[1]!, m[2]!))
    for (const m of text.matchAll(INVARIANT)) sets.invariant.add(`invariant ${Number(m[1])}`)
    const items = {} as Items
    for (const c of CLASSES) items[c] = [...sets[c]].sort()
    return items
  }

  export type ClassCount = { total: number; kept: number; lost: string[]; share: number }
  export type Check = { classes: Record<KeptClass, ClassCount>; failed: KeptClass[] }

  /** Each class of the original: how many of its items the summary kept, which it lost, the lost share. */
  export function compare(original: string, summary: string): Check {
    const before = extract(original)
    const after = extract(summary)
    const classes = {} as Record<KeptClass, ClassCount>
    const failed: KeptClass[] = []
    for (const c of CLASSES) {
      const kept = new Set(after[c])
      const lost = before[c].filter((item) => !kept.has(item))
      const total = before[c].length
      const share = total === 0 ? 0 : lost.length / total
      classes[c] = { total, kept: total - lost.length, lost, share }
      if (share > LOSS_LIMIT) failed.push(c)
    }
    return { classes, failed }
  }

  /** Every item the summary lost, by class (classes that lost nothing are absent). */
  export function lostItems(check: Check): Partial<Items> {
    const lost: Partial<Items> = {}
    for (const c of CLASSES) if (check.classes[c].lost.length > 0) lost[c] = check.classes[c].lost
    return lost
  }

  export type Verdict = "kept" | "retry" | "repair"

  /**
   * THE rule: a summary that failed no class is kept; the first failing one is redone once with a prompt
   * naming what it lost; a failing retry is kept with the lost items appended from the record.
   */
  export function verdict(check: Check, attempt: number): Verdict {
    if (check.failed.length === 0) return "kept"
    return attempt < ATTEMPTS ? "retry" : "repair"
  }

  const NAMES: Record<KeptClass, string> = {
    path: "file paths",
    adr: "ADR ids",
    task: "task ids",
    marker: "open markers",
    invariant: "invariant ids",
  }

  function listing(lost: Partial<Items>): string[] {
    const lines: string[] = []
    for (const c of CLASSES) {
      const items = lost[c]
      if (!items || items.length === 0) continue
      lines.push(`${NAMES[c]}:`)
      for (const item of items) lines.push(`- ${item}`)
    }
    return lines
  }

  /** What the retried compaction is told besides the engine's own prompt: the items it must keep this time. */
  export function retryContext(lost: Partial<Items>): string {
    return [
      "A previous summary of this conversation lost items the next turns depend on. Keep every one of them, written exactly as below, in the new summary:",
      ...listing(lost),
    ].join("\n")
  }

  /** The record's items appended to a summary that lost them twice; each written as it was, so the check finds it. */
  export function repairText(lost: Partial<Items>): string {
    const lines = ["Kept from the conversation before it was compacted (the summary left these out):"]
    for (const c of CLASSES) {
      const items = lost[c]
      if (!items || items.length === 0) continue
      lines.push(`${NAMES[c]}:`)
      // A marker's key is its kind and first words: written back as "TODO: words", which extracts to the same key.
      for (const item of items) lines.push(c === "marker" ? `- ${item.replace(/^(TODO|FIXME|HACK) ?/, "$1: ")}` : `- ${item}`)
    }
    return lines.join("\n")
  }

  /** Kept and lost counts by class, as the event carries them. */
  export function counts(check: Check): Record<KeptClass, { kept: number; lost: number }> {
    const out = {} as Record<KeptClass, { kept: number; lost: number }>
    for (const c of CLASSES) out[c] = { kept: check.classes[c].kept, lost: check.classes[c].lost.length }
    return out
  }
}
