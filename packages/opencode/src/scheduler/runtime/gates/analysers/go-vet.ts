import path from "node:path"
import { z } from "zod"
import type { Finding } from "../schema.ts"
import { jsonOf, lines, type AnalyserBackend, type Parsed } from "./backend.ts"
import { backendGate } from "./backend-gate.ts"
import { ToolEnv } from "../../toolchain/tool-env.ts"

/** `go vet -json`'s report: package → analyser → diagnostics at `file:line:col` (absolute). */
const Report = z.record(z.string(), z.record(z.string(), z.array(z.object({ posn: z.string(), message: z.string() }).passthrough()).or(z.object({ error: z.string() }).passthrough())))
/** A package that does not type-check, printed as text even with -json: `vet: path:line:col: message`. */
const TYPE_ERROR = /^(?:vet: )?(\S+?\.go):(\d+):(?:(\d+):)? (.*)$/
/** `file:line:col` at the end of a position. */
const POSITION = /^(.*?\.go):(\d+)(?::\d+)?$/
/** The go command refusing the module (go.mod that does not parse, a module it cannot load offline). */
const GO_COMMAND = /^go: |^go\.mod:|^\S*go\.mod:\d+/
/** The toolchain itself failing. */
const PANIC = /^(panic: |fatal error: |runtime: )/

/**
 * go vet on the packages of the changed Go files, from their module's root (the nearest go.mod). vet reads
 * whole packages: the gate keeps the findings in the changed files (`checksProject`). Offline and local: no
 * module download (GOPROXY=off), no toolchain switch (GOTOOLCHAIN=local), its build cache outside the worktree.
 */
const goVetBackend = {
  tool: "go-vet",
  language: "Go",
  binary: "go",
  install: "apt-get install golang-go",
  owns: (file: string) => /\.go$/.test(file),
  rootMarkers: ["go.mod"],
  needsRoot: true,
  checksProject: true,
  versionArgs: ["version"],
  args: (files, extra) => ["vet", "-json", ...extra, ...packagesOf(files)],
  env: (_root: string, env: NodeJS.ProcessEnv) => goEnv(env),
  parse: parseGoVet,
} as const satisfies AnalyserBackend<"go-vet">

/** Its gate, listed in REGISTRY. */
export const goVetGate = backendGate(goVetBackend)

/** Go offline and local: no module download, no toolchain switch, the build cache outside the worktree (go vet, staticcheck). */
export const goEnv = ToolEnv.go

/** `./dir` for each changed file's directory (`.` for the module's top): vet's package patterns. */
export function packagesOf(files: readonly string[]): string[] {
  return [...new Set(files.map((file) => path.posix.dirname(file)))].sort().map((dir) => (dir === "." ? "." : `./${dir}`))
}

/**
 * `go vet -json` prints `# package` then a JSON object per package, and exits 0 with findings; a package that
 * does not type-check prints its errors as text and exits non-zero (they are the file's findings: the code is
 * wrong). Paths are made relative to `root`, where vet ran.
 */
export function parseGoVet(output: string, exit: number | null, root: string): Parsed {
  const findings: Finding[] = []
  const unread: string[] = []
  const relative = (file: string) => (path.isAbsolute(file) ? path.relative(root, file) : path.posix.normalize(file)).split(path.sep).join("/")
  const all = output.split(/\r?\n/)
  for (let i = 0; i < all.length; i++) {
    const line = all[i]!
    if (line.trim().length === 0 || /^# /.test(line)) continue
    if (line.startsWith("{")) {
      // One package's JSON object (`{}` when clean): up to the line that closes it.
      let end = i
      if (line === "{") while (end < all.length && all[end] !== "}") end++
      const parsed = Report.safeParse(jsonOf(all.slice(i, end + 1).join("\n")))
      if (!parsed.success) {
        unread.push(...lines(all.slice(i, end + 1).join("\n")))
      } else {
        for (const analysers of Object.values(parsed.data))
          for (const [analyser, diagnostics] of Object.entries(analysers)) {
            if (!Array.isArray(diagnostics)) {
              unread.push(`${analyser}: ${diagnostics.error}`)
              continue
            }
            for (const d of diagnostics) {
              const at = POSITION.exec(d.posn)
              if (!at) unread.push(`${analyser}: ${d.posn}: ${d.message}`)
              else findings.push({ file: relative(at[1]!), line: Number(at[2]), severity: "error", id: analyser, message: d.message.trim() })
            }
          }
      }
      i = end
      continue
    }
    const typeError = TYPE_ERROR.exec(line)
    if (typeError) {
      findings.push({ file: relative(typeError[1]!), line: Number(typeError[2]), severity: "error", id: "typecheck", message: typeError[4]!.trim() })
      continue
    }
    unread.push(line)
  }
  const crash = unread.find((line) => PANIC.test(line))
  if (crash) return { findings, unread, crashed: crash }
  const refused = unread.find((line) => GO_COMMAND.test(line))
  if (refused && findings.length === 0) return { findings, unread, configProblem: unread.slice(0, 5).join("\n") }
  return { findings, unread, unreadFails: true }
}
