import { createHash } from "node:crypto"
import { z } from "zod"

/**
 * A failure's fingerprint: the gate, the check (failing test, analyser id, or the tool), the first error
 * with everything project-specific taken out (paths, line numbers, numbers, quoted names), and the kind of
 * file it names. Two projects that hit "'x' was not declared in this scope" in a .cpp share a fingerprint.
 */
export namespace Fingerprint {
  export const Schema = z
    .object({
      gate: z.string().min(1),
      check: z.string(),
      error: z.string(),
      fileKind: z.string(),
    })
    .strict()
  export type Fingerprint = z.infer<typeof Schema>

  export function id(fp: Fingerprint): string {
    return createHash("sha256").update(JSON.stringify([fp.gate, fp.check, fp.error, fp.fileKind])).digest("hex").slice(0, 12)
  }

  /** An error line without what belongs to one project: `src/a.cpp:8:10: error: 'sbu' …` → `error: Q …`. */
  export function normalise(line: string): string {
    return line
      .replace(/(?:[\w.+-]*\/)*[\w.+-]+\.(?:cpp|cxx|cc|c\+\+|c|hpp|hxx|hh|h|txt|cmake)\b(?::\d+)*:?/g, "")
      .replace(/(['"‘“`])[^'"’”`]*(['"’”`])/g, "Q")
      .replace(/\b0x[0-9a-f]+\b/gi, "N")
      .replace(/\b\d+(\.\d+)?\b/g, "N")
      .replace(/\s+/g, " ")
      .trim()
      .slice(0, 200)
  }

  /** The first line of a gate message that says what went wrong. */
  export function firstErrorLine(message: string): string {
    const lines = message.split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !/^task \S+:|^Full log|^Fix |^Last lines|^Output:|^First error/.test(l))
    // A compiler's or CMake's error first, then a test's own words, then anything that failed.
    for (const pattern of [/:\s*(fatal )?error\b|^CMake Error|\berror\s*(C|LNK)\d+|undefined reference/i, /\b(FAIL|Assertion|expected)\b/, /\b(error|failed)\b/i])
      for (const line of lines) if (pattern.test(line) && !/^Failing tests:/.test(line)) return line
    return lines[0] ?? ""
  }

  /** The kind of the first source file a message names (`.cpp`, `.h`, `CMakeLists.txt`), or "". */
  export function fileKind(message: string): string {
    const match = /[\w./+-]*?([\w+-]+)(\.(?:cpp|cxx|cc|c|hpp|hxx|hh|h|cmake)|CMakeLists\.txt)\b/.exec(message)
    if (!match) return ""
    return match[2] === "CMakeLists.txt" ? "CMakeLists.txt" : match[2]!
  }

  /** From a failed gate report (report.json): the failed gate, its message and findings. */
  export function ofReport(report: { failedGate?: string; message?: string; findings?: { id?: string; file?: string }[] }): Fingerprint {
    const message = report.message ?? ""
    const tests = /Failing tests: ([^\n]+)/.exec(message)?.[1]?.split(",")[0]?.replace(/\s+\([^)]*\)$/, "").trim()
    const finding = report.findings?.find((f) => f.id)
    const check = tests ?? finding?.id ?? ""
    const error = normalise(firstErrorLine(message))
    return { gate: report.failedGate ?? "unknown", check, error, fileKind: fileKind(`${finding?.file ?? ""}\n${message}`) }
  }
}
