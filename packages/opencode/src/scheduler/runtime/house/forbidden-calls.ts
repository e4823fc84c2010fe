import { Glob } from "../glob/glob.ts"
import type { HouseRules } from "./rules"

/**
 * The logging rule over a task's patch: each C/C++ line the task added (not one it inherited, not one it only
 * moved or re-indented) is searched for the rule's forbidden channels, with its comments and string literals
 * blanked so `// was printf(...)` and `"use std::cout"` are not calls. Pure: the patch in, findings out.
 */
export namespace ForbiddenCalls {
  export type Finding = { file: string; line: number; call: string; text: string }

  const SOURCE = /\.(c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx|h\+\+|inl|ipp|tpp|m|mm)$/i
  /** A line inside a block comment, as C++ writers lay them out (a leading star, or the closing one); `*p = 0;` stays code. */
  const COMMENT_BODY = /^\*(\s|\/|$)/

  type Added = { file: string; line: number; text: string }

  /** The lines the patch adds, per file with their new line numbers, and the texts it removes (anywhere). */
  export function lines(patch: string): { added: Added[]; removed: string[] } {
    const added: Added[] = []
    const removed: string[] = []
    let file: string | null = null
    let line = 0
    for (const text of patch.split("\n")) {
      if (text.startsWith("+++ ")) {
        const path = text.slice(4).trim()
        file = path === "/dev/null" ? null : path.replace(/^b\//, "")
        continue
      }
      if (text.startsWith("--- ") || text.startsWith("diff --git")) continue
      const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text)
      if (hunk) {
        line = Number(hunk[1])
        continue
      }
      if (text.startsWith("+")) {
        if (file) added.push({ file, line, text: text.slice(1) })
        line++
      } else if (text.startsWith("-")) removed.push(text.slice(1).trim())
      else if (text.startsWith(" ")) line++
    }
    return { added, removed }
  }

  /** The line with its comments and the insides of its string and character literals turned into spaces. */
  export function blank(text: string): string {
    if (COMMENT_BODY.test(text.trim())) return ""
    let out = ""
    let i = 0
    while (i < text.length) {
      const c = text[i]!
      if (c === "/" && text[i + 1] === "/") break
      if (c === "/" && text[i + 1] === "*") {
        const end = text.indexOf("*/", i + 2)
        const stop = end < 0 ? text.length : end + 2
        out += " ".repeat(stop - i)
        i = stop
        continue
      }
      if (c === '"' || c === "'") {
        let j = i + 1
        while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1
        out += c + " ".repeat(Math.max(0, Math.min(j, text.length) - i - 1)) + (j < text.length ? c : "")
        i = j + 1
        continue
      }
      out += c
      i++
    }
    return out
  }

  /** The forbidden calls the patch adds, in file and line order; exempt paths and non-C/C++ files skipped. */
  export function scan(patch: string, rule: Pick<HouseRules.LoggingRule, "forbidden" | "exempt">): Finding[] {
    const exempt = rule.exempt.map((glob) => Glob.toRegExp(glob))
    const channels = rule.forbidden.map((channel) => ({ call: channel.call, re: new RegExp(channel.pattern) }))
    const { added, removed } = lines(patch)
    const moved = new Map<string, number>()
    for (const text of removed) moved.set(text, (moved.get(text) ?? 0) + 1)
    const findings: Finding[] = []
    for (const { file, line, text } of added) {
      if (!SOURCE.test(file) || exempt.some((re) => re.test(file))) continue
      // A line the task removed elsewhere and added here (moved, re-indented) is inherited, not written.
      const key = text.trim()
      const left = moved.get(key) ?? 0
      if (left > 0) {
        moved.set(key, left - 1)
        continue
      }
      const code = blank(text)
      for (const channel of channels) {
        if (!channel.re.test(code)) continue
        findings.push({ file, line, call: channel.call, text: key })
        break
      }
    }
    return findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)
  }

  export function describe(findings: readonly Finding[]): string {
    return findings.map((f) => `${f.file}:${f.line}: ${f.call}: ${f.text}`).join("\n")
  }
}
