import path from "node:path"
import { Toolchain } from "../toolchain/index.ts"
import { CppcheckArgs } from "../toolchain/cppcheck.ts"
import { GateError } from "../errors.ts"
import { Proc } from "../process.ts"
import { isCppFile, isDir } from "./commit.ts"
import type { Failure, Gate, GateContext, GateOutcome } from "./gate.ts"
import { BaseFindings } from "./base-findings.ts"
import { AnalysisResults } from "../results/analysis.ts"
import { TOOL_MISSING } from "./schema.ts"
import { Verdict } from "./verdict.ts"
import type { Finding } from "./schema.ts"
import { countBySeverity, formatRun, indent, INSTALL_HINTS, lastLines, listSome, stripPrefix } from "./text.ts"

const ANALYSIS_LOG = "cppcheck.log"

export const CPPCHECK_ARGS = [
  "--enable=warning,style,performance,portability",
  "--inline-suppr",
  "--error-exitcode=1",
  "--template={file}:{line}:{severity}:{id}:{message}",
] as const

/**
 * cppcheck on the changed C/C++ files, judged against the task's base (BaseFindings): a finding the task
 * introduced of at least `analysis.failOn` severity (error by default) fails the gate; the rest is recorded,
 * inherited ones marked so.
 * cppcheck missing is a person's to fix (`tool-missing`); cppcheck crashing is `GateError(ToolCrashed)`:
 * no verdict, and nothing the task's authors could repair.
 */
export const analysisGate = {
  id: "analysis",
  tree: "build",
  reportsNotRun: true,
  provides: "analysis",
  requiredFor: ["code", "fix", "refactor", "ui", "service"],
  route: "debugger",
  logs: [ANALYSIS_LOG],
  run: analyse,
  missingEvidence(ctx, result) {
    if (!ctx.rules.analysis.cppcheck.enabled) return `cppcheck is disabled in ${Toolchain.RULES_PATH}`
    if (!result?.passed) return "cppcheck did not pass"
    return undefined
  },
} as const satisfies Gate

async function analyse(ctx: GateContext): Promise<GateOutcome> {
  const cppcheck = ctx.rules.analysis.cppcheck
  if (!cppcheck.enabled) return { ran: false, summary: `cppcheck disabled in ${Toolchain.RULES_PATH}` }
  const files = ctx.changed.filter((c) => c.status !== "deleted" && isCppFile(c.path)).map((c) => c.path)
  if (files.length === 0) return { ran: false, notApplicable: true, summary: "not applicable: no C/C++ file changed" }
  // The same files, inputs, base, cppcheck and rules passed before (an earlier gate run, another machine): reused.
  const config = { args: cppcheck.args, project: cppcheck.project ?? null, failOn: ctx.rules.analysis.failOn }
  const spec = { tool: "cppcheck", binary: cppcheck.binary, files, base: await BaseFindings.baseCommit(ctx), config, log: ANALYSIS_LOG }
  return AnalysisResults.reusing(ctx, spec, () => analyseFiles(ctx, files))
}

async function analyseFiles(ctx: GateContext, files: string[]): Promise<GateOutcome> {
  const { label } = ctx
  const cppcheck = ctx.rules.analysis.cppcheck
  const { result, log } = await runCppcheck(ctx, ctx.worktree, files, cppcheck.project)
  if (!result) return { ran: false, notApplicable: true, summary: "not applicable: no C/C++ file to analyse" }
  const logPath = await ctx.write(ANALYSIS_LOG, log)

  if (result.spawnError && /ENOENT/.test(result.spawnError)) {
    const failure: Failure = {
      gate: TOOL_MISSING,
      missingTool: "cppcheck",
      summary: `cppcheck is not installed (tried \`${cppcheck.binary}\`)`,
      message:
        `${label}: cppcheck is not installed (tried \`${cppcheck.binary}\`), so the analysis gate cannot run, ` +
        `and a task never passes without it. Install it: ${INSTALL_HINTS.cppcheck}; or set ` +
        `analysis.cppcheck.binary in ${Toolchain.RULES_PATH}. Then run the gates again.`,
    }
    return { ran: false, summary: failure.summary, logPath, failure }
  }
  if (crashed(result)) {
    throw new GateError(
      "ToolCrashed",
      `${label}: cppcheck crashed (${result.signal ? `killed by ${result.signal}` : `exit ${result.code}`}) while analysing ` +
        `${listSome(files, 5)}, so there is no verdict on the changed files. This is a fault of cppcheck, not of the task: ` +
        `try another cppcheck version (analysis.cppcheck.binary in ${Toolchain.RULES_PATH}) or turn the analysis off ` +
        `there, then run the gates again. Log: ${logPath}\nLast lines:\n${indent(lastLines(result.output, 10))}`,
    )
  }
  const raw = parseCppcheck(stripPrefix(result.output, ctx.worktree))
  // Judged against the task's base: a finding the file already had there is inherited, recorded, never blamed.
  const judged = await BaseFindings.judge(ctx, "cppcheck", JSON.stringify({ args: cppcheck.args, database: !!cppcheck.project }), files, raw, async (tree, baseFiles) => {
    const database = await BaseFindings.databaseFor(tree, ctx.worktree, cppcheck.project, ctx.taskId)
    const base = await runCppcheck(ctx, tree, baseFiles, database)
    if (!base.result || base.result.spawnError || crashed(base.result) || base.result.timedOut || base.result.aborted) return undefined
    return { findings: parseCppcheck(stripPrefix(base.result.output, tree)), log: base.log }
  })
  const findings = judged.findings
  ctx.findings = [...ctx.findings, ...findings]
  const failOn = ctx.rules.analysis.failOn
  const blamed = Verdict.failing(findings, failOn)
  const inherited = findings.filter((f) => f.inherited).length
  const inheritedNote = inherited > 0 ? `; ${inherited} inherited from ${judged.commit?.slice(0, 12) ?? "the base"}` : ""
  if (blamed.length > 0) {
    const what = failOn === "error" ? "error(s)" : "error(s) or warning(s)"
    const summary = `cppcheck: ${blamed.length} new ${what}: ${listSome(blamed.map((f) => `${f.file}:${f.line} ${f.id}`), 3)}${inheritedNote}`
    const message =
      `${label}: cppcheck found ${blamed.length} new ${what} in the changed files (not in them at the task's base):\n` +
      indent(blamed.slice(0, 10).map((f) => `${f.file}:${f.line}: ${f.id}: ${f.message}`).join("\n")) +
      `${blamed.length > 10 ? `\n  … and ${blamed.length - 10} more` : ""}\n` +
      (inherited > 0 ? `${inherited} finding(s) the files already had at the base are recorded as inherited, not yours to fix.\n` : "") +
      `Full log: ${logPath}\nFix them (if one is a false positive, suppress it on its line with ` +
      `// cppcheck-suppress <id> and say why), commit on air/${ctx.taskId}, and report again.`
    return { ran: true, summary, logPath, failure: { summary, message } }
  }
  if (!result.ok && findings.length === 0) {
    const what = Proc.describe(result, ctx.rules.timeoutMs).replace(/^exited with (\d+)$/, "exited with $1 without a finding")
    const summary = `cppcheck ${what}`
    const message =
      `${label}: cppcheck ${what}, so the changed files were not analysed.\n` +
      `Last lines:\n${indent(lastLines(result.output, 15))}\nFull log: ${logPath}\n` +
      `Check analysis.cppcheck in ${Toolchain.RULES_PATH}, then run the gates again.`
    return { ran: true, summary, logPath, failure: { summary, message } }
  }
  return {
    ran: true,
    logPath,
    summary:
      `cppcheck on ${files.length} file(s): no new ${failOn === "error" ? "errors" : "errors or warnings"}` +
      (findings.length > 0 ? `; recorded ${countBySeverity(findings)}` : "") +
      inheritedNote +
      (judged.note ? ` (${judged.note})` : ""),
  }
}

/** cppcheck on `files` in `dir` (the task's worktree, or the base tree), with `database` when there is one. */
async function runCppcheck(
  ctx: GateContext,
  dir: string,
  files: string[],
  database: string | undefined,
): Promise<{ result?: Proc.Result; log: string }> {
  const cppcheck = ctx.rules.analysis.cppcheck
  const includes: string[] = []
  for (const sub of ["include", "src"]) if (await isDir(path.join(dir, sub))) includes.push("-I", sub)
  // cppcheck reads a .h as C: in a project without C sources, headers are C++ (`namespace` is not a syntax error).
  const cxx = files.every((f) => !f.endsWith(".c")) && (files.some((f) => !/\.h$/.test(f)) || (await hasCxxSources(ctx, dir)))
  // With the build's compile_commands.json: the project's own includes and defines (Toolchain.cppcheckArgs).
  const rules = { args: cppcheck.args, ...(database ? { project: database } : {}) }
  const invocations = await CppcheckArgs.build(rules, files, { worktree: dir, base: CPPCHECK_ARGS, cxx, includes })
  let result: Proc.Result | undefined
  let log = ""
  for (const args of invocations) {
    const one = await ctx.exec(cppcheck.binary, args, {
      cwd: dir,
      env: ctx.env,
      shell: false,
      timeoutMs: ctx.rules.timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    })
    log += formatRun([cppcheck.binary, ...args].join(" "), dir, one)
    // One verdict from every invocation: the first that did not pass speaks for all, outputs joined.
    result = !result ? one : { ...(result.ok ? one : result), ok: result.ok && one.ok, output: result.output + one.output }
    if (one.spawnError || crashed(one)) break
  }
  return result ? { result, log } : { log }
}

/** Killed by a signal it was not sent, or a shell's 128+n for one (a wrapper script around cppcheck). */
function crashed(result: Proc.Result): boolean {
  if (result.timedOut || result.aborted || result.spawnError) return false
  if (result.signal !== null) return true
  return result.code !== null && result.code > 128
}

/** Whether the worktree holds C++ sources (so its headers are C++ too). */
async function hasCxxSources(ctx: GateContext, dir: string): Promise<boolean> {
  const listed = await ctx.exec("git", ["ls-files", "*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx"], {
    cwd: dir,
    env: process.env,
    shell: false,
    timeoutMs: 30_000,
  })
  return listed.output.trim().length > 0
}

/** Parses cppcheck output written with `CPPCHECK_ARGS`' template. */
export function parseCppcheck(output: string): Finding[] {
  const findings: Finding[] = []
  const pattern = /^(.+?):(\d+):(error|warning|style|performance|portability|information):([A-Za-z0-9_]+):(.*)$/
  for (const line of output.split(/\r?\n/)) {
    const match = pattern.exec(line)
    if (!match) continue
    findings.push({
      file: match[1]!,
      line: Number(match[2]),
      severity: match[3] as Finding["severity"],
      id: match[4]!,
      message: match[5]!.trim(),
    })
  }
  return findings
}
