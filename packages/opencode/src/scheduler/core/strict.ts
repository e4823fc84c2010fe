import type { z } from "zod"

/**
 * Bad input refused at the door, said so a person (or a model) can fix it in one go: the nearest known
 * word for a misspelt key or command, zod issues worded with their path and that suggestion, a bounded
 * list, and text decoded strictly (a BOM tolerated, invalid UTF-8 named by byte offset). Pure: no I/O.
 */
export namespace Strict {
  /**
   * A requirement is prose for the Main agent, not a document dump: past this size it is refused at once
   * (a 5 MB line used to hang the run). Long material belongs in a file of the repository, named in it.
   */
  export const MAX_REQUIREMENT_BYTES = 256 * 1024

  /** Lower case without separators, so depends_on, dependsOn and DEPENDS-ON compare equal. */
  function squash(word: string): string {
    return word.toLowerCase().replace(/[-_.\s]/g, "")
  }

  /** Edit distance with swaps of neighbours counting one (stauts → status); words here are short. */
  function distance(a: string, b: string): number {
    const rows: number[][] = []
    for (let i = 0; i <= a.length; i++) {
      rows.push(new Array<number>(b.length + 1).fill(0))
      rows[i]![0] = i
    }
    for (let j = 0; j <= b.length; j++) rows[0]![j] = j
    for (let i = 1; i <= a.length; i++)
      for (let j = 1; j <= b.length; j++) {
        const cost = a[i - 1] === b[j - 1] ? 0 : 1
        let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1)
        rows[i]![j] = d
      }
    return rows[a.length]![b.length]!
  }

  function commonPrefix(a: string, b: string): number {
    let n = 0
    while (n < a.length && n < b.length && a[n] === b[n]) n++
    return n
  }

  /**
   * The known word a mistyped one most likely meant, or undefined when none is close: the same word
   * spelt another way (write_set → writeSet), a few letters off (stauts → status, validations →
   * validation), or the same stem (depends_on, dependencies → deps).
   */
  export function nearest(word: string, known: Iterable<string>): string | undefined {
    const wanted = squash(word)
    if (wanted.length === 0) return undefined
    let best: string | undefined
    let bestScore = Infinity
    for (const candidate of known) {
      const c = squash(candidate)
      if (c.length === 0) continue
      if (Math.abs(c.length - wanted.length) > 64) continue
      const max = Math.max(1, Math.floor(Math.max(wanted.length, c.length) / 3))
      const d = distance(wanted.slice(0, 80), c.slice(0, 80))
      let score = d <= max ? d : Infinity
      // Same stem: the shorter word is the start of the longer one, or they share at least 3 letters up front.
      const prefix = commonPrefix(wanted, c)
      if (score === Infinity && prefix >= 3 && prefix >= Math.min(wanted.length, c.length) - 1) score = 10 + (Math.max(wanted.length, c.length) - prefix) / 100
      if (score < bestScore) {
        bestScore = score
        best = candidate
      }
    }
    return best
  }

  /** "; did you mean deps?" or "" when nothing is near. */
  export function didYouMean(word: string, known: Iterable<string>): string {
    const near = nearest(word, known)
    return near ? `; did you mean ${near}?` : ""
  }

  /** tasks[1].writeSet[0].path, from zod's path segments. */
  export function formatPath(segments: readonly PropertyKey[]): string {
    let out = ""
    for (const segment of segments) {
      if (typeof segment === "number") out += `[${segment}]`
      else out += out === "" ? String(segment) : `.${String(segment)}`
    }
    return out
  }

  type Def = { type?: string; innerType?: z.ZodType; in?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType>; options?: z.ZodType[]; getter?: () => z.ZodType }

  function defOf(schema: z.ZodType | undefined): Def | undefined {
    return (schema as unknown as { _zod?: { def?: Def } } | undefined)?._zod?.def
  }

  /** The object schema at `path` inside `schema`, through optional, default, pipe, array and lazy. */
  function objectAt(schema: z.ZodType, path: readonly PropertyKey[]): Record<string, z.ZodType> | undefined {
    let current: z.ZodType | undefined = schema
    let i = 0
    for (let guard = 0; current && guard < 200; guard++) {
      const def = defOf(current)
      if (!def) return undefined
      if (def.innerType) current = def.innerType
      else if (def.type === "pipe" && def.in) current = def.in
      else if (def.type === "lazy" && def.getter) current = def.getter()
      else if (i === path.length) return def.type === "object" ? (def.shape as Record<string, z.ZodType>) : undefined
      else if (def.type === "array" && typeof path[i] === "number") {
        current = def.element
        i++
      } else if (def.type === "object" && def.shape && typeof path[i] === "string") {
        current = def.shape[path[i] as string]
        i++
      } else return undefined
    }
    return undefined
  }

  /** The keys an object schema at `path` knows, for did-you-mean. */
  export function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
    return Object.keys(objectAt(schema, path) ?? {})
  }

  export interface Problem {
    /** Where in the document, e.g. tasks[1].depends_on ("" for the document itself). */
    path: string
    segments: readonly PropertyKey[]
    /** What is wrong, without the path: "unknown key; did you mean deps?" */
    message: string
    code: string
    /** For an unknown key: the key the author most likely meant. */
    suggestion?: string
  }

  /**
   * zod's issues as problems a person can act on. An unknown key becomes one problem per key, at the
   * key's own path, with the nearest known key of that object. At most `limit` problems are worded.
   */
  export function problems(schema: z.ZodType, error: z.ZodError, limit = 50): Problem[] {
    const out: Problem[] = []
    for (const issue of error.issues) {
      if (out.length >= limit) break
      if (issue.code === "unrecognized_keys") {
        const known = knownKeys(schema, issue.path)
        for (const key of issue.keys) {
          const segments = [...issue.path, key]
          const suggestion = nearest(key, known)
          out.push({
            path: formatPath(segments),
            segments,
            code: issue.code,
            message: `unknown key${suggestion ? `; did you mean ${suggestion}?` : known.length ? ` (known keys: ${known.join(", ")})` : ""}`,
            ...(suggestion ? { suggestion } : {}),
          })
        }
        continue
      }
      const message =
        issue.code === "invalid_type" && /received undefined/.test(issue.message)
          ? `missing (expected ${issue.expected})`
          : issue.message
      out.push({ path: formatPath(issue.path), segments: issue.path, code: issue.code, message })
    }
    return out
  }

  /** One line: "a: unknown key; did you mean b?; c: Invalid input…", with a count past `limit`. */
  export function oneLine(schema: z.ZodType, error: z.ZodError, limit = 5): string {
    const all = problems(schema, error, limit + 1)
    const shown = all.slice(0, limit).map((p) => `${p.path || "(document)"}: ${p.message}`)
    const rest = countIssues(error) - shown.length
    return shown.join("; ") + (rest > 0 ? `; and ${rest} more` : "")
  }

  function countIssues(error: z.ZodError): number {
    let n = 0
    for (const issue of error.issues) n += issue.code === "unrecognized_keys" ? issue.keys.length : 1
    return n
  }

  /** At most `limit` items, and how many were left out. */
  export function bounded<T>(items: readonly T[], limit: number): { shown: T[]; omitted: number } {
    return items.length <= limit ? { shown: [...items], omitted: 0 } : { shown: items.slice(0, limit), omitted: items.length - limit }
  }

  /**
   * Characters a person cannot see in a message: controls (except line feed and tab, which lay the message
   * out), the BOM, zero-width and joiner characters, bidirectional marks and overrides, the soft hyphen,
   * invisible fillers. In a refusal they hide the very mistake it names ("task id \" T-1\"" with a BOM).
   */
  const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb]/g

  /** `text` with every invisible character written as its escape (`\uFEFF`), so a refusal shows it. */
  export function visible(text: string): string {
    INVISIBLE.lastIndex = 0
    if (!INVISIBLE.test(text)) return text
    return text.replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`)
  }

  /** A long string cut for a message: the start, an ellipsis and the length. */
  export function clip(text: string, max = 200): string {
    return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`
  }

  export class DecodeError extends Error {
    readonly _tag = "DecodeError"
    constructor(
      readonly file: string,
      readonly offset: number,
    ) {
      super(`${file}: not valid UTF-8 at byte ${offset}; save the file as UTF-8`)
      this.name = "DecodeError"
    }
  }

  /**
   * The text of a file's bytes: UTF-8, a leading byte-order mark dropped (editors on Windows write one),
   * anything that is not UTF-8 refused with the offset of the first bad byte.
   */
  export function decode(bytes: Uint8Array, file: string): string {
    const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
    const bad = invalidUtf8At(bytes, start)
    if (bad >= 0) throw new DecodeError(file, bad)
    return new TextDecoder("utf-8").decode(bytes.subarray(start))
  }

  /** The offset of the first byte that breaks UTF-8 (overlong forms and surrogates included), or -1. */
  export function invalidUtf8At(bytes: Uint8Array, from = 0): number {
    let i = from
    while (i < bytes.length) {
      const b = bytes[i]!
      if (b < 0x80) {
        i++
        continue
      }
      let need: number
      let min: number
      let cp: number
      if (b >= 0xc2 && b <= 0xdf) [need, min, cp] = [1, 0x80, b & 0x1f]
      else if (b >= 0xe0 && b <= 0xef) [need, min, cp] = [2, 0x800, b & 0x0f]
      else if (b >= 0xf0 && b <= 0xf4) [need, min, cp] = [3, 0x10000, b & 0x07]
      else return i
      for (let k = 1; k <= need; k++) {
        const c = bytes[i + k]
        if (c === undefined || (c & 0xc0) !== 0x80) return i
        cp = (cp << 6) | (c & 0x3f)
      }
      if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i
      i += need + 1
    }
    return -1
  }
}
