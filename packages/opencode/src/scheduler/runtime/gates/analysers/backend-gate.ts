import { existsSync } from "node:fs"
import { readFile, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { GateError } from "../../errors.ts"
import { Proc } from "../../process.ts"
import { AnalysisResults } from "../../results/analysis.ts"
import { CompilerCache } from "../../toolchain/cache.ts"
import { Toolchain } from "../../toolchain/index.ts"
import { Areas } from "../../toolchain/areas.ts"
import { BaseFindings } from "../base-findings.ts"
import type { Gate, GateContext, GateOutcome } from "../gate.ts"
import { TOOL_MISSING, type Finding } from "../schema.ts"
import { countBySeverity, formatRun, indent, lastLines, listSome } from "../text.ts"
import { Verdict } from "../verdict.ts"
import type { AnalyserBackend, Parsed } from "./backend.ts"

/**
 * The gate of one analyser backend: its tool on the changed files of its language, from each file's project
 * root, judged against the task's base as cppcheck is (BaseFindings: inherited findings never fail; new ones at
 * or above `analysis.failOn` do), a pass recorded in the results store under the tool's own key. No verdict is
 * never a pass: a tool that crashes throws (`ToolCrashed`); output it prints that the parser does not read, or a
 * configuration the tool refuses, fails with that said.
 */
export function backendGate<Tool extends string>(backend: AnalyserBackend<Tool>) {
  const log = `${backend.tool}.log`
  const gate = {
    id: backend.tool,
    reportsNotRun: true,
    route: "debugger",
    logs: [log],
    run: (ctx: GateContext) => analyse(ctx, backend, log),
  } as const satisfies Gate<Tool>
  // The backend itself rides along for doctor (its tool, its version, how to install it).
  return { ...gate, backend }
}

/** What one run of the tool in one project root gave. */
interface RootRun {
  root: string
  result: Proc.Result
  parsed: Parsed
  binary: string
}

async function analyse(ctx: GateContext, backend: AnalyserBackend, log: string): Promise<GateOutcome> {
  const rules = ctx.rules.analysis.backends[backend.tool]
  if (rules?.enabled === false) return { ran: false, summary: `${backend.tool} disabled in ${Toolchain.RULES_PATH}` }
  const own = ctx.changed.filter((c) => c.status !== "deleted" && backend.owns(c.path)).map((c) => c.path)
  // An area that lists its analysers (toolchain.json areas[].analysers) is read by those only.
  const files = own.filter((file) => Areas.analyses(ctx.rules.areas, backend.tool, file))
  if (own.length > files.length && files.length === 0)
    return { ran: false, notApplicable: true, summary: `not applicable: the changed ${backend.language} files are in areas whose analysers leave out ${backend.tool}` }
  if (files.length === 0) return { ran: false, notApplicable: true, summary: `not applicable: no ${backend.language} file changed` }
  if (rootsOf(ctx.worktree, files, backend).size === 0)
    return { ran: false, notApplicable: true, summary: `not applicable: no ${backend.rootMarkers.join(" or ")} above ${listSome(files, 3)}` }
  const config = { args: rules?.args ?? [], enabled: rules?.enabled ?? null, failOn: ctx.rules.analysis.failOn }
  const spec = {
    tool: backend.tool,
    binary: rules?.binary ?? defaultBinary(backend, ctx.env),
    ...(backend.versionArgs ? { versionArgs: backend.versionArgs } : {}),
    files,
    base: await BaseFindings.baseCommit(ctx),
    config,
    log,
  }
  return AnalysisResults.reusing(ctx, spec, () => judgeFiles(ctx, backend, log, files))
}

async function judgeFiles(ctx: GateContext, backend: AnalyserBackend, log: string, files: string[]): Promise<GateOutcome> {
  const rules = ctx.rules.analysis.backends[backend.tool]
  const { runs, text, scratch } = await runIn(ctx, backend, ctx.worktree, files)
  const logPath = await ctx.write(log, text)
  const tool = backend.tool

  const missing = runs.find((r) => r.result.spawnError && /ENOENT/.test(r.result.spawnError))
  if (missing) {
    const summary = `${tool} is not installed (tried \`${missing.binary}\`)`
    if (rules?.enabled !== true) return { ran: false, summary: `${summary}: not run (install it: ${backend.install})`, logPath }
    const message =
      `${ctx.label}: ${summary}, and ${Toolchain.RULES_PATH} requires it (analysis.backends.${tool}.enabled). Install it: ` +
      `${backend.install}; or set analysis.backends.${tool}.binary there. Then run the gates again.`
    return { ran: false, summary, logPath, failure: { gate: TOOL_MISSING, missingTool: tool, summary, message } }
  }
  for (const run of runs) {
    const crash = crashOf(run)
    if (crash)
      throw new GateError(
        "ToolCrashed",
        `${ctx.label}: ${tool} crashed (${crash}) in ${run.root || "."} while analysing ${listSome(files, 5)}: no verdict on the changed ` +
          `${backend.language} files. This is a fault of ${tool}, not of the task: try another version (analysis.backends.${tool}.binary in ` +
          `${Toolchain.RULES_PATH}) or turn it off there. Log: ${logPath}\nLast lines:\n${indent(lastLines(run.result.output, 10))}`,
      )
  }
  for (const run of runs) {
    const problem = failureOf(ctx, backend, run, logPath)
    if (problem) return { ran: true, summary: problem.summary, logPath, failure: problem }
  }
  const inScope = new Set(files)
  const raw = runs.flatMap((r) => r.parsed.findings).filter((f) => !backend.checksProject || inScope.has(f.file))
  const judged = await BaseFindings.judge(ctx, tool, JSON.stringify({ args: rules?.args ?? [] }), files, raw, async (tree, baseFiles) => {
    const base = await runIn(ctx, backend, tree, baseFiles, scratch)
    // A base run with no verdict (crashed, refused, or output nobody read) is no comparison: said, every finding new.
    if (base.runs.some((r) => r.result.spawnError || r.result.timedOut || r.result.aborted || crashOf(r) || r.parsed.configProblem || unreadVerdict(r))) return undefined
    return { findings: base.runs.flatMap((r) => r.parsed.findings), log: base.text }
  })
  const findings = judged.findings
  ctx.findings = [...ctx.findings, ...findings]
  const failOn = ctx.rules.analysis.failOn
  const blamed = Verdict.failing(findings, failOn)
  const inherited = findings.filter((f) => f.inherited).length
  const inheritedNote = inherited > 0 ? `; ${inherited} inherited from ${judged.commit?.slice(0, 12) ?? "the base"}` : ""
  if (blamed.length > 0) {
    const summary = `${tool}: ${blamed.length} new finding(s): ${listSome(blamed.map((f) => `${f.file}:${f.line} ${f.id}`), 3)}${inheritedNote}`
    const message =
      `${ctx.label}: ${tool} (${backend.language}) found ${blamed.length} new finding(s) in the changed files (not in them at the task's base):\n` +
      indent(blamed.slice(0, 10).map((f) => `${f.file}:${f.line}: ${f.severity}: ${f.id}: ${f.message}`).join("\n")) +
      `${blamed.length > 10 ? `\n  … and ${blamed.length - 10} more` : ""}\n` +
      (inherited > 0 ? `${inherited} finding(s) the files already had at the base are recorded as inherited, not yours to fix.\n` : "") +
      `Full log: ${logPath}\nFix them, commit on air/${ctx.taskId}, and report again.`
    return { ran: true, summary, logPath, failure: { summary, message } }
  }
  return {
    ran: true,
    logPath,
    summary:
      `${tool} on ${files.length} file(s): no new ${failOn === "error" ? "errors" : "errors or warnings"}` +
      (findings.length > 0 ? `; recorded ${countBySeverity(findings)}` : "") +
      inheritedNote +
      (judged.note ? ` (${judged.note})` : ""),
  }
}

/** Killed by a signal, a shell's 128+n, or the tool's own word that it crashed. */
function crashOf(run: RootRun): string | undefined {
  const r = run.result
  if (r.timedOut || r.aborted || r.spawnError) return undefined
  if (r.signal !== null) return `killed by ${r.signal}`
  if (r.code !== null && r.code > 128) return `exit ${r.code}`
  return run.parsed.crashed ? `exit ${r.code}: ${run.parsed.crashed.split("\n")[0]}` : undefined
}

/** A failing exit, or output the parser was told to read all of and did not, with no finding read: no verdict. */
function unreadVerdict(run: RootRun): boolean {
  const unreadLeft = run.parsed.unreadFails === true && run.parsed.unread.length > 0
  return (run.result.code !== 0 || unreadLeft) && run.parsed.findings.length === 0
}

/** A run with no verdict on the code that the task or project can repair: refused configuration, timeout, unread output. */
function failureOf(ctx: GateContext, backend: AnalyserBackend, run: RootRun, logPath: string) {
  const where = run.root || "the worktree's root"
  const tool = backend.tool
  if (run.parsed.configProblem) {
    const summary = `${tool} refused the project's configuration in ${where}`
    return {
      summary,
      message: `${ctx.label}: ${summary}, so the changed files were not analysed:\n${indent(run.parsed.configProblem)}\nFull log: ${logPath}\nFix the configuration (${backend.rootMarkers.join(", ")}), commit on air/${ctx.taskId}, and report again.`,
    }
  }
  if (run.result.timedOut || run.result.aborted) {
    const summary = `${tool} ${Proc.describe(run.result, ctx.rules.timeoutMs)} in ${where}`
    return { summary, message: `${ctx.label}: ${summary}: no verdict on the changed files. Full log: ${logPath}` }
  }
  if (unreadVerdict(run)) {
    const summary = `${tool} exited ${run.result.code} in ${where} with output AirCoding does not understand (no finding read from it)`
    return {
      summary,
      message:
        `${ctx.label}: ${summary}, so there is no verdict on the changed files (never read as "no findings").\n` +
        `The lines not understood:\n${indent(run.parsed.unread.slice(0, 15).join("\n") || "(no output)")}\nFull log: ${logPath}\n` +
        `Check analysis.backends.${tool} in ${Toolchain.RULES_PATH} and the project's ${backend.rootMarkers.join(" / ")}, then run the gates again.`,
    }
  }
  return undefined
}

/** What a run's tool wrote in each root (root → file name → content), given to the base tree's run. */
type Scratch = Map<string, Map<string, string>>

/**
 * Runs the tool once per project root in `dir` (the worktree or the base tree), on the files below that root.
 * The files the tool writes in its root (`scratch`: Cargo.lock) are removed after when the run made them; the
 * base tree's run gets the worktree's copies first, written by the gate, because there the tool may not write
 * (the sandbox keeps all but the task's worktree read-only).
 */
async function runIn(
  ctx: GateContext,
  backend: AnalyserBackend,
  dir: string,
  files: readonly string[],
  seed?: Scratch,
): Promise<{ runs: RootRun[]; text: string; scratch: Scratch }> {
  const rules = ctx.rules.analysis.backends[backend.tool]
  const runs: RootRun[] = []
  const made: Scratch = new Map()
  let text = ""
  for (const [root, below] of rootsOf(dir, files, backend)) {
    const cwd = path.join(dir, root)
    const binary = rules?.binary ?? localBinary(dir, root, backend) ?? defaultBinary(backend, ctx.env)
    const args = backend.args(below, rules?.args ?? [])
    const env = { ...ctx.env, ...backend.env?.(cwd, ctx.env) }
    const absent = (backend.scratch ?? []).filter((name) => !existsSync(path.join(cwd, name)))
    for (const name of absent) {
      const content = seed?.get(root)?.get(name)
      if (content !== undefined) await writeFile(path.join(cwd, name), content)
    }
    const result = await ctx.exec(binary, args, { cwd, env, shell: false, timeoutMs: ctx.rules.timeoutMs, ...(ctx.signal ? { signal: ctx.signal } : {}) })
    const kept = new Map<string, string>()
    for (const name of absent) {
      const content = await readFile(path.join(cwd, name), "utf8").catch(() => undefined)
      if (content !== undefined) kept.set(name, content)
      await rm(path.join(cwd, name), { force: true })
    }
    made.set(root, kept)
    text += formatRun([binary, ...args].join(" "), cwd, result)
    const parsed = backend.parse(result.output, result.code, cwd)
    // The tool names files from its root; the gates name them from the worktree's.
    const findings: Finding[] = parsed.findings.map((f) => ({ ...f, file: path.posix.normalize(path.posix.join(root || ".", f.file)) }))
    runs.push({ root, result, parsed: { ...parsed, findings }, binary })
    if (result.spawnError) break
  }
  return { runs, text, scratch: made }
}

/** Changed files grouped by their project root (relative to `dir`, "" for its top): the nearest directory with a marker. */
function rootsOf(dir: string, files: readonly string[], backend: AnalyserBackend): Map<string, string[]> {
  const roots = new Map<string, string[]>()
  for (const file of files) {
    let root: string | undefined
    for (let at = path.posix.dirname(file); ; at = path.posix.dirname(at)) {
      const here = at === "." ? "" : at
      if (backend.rootMarkers.some((marker) => existsSync(path.join(dir, here, marker)))) {
        root = here
        break
      }
      if (here === "") break
    }
    if (root === undefined) {
      if (backend.needsRoot) continue
      root = ""
    }
    roots.set(root, [...(roots.get(root) ?? []), root ? path.posix.relative(root, file) : file])
  }
  return roots
}

/** The backend's executable, or the first of its aliases on PATH when it is not there (absent both: its own name, to fail as not installed). */
export function defaultBinary(backend: AnalyserBackend, env: NodeJS.ProcessEnv): string {
  if (!backend.aliases || CompilerCache.onPath(backend.binary, env)) return backend.binary
  return backend.aliases.find((alias) => CompilerCache.onPath(alias, env)) ?? backend.binary
}

/** The project's own copy of the tool (node_modules/.bin/tsc) in the root or a directory above it inside `dir`. */
function localBinary(dir: string, root: string, backend: AnalyserBackend): string | undefined {
  if (!backend.localBinary) return undefined
  for (let at = root; ; at = path.posix.dirname(at) === "." ? "" : path.posix.dirname(at)) {
    const candidate = path.join(dir, at, backend.localBinary)
    if (existsSync(candidate)) return candidate
    if (at === "") return undefined
  }
}
