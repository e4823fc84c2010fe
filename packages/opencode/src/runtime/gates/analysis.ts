import path from "node:path"
import { Toolchain } from "../toolchain/index.ts"
import { GateError } from "../errors.ts"
import { Proc } from "../process.ts"
import { isCppFile, isDir } from "./commit.ts"
import type { Failure, Gate, GateContext, GateOutcome } from "./registry.ts"
import { TOOL_MISSING } from "./schema.ts"
import type { Finding } from "./schema.ts"
import { countBySeverity, formatRun, indent, INSTALL_HINTS, lastLines, listSome, stripPrefix } from "./text.ts"

export const ANALYSIS_LOG = "cppcheck.log"

export const CPPCHECK_ARGS = [
  "--enable=warning,style,performance,portability",
  "--inline-suppr",
  "--error-exitcode=1",
  "--template={file}:{line}:{severity}:{id}:{message}",
] as const

/**
 * cppcheck on the changed C/C++ files: an error-severity finding fails the gate, the rest is recorded.
 * cppcheck missing is a person's to fix (`tool-missing`); cppcheck crashing is `GateError(ToolCrashed)`:
 * no verdict, and nothing the task's authors could repair.
 */
export const analysisGate = {
  id: "analysis",
  provides: "analysis",
  route: "debugger",
  words: { en: "static analysis", "zh-CN": "静态分析" },
  logs: [ANALYSIS_LOG],
  reportsNotRun: true,
  run: analyse,
  missingEvidence(ctx, result) {
    if (!ctx.rules.analysis.cppcheck.enabled) return `cppcheck is disabled in ${Toolchain.RULES_PATH}`
    if (!result?.passed) return "cppcheck did not pass"
    return undefined
  },
} as const satisfies Gate

async function analyse(ctx: GateContext): Promise<GateOutcome> {
  const { label } = ctx
  const cppcheck = ctx.rules.analysis.cppcheck
  if (!cppcheck.enabled) return { ran: false, summary: `cppcheck disabled in ${Toolchain.RULES_PATH}` }
  const files = ctx.changed.filter((c) => c.status !== "deleted" && isCppFile(c.path)).map((c) => c.path)
  if (files.length === 0) return { ran: false, summary: "no C/C++ files changed" }

  const includes: string[] = []
  for (const dir of ["include", "src"]) if (await isDir(path.join(ctx.worktree, dir))) includes.push("-I", dir)
  // cppcheck reads a .h as C: in a project without C sources, headers are C++ (`namespace` is not a syntax error).
  const cxx = files.every((f) => !f.endsWith(".c")) && (files.some((f) => !/\.h$/.test(f)) || (await hasCxxSources(ctx)))
  // With the build's compile_commands.json: the project's own includes and defines (Toolchain.cppcheckArgs).
  const invocations = await Toolchain.cppcheckArgs(ctx.rules, files, { worktree: ctx.worktree, base: CPPCHECK_ARGS, cxx, includes })
  let result: Proc.Result | undefined
  let log = ""
  for (const args of invocations) {
    const one = await ctx.exec(cppcheck.binary, args, {
      cwd: ctx.worktree,
      env: ctx.env,
      shell: false,
      timeoutMs: ctx.rules.timeoutMs,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    })
    log += formatRun([cppcheck.binary, ...args].join(" "), ctx.worktree, one)
    // One verdict from every invocation: the first that did not pass speaks for all, outputs joined.
    result = !result ? one : { ...(result.ok ? one : result), ok: result.ok && one.ok, output: result.output + one.output }
    if (one.spawnError || crashed(one)) break
  }
  if (!result) return { ran: false, summary: "no C/C++ files to analyse" }
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
  const findings = parseCppcheck(stripPrefix(result.output, ctx.worktree))
  ctx.findings = findings
  const errors = findings.filter((f) => f.severity === "error")
  if (errors.length > 0) {
    const summary = `cppcheck: ${errors.length} error(s): ${listSome(errors.map((f) => `${f.file}:${f.line} ${f.id}`), 3)}`
    const message =
      `${label}: cppcheck found ${errors.length} error(s) in the changed files:\n` +
      indent(errors.slice(0, 10).map((f) => `${f.file}:${f.line}: ${f.id}: ${f.message}`).join("\n")) +
      `${errors.length > 10 ? `\n  … and ${errors.length - 10} more` : ""}\n` +
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
    summary: `cppcheck on ${files.length} file(s): no errors` + (findings.length > 0 ? `; recorded ${countBySeverity(findings)}` : ""),
  }
}

/** Killed by a signal it was not sent, or a shell's 128+n for one (a wrapper script around cppcheck). */
function crashed(result: Proc.Result): boolean {
  if (result.timedOut || result.aborted || result.spawnError) return false
  if (result.signal !== null) return true
  return result.code !== null && result.code > 128
}

/** Whether the worktree holds C++ sources (so its headers are C++ too). */
async function hasCxxSources(ctx: GateContext): Promise<boolean> {
  const listed = await ctx.exec("git", ["ls-files", "*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx"], {
    cwd: ctx.worktree,
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
