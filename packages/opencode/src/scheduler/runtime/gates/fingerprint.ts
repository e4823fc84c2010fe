/**
 * Which of a task's analysis findings it inherited from its base: the same finding in the same file at the
 * base commit, recognised by what it says and the code it points at, not by its line number (a line
 * inserted above a legacy finding, or the function around it moved, must not make it the task's).
 *
 * Pure: the callers read the files and run the analysers; this module only compares.
 */
export namespace Fingerprint {
  /** What a finding must carry to be compared. */
  export interface Located {
    file: string
    line: number
    id: string
    message: string
    /** The analyser (cppcheck, clang-tidy): the same id from two tools is two findings. */
    tool?: string
  }

  /** How many non-blank lines above and below belong to a finding's neighbourhood. */
  export const RADIUS = 1

  /** A finding's message without what shifts with the code: line references and numbers. */
  export function normaliseMessage(message: string): string {
    return message
      .replace(/\blines?\s+\d+/gi, "line #")
      .replace(/:\d+(:\d+)?\b/g, ":#")
      .replace(/\d+/g, "#")
      .replace(/\s+/g, " ")
      .trim()
  }

  /** A source line as text: indentation and runs of whitespace do not matter. */
  export function normaliseLine(line: string | undefined): string {
    return (line ?? "").replace(/\s+/g, " ").trim()
  }

  export interface Keys {
    /** file, tool, id, message and the finding's own source line. */
    weak: string
    /** The weak key plus the neighbouring non-blank lines. */
    strong: string
  }

  /** The keys of a finding in a file whose lines are `lines` (index 0 is line 1). */
  export function keysOf(finding: Located, lines: readonly string[], radius: number = RADIUS): Keys {
    const index = finding.line - 1
    const own = normaliseLine(lines[index])
    const weak = [finding.tool ?? "", finding.file, finding.id, normaliseMessage(finding.message), own].join("\u0000")
    const around = [...neighbours(lines, index, -1, radius).reverse(), ...neighbours(lines, index, 1, radius)]
    return { weak, strong: [weak, ...around].join("\u0001") }
  }

  function neighbours(lines: readonly string[], from: number, step: 1 | -1, count: number): string[] {
    const found: string[] = []
    for (let i = from + step; i >= 0 && i < lines.length && found.length < count; i += step) {
      const text = normaliseLine(lines[i])
      if (text !== "") found.push(text)
    }
    return found
  }

  /**
   * For each task finding, whether the base had it. A multiset match: each base finding excuses at most one
   * task finding (two identical legacy findings and three in the task: one is new). Matched first on the
   * strong key (the neighbourhood disambiguates identical lines), then on the weak key among the rest (the
   * neighbourhood changed: a line inserted right above, a moved function).
   */
  export function inherited(task: readonly Keys[], base: readonly Keys[]): boolean[] {
    const strong = counts(base.map((k) => k.strong))
    const weak = counts(base.map((k) => k.weak))
    const result = task.map(() => false)
    task.forEach((keys, i) => {
      if (!take(strong, keys.strong)) return
      take(weak, keys.weak)
      result[i] = true
    })
    task.forEach((keys, i) => {
      if (!result[i] && take(weak, keys.weak)) result[i] = true
    })
    return result
  }

  function counts(keys: readonly string[]): Map<string, number> {
    const map = new Map<string, number>()
    for (const key of keys) map.set(key, (map.get(key) ?? 0) + 1)
    return map
  }

  function take(map: Map<string, number>, key: string): boolean {
    const n = map.get(key) ?? 0
    if (n === 0) return false
    map.set(key, n - 1)
    return true
  }
}
