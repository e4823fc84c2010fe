import type { Finding } from "../schema.ts"
import { lines, type AnalyserBackend, type Parsed } from "./backend.ts"
import { backendGate } from "./backend-gate.ts"

/** mypy's line: `path:line:col: error: message  [code]` (columns and codes asked for in `args`). */
const LINE = /^(.+?\.pyi?):(\d+):(?:(\d+):)? (error|warning|note): (.*?)(?:\s+\[([A-Za-z0-9_-]+)\])?$/
/** What mypy prints that is no finding: its summaries. */
const UNDERSTOOD = /^(Success: no issues found|Found \d+ errors? in \d+ files?|Success: no issues found in \d+ source files?)/

/**
 * mypy on the changed Python files, from the nearest pyproject.toml / mypy.ini / setup.cfg (its configuration).
 * Imports are followed silently: their types are read, only the changed files' errors are reported. No cache in
 * the worktree (`--cache-dir=/dev/null`): it would be an untracked directory in the task's diff.
 */
const mypyBackend = {
  tool: "mypy",
  language: "Python",
  binary: "mypy",
  install: "apt-get install mypy (or pip install mypy)",
  owns: (file: string) => /\.pyi?$/.test(file),
  rootMarkers: ["mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg"],
  args: (files, extra) => [
    "--no-color-output",
    "--no-error-summary",
    "--show-column-numbers",
    "--show-error-codes",
    "--no-pretty",
    "--follow-imports=silent",
    "--cache-dir=/dev/null",
    ...extra,
    "--",
    ...files,
  ],
  parse: parseMypy,
} as const satisfies AnalyserBackend<"mypy">

/** Its gate, listed in REGISTRY. */
export const mypyGate = backendGate(mypyBackend)

/** mypy exits 0 (clean), 1 (errors), 2 (a blocking error: a syntax error is still a finding; a crash or bad usage is not). */
export function parseMypy(output: string, exit: number | null): Parsed {
  const findings: Finding[] = []
  const unread: string[] = []
  for (const line of lines(output)) {
    const m = LINE.exec(line)
    if (m) {
      // Notes explain the error above them; they are no finding of their own.
      if (m[4] !== "note") findings.push({ file: m[1]!, line: Number(m[2]), severity: m[4] === "error" ? "error" : "warning", id: m[6] ?? "mypy", message: m[5]!.trim() })
      continue
    }
    if (!UNDERSTOOD.test(line)) unread.push(line)
  }
  const configured = unread.find((line) => /^[^:\s]*(pyproject\.toml|mypy\.ini|setup\.cfg)\b/.test(line))
  if (configured) return { findings, unread, configProblem: configured }
  if (exit === 2 && findings.length === 0) return { findings, unread, crashed: unread.slice(0, 5).join("\n") || "exit 2 with no output" }
  return { findings, unread }
}
