import type { Finding } from "../schema.ts"
import { lines, type AnalyserBackend, type Parsed } from "./backend.ts"
import { backendGate } from "./backend-gate.ts"

const TEMPLATE = "{path}:{line}:{column}:{category}:{symbol}:{msg}"
const LINE = /^(.+?\.py):(\d+):(\d+):(fatal|error|warning|convention|refactor|info):([A-Za-z0-9_-]+):(.*)$/
/** pylint's module banners are no finding. */
const UNDERSTOOD = /^\*{5,} Module \S+/
/** pylint's exit code is a bit mask; 32 is its usage error (bad option, bad rc file). */
const USAGE_ERROR = 32

const SEVERITY: Record<string, Finding["severity"]> = { fatal: "error", error: "error", warning: "warning", convention: "style", refactor: "style", info: "information" }

/**
 * pylint on the changed Python files, with the project's own rc (pyproject.toml's [tool.pylint], .pylintrc,
 * found from the root it runs in). Conventions and refactorings are recorded as style: only errors (and
 * warnings with `failOn: warning`) the task introduced fail, as with cppcheck.
 */
const pylintBackend = {
  tool: "pylint",
  language: "Python",
  binary: "pylint",
  install: "apt-get install pylint (or pip install pylint)",
  owns: (file: string) => /\.py$/.test(file),
  rootMarkers: [".pylintrc", "pylintrc", "pyproject.toml", "setup.cfg"],
  args: (files, extra) => ["--output-format=text", `--msg-template=${TEMPLATE}`, "--score=n", "--reports=n", "--persistent=n", ...extra, "--", ...files],
  parse: parsePylint,
} as const satisfies AnalyserBackend<"pylint">

/** Its gate, listed in REGISTRY. */
export const pylintGate = backendGate(pylintBackend)

export function parsePylint(output: string, exit: number | null): Parsed {
  const findings: Finding[] = []
  const unread: string[] = []
  for (const line of lines(output)) {
    const m = LINE.exec(line)
    if (m) findings.push({ file: m[1]!, line: Number(m[2]), severity: SEVERITY[m[4]!]!, id: m[5]!, message: m[6]!.trim() })
    else if (!UNDERSTOOD.test(line)) unread.push(line)
  }
  if (exit !== null && exit & USAGE_ERROR && findings.length === 0) return { findings, unread, configProblem: unread.slice(0, 5).join("\n") || `pylint exited ${exit} (a usage error)` }
  // A traceback is pylint itself failing (an astroid crash), whatever else it printed.
  const traceback = unread.findIndex((line) => line.startsWith("Traceback (most recent call last)"))
  if (traceback >= 0) return { findings, unread, crashed: unread.slice(traceback, traceback + 8).join("\n") }
  return { findings, unread }
}
