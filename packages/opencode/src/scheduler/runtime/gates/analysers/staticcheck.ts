import { tmpdir } from "node:os"
import path from "node:path"
import { z } from "zod"
import type { Finding } from "../schema.ts"
import { jsonOf, lines, unsetIn, type AnalyserBackend, type Parsed } from "./backend.ts"
import { backendGate } from "./backend-gate.ts"
import { goEnv, packagesOf } from "./go-vet.ts"

/** One line of `staticcheck -f json`: a check's code, where (absolute), what. */
const Problem = z
  .object({
    code: z.string(),
    severity: z.string(),
    location: z.object({ file: z.string(), line: z.number().int() }).passthrough(),
    message: z.string(),
  })
  .passthrough()
/** Its checks that are not bugs: simplifications (S), style (ST), quick fixes (QF). */
const STYLE = /^(S|ST|QF)\d+$/
/** A package the go command cannot load (no such directory, go.mod refused): printed as a "compile" problem with no place. */
const GO_COMMAND = /go\.mod|directory not found|no Go files|cannot find|malformed module/

/**
 * staticcheck (Debian names it go-staticcheck) on the packages of the changed Go files, from their go.mod, when it
 * is installed; beside go vet, not instead. Its bug checks (SA) are errors, simplifications and style
 * (S, ST, QF) are recorded as style; a package that does not type-check is the file's finding, as with vet.
 */
const staticcheckBackend = {
  tool: "staticcheck",
  language: "Go",
  binary: "staticcheck",
  aliases: ["go-staticcheck"],
  install: "apt-get install go-staticcheck (or go install honnef.co/go/tools/cmd/staticcheck@latest)",
  owns: (file: string) => /\.go$/.test(file),
  rootMarkers: ["go.mod"],
  needsRoot: true,
  checksProject: true,
  versionArgs: ["-version"],
  args: (files, extra) => ["-f", "json", ...extra, ...packagesOf(files)],
  // Its own cache too (STATICCHECK_CACHE): the default is under HOME, read-only in the gates' sandbox.
  env: (_root: string, env: NodeJS.ProcessEnv) => ({ ...goEnv(env), ...unsetIn(env, { STATICCHECK_CACHE: path.join(tmpdir(), "aircoding-go", "staticcheck-cache") }) }),
  parse: parseStaticcheck,
} as const satisfies AnalyserBackend<"staticcheck">

/** Its gate, listed in REGISTRY. */
export const staticcheckGate = backendGate(staticcheckBackend)

/** staticcheck exits 1 with problems, 0 without; every line it prints is one JSON problem. */
export function parseStaticcheck(output: string, _exit: number | null, root: string): Parsed {
  const findings: Finding[] = []
  const unread: string[] = []
  let configProblem: string | undefined
  for (const line of lines(output)) {
    const parsed = Problem.safeParse(jsonOf(line))
    if (!parsed.success) {
      unread.push(line)
      continue
    }
    const p = parsed.data
    if (!p.location.file) {
      // No place: the go command's own refusal, or a problem nobody can point at.
      if (GO_COMMAND.test(p.message)) configProblem ??= p.message
      else unread.push(`${p.code}: ${p.message}`)
      continue
    }
    const file = (path.isAbsolute(p.location.file) ? path.relative(root, p.location.file) : p.location.file).split(path.sep).join("/")
    const severity = STYLE.test(p.code) ? "style" : p.severity === "warning" ? "warning" : p.severity === "ignored" ? "information" : "error"
    findings.push({ file, line: p.location.line, severity, id: p.code === "compile" ? "typecheck" : p.code, message: p.message.trim() })
  }
  const crash = unread.find((line) => /^(panic: |fatal error: )/.test(line))
  if (crash) return { findings, unread, crashed: crash }
  if (configProblem && findings.length === 0) return { findings, unread, configProblem }
  return { findings, unread, unreadFails: true }
}
