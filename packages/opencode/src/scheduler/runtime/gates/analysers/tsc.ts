import type { Finding } from "../schema.ts"
import { lines, type AnalyserBackend, type Parsed } from "./backend.ts"
import { backendGate } from "./backend-gate.ts"

/** tsc's line with `--pretty false`: `path(line,col): error TS2322: message`. */
const LINE = /^(.+?)\((\d+),(\d+)\): (error|warning|message) (TS\d+): (.*)$/
/** A diagnostic with no place: tsc's options and project (`error TS5058: The specified path does not exist`). */
const GLOBAL = /^error (TS\d+): (.*)$/
/** Codes of the project's configuration, not of the code: options (5xxx, 6xxx) and "no inputs" (18003). */
const CONFIG_CODE = /^TS(5\d{3}|6\d{3}|18003)$/

/**
 * tsc --noEmit on the TypeScript project (the nearest tsconfig.json) a changed .ts/.tsx file belongs to. tsc
 * checks the whole project; the gate keeps the findings in the changed files (`checksProject`), as clang-tidy's
 * are kept to them. The project's own tsc (node_modules/.bin) first.
 */
const tscBackend = {
  tool: "tsc",
  language: "TypeScript",
  binary: "tsc",
  install: "npm install --save-dev typescript (in the package)",
  owns: (file: string) => /\.(ts|tsx|mts|cts)$/.test(file) && !/\.d\.ts$/.test(file),
  rootMarkers: ["tsconfig.json"],
  needsRoot: true,
  checksProject: true,
  localBinary: "node_modules/.bin/tsc",
  args: (_files, extra) => ["--noEmit", "-p", "tsconfig.json", "--pretty", "false", ...extra],
  parse: parseTsc,
} as const satisfies AnalyserBackend<"tsc">

/** Its gate, listed in REGISTRY. */
export const tscGate = backendGate(tscBackend)

export function parseTsc(output: string, _exit: number | null): Parsed {
  const findings: Finding[] = []
  const unread: string[] = []
  let configProblem: string | undefined
  for (const line of lines(output)) {
    const m = LINE.exec(line)
    if (m) {
      // tsconfig.json itself does not parse, or names an option tsc refuses: no verdict on the code.
      if (/\.json$/.test(m[1]!) || CONFIG_CODE.test(m[5]!)) configProblem ??= line
      else findings.push({ file: m[1]!, line: Number(m[2]), severity: m[4] === "error" ? "error" : m[4] === "warning" ? "warning" : "information", id: m[5]!, message: m[6]!.trim() })
      continue
    }
    const g = GLOBAL.exec(line)
    if (g) {
      configProblem ??= line
      continue
    }
    // A long message goes on, indented, on the next lines (the chain of "Type X is not assignable…").
    if (/^\s+\S/.test(line) && findings.length > 0) continue
    unread.push(line)
  }
  return configProblem ? { findings, unread, configProblem } : { findings, unread }
}
