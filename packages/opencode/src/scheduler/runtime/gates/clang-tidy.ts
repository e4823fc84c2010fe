import { existsSync } from "node:fs"
import path from "node:path"
import { GateError } from "../errors.ts"
import { Proc } from "../process.ts"
import { Toolchain } from "../toolchain/index.ts"
import { BaseFindings } from "./base-findings.ts"
import { AnalysisResults } from "../results/analysis.ts"
import { isCppFile, isDir } from "./commit.ts"
import type { Gate, GateContext, GateOutcome } from "./gate.ts"
import { TOOL_MISSING, type Finding } from "./schema.ts"
import { countBySeverity, formatRun, indent, INSTALL_HINTS, lastLines, listSome, stripPrefix } from "./text.ts"

const CLANG_TIDY_LOG = "clang-tidy.log"

/** The project's clang-tidy configuration, at the worktree's root. */
const CLANG_TIDY_CONFIG = ".clang-tidy"

/** Where a build's compile_commands.json is looked for when toolchain.json names none. */
const DATABASE_CANDIDATES = [path.join(Toolchain.BUILD_DIR, "compile_commands.json"), "build/compile_commands.json", "compile_commands.json"]

/** Headers are no translation unit: clang-tidy checks them through the sources that include them. */
const HEADER = /\.(h|hh|hpp|hxx)$/i

/**
 * clang-tidy on the changed sources, with the project's own `.clang-tidy` and the build's
 * compile_commands.json (`-p`), judged against the task's base like cppcheck (BaseFindings): a warning or
 * error the task introduced fails (the project's .clang-tidy chose the checks, so each one it reports counts);
 * inherited ones are recorded. On when the project has a `.clang-tidy` (or `analysis.clangTidy.enabled`);
 * clang-tidy not installed is "not run" unless toolchain.json requires it (then a tool missing).
 */
export const clangTidyGate = {
  id: "clang-tidy",
  tree: "build",
  reportsNotRun: true,
  route: "debugger",
  logs: [CLANG_TIDY_LOG],
  run: tidy,
} as const satisfies Gate

async function tidy(ctx: GateContext): Promise<GateOutcome> {
  const rules = ctx.rules.analysis.clangTidy
  if (rules.enabled === false) return { ran: false, summary: `clang-tidy disabled in ${Toolchain.RULES_PATH}` }
  const configured = existsSync(path.join(ctx.worktree, CLANG_TIDY_CONFIG))
  if (rules.enabled === undefined && !configured) return { ran: false, summary: `no ${CLANG_TIDY_CONFIG} in the project` }
  const changed = ctx.changed.filter((c) => c.status !== "deleted" && isCppFile(c.path)).map((c) => c.path)
  const sources = changed.filter((f) => !HEADER.test(f))
  if (sources.length === 0)
    return { ran: false, notApplicable: true, summary: changed.length > 0 ? "not applicable: no C/C++ source changed (headers are checked through sources)" : "not applicable: no C/C++ file changed" }

  const database = databaseOf(ctx)
  // The same files, inputs, base, clang-tidy and rules passed before: reused (the project's .clang-tidy is in the tree's key).
  const config = { args: rules.args, database: database ?? null, enabled: rules.enabled ?? null }
  const spec = { tool: "clang-tidy", binary: rules.binary, files: changed, base: await BaseFindings.baseCommit(ctx), config, log: CLANG_TIDY_LOG }
  return AnalysisResults.reusing(ctx, spec, () => tidyFiles(ctx, changed, sources, database))
}

async function tidyFiles(ctx: GateContext, changed: string[], sources: string[], database: string | undefined): Promise<GateOutcome> {
  const rules = ctx.rules.analysis.clangTidy
  const { result, log } = await runTidy(ctx, ctx.worktree, sources, database)
  const logPath = await ctx.write(CLANG_TIDY_LOG, log)

  if (result.spawnError && /ENOENT/.test(result.spawnError)) {
    const summary = `clang-tidy is not installed (tried \`${rules.binary}\`)`
    if (rules.enabled !== true) return { ran: false, summary: `${summary}: not run (install it: ${INSTALL_HINTS["clang-tidy"]})`, logPath }
    return {
      ran: false,
      summary,
      logPath,
      failure: {
        gate: TOOL_MISSING,
        missingTool: "clang-tidy",
        summary,
        message:
          `${ctx.label}: ${summary}, and ${Toolchain.RULES_PATH} requires it (analysis.clangTidy.enabled). Install it: ` +
          `${INSTALL_HINTS["clang-tidy"]}; or set analysis.clangTidy.binary there. Then run the gates again.`,
      },
    }
  }
  if (crashed(result)) {
    throw new GateError(
      "ToolCrashed",
      `${ctx.label}: clang-tidy crashed (${result.signal ? `killed by ${result.signal}` : `exit ${result.code}`}) while checking ${listSome(sources, 5)}: no verdict. This is a fault ` +
        `of clang-tidy, not of the task: try another version (analysis.clangTidy.binary in ${Toolchain.RULES_PATH}) or turn it ` +
        `off there. Log: ${logPath}\nLast lines:\n${indent(lastLines(result.output, 10))}`,
    )
  }
  const inScope = new Set(changed)
  const raw = parseClangTidy(stripPrefix(result.output, ctx.worktree)).filter((f) => inScope.has(f.file))
  const judged = await BaseFindings.judge(ctx, "clang-tidy", JSON.stringify({ args: rules.args, database: !!database }), changed, raw, async (tree, files) => {
    const baseDb = await BaseFindings.databaseFor(tree, ctx.worktree, database, ctx.taskId)
    const baseSources = files.filter((f) => !HEADER.test(f))
    // A changed header's base findings come through the changed sources that include it.
    const base = await runTidy(ctx, tree, baseSources.length > 0 ? baseSources : sources.filter((f) => existsSync(path.join(tree, f))), baseDb)
    if (base.result.spawnError || crashed(base.result) || base.result.timedOut || base.result.aborted) return undefined
    return { findings: parseClangTidy(stripPrefix(base.result.output, tree)), log: base.log }
  })
  const findings = judged.findings
  ctx.findings = [...ctx.findings, ...findings]
  const blamed = findings.filter((f) => !f.inherited)
  const inherited = findings.length - blamed.length
  const inheritedNote = inherited > 0 ? `; ${inherited} inherited from ${judged.commit?.slice(0, 12) ?? "the base"}` : ""
  if (blamed.length > 0) {
    const summary = `clang-tidy: ${blamed.length} new finding(s): ${listSome(blamed.map((f) => `${f.file}:${f.line} ${f.id}`), 3)}${inheritedNote}`
    const message =
      `${ctx.label}: clang-tidy (the project's ${CLANG_TIDY_CONFIG}) found ${blamed.length} new finding(s) in the changed files:\n` +
      indent(blamed.slice(0, 10).map((f) => `${f.file}:${f.line}: ${f.severity}: ${f.id}: ${f.message}`).join("\n")) +
      `${blamed.length > 10 ? `\n  … and ${blamed.length - 10} more` : ""}\n` +
      (inherited > 0 ? `${inherited} finding(s) the files already had at the base are recorded as inherited, not yours to fix.\n` : "") +
      `Full log: ${logPath}\nFix them (a false positive: // NOLINT(<check>) on its line, saying why), commit on ` +
      `air/${ctx.taskId}, and report again.`
    return { ran: true, summary, logPath, failure: { summary, message } }
  }
  if (!result.ok && findings.length === 0) {
    const what = Proc.describe(result, ctx.rules.timeoutMs).replace(/^exited with (\d+)$/, "exited with $1 without a finding")
    const summary = `clang-tidy ${what}`
    const message =
      `${ctx.label}: clang-tidy ${what}, so the changed files were not checked.\nLast lines:\n` +
      `${indent(lastLines(result.output, 15))}\nFull log: ${logPath}\nCheck ${CLANG_TIDY_CONFIG} and analysis.clangTidy in ` +
      `${Toolchain.RULES_PATH}, then run the gates again.`
    return { ran: true, summary, logPath, failure: { summary, message } }
  }
  return {
    ran: true,
    logPath,
    summary:
      `clang-tidy on ${sources.length} file(s): no new findings` +
      (findings.length > 0 ? `; recorded ${countBySeverity(findings)}` : "") +
      inheritedNote +
      (judged.note ? ` (${judged.note})` : ""),
  }
}

/** Killed by a signal, or an abort's 134 (clang-tidy aborts on a fatal LLVM error): no verdict. */
function crashed(result: Proc.Result): boolean {
  if (result.timedOut || result.aborted || result.spawnError) return false
  return result.signal !== null || (result.code !== null && result.code > 128)
}

/** The build's compile_commands.json, relative to the worktree: the one cppcheck reads, else a usual place. */
function databaseOf(ctx: GateContext): string | undefined {
  const named = ctx.rules.analysis.cppcheck.project
  const candidates = named ? [named, ...DATABASE_CANDIDATES] : DATABASE_CANDIDATES
  return candidates.find((file) => existsSync(path.resolve(ctx.worktree, file)))
}

async function runTidy(
  ctx: GateContext,
  dir: string,
  files: string[],
  database: string | undefined,
): Promise<{ result: Proc.Result; log: string }> {
  const rules = ctx.rules.analysis.clangTidy
  // Without a database, the usual include dirs (as cppcheck's fallback) after `--`, so clang-tidy does not guess.
  const fallback: string[] = ["--"]
  if (!database) for (const sub of ["include", "src"]) if (await isDir(path.join(dir, sub))) fallback.push(`-I${sub}`)
  const args = [
    "--quiet",
    ...(database ? ["-p", path.dirname(path.resolve(dir, database))] : []),
    ...rules.args,
    ...files.map((f) => (f.startsWith("-") ? `./${f}` : f)),
    ...(database ? [] : fallback),
  ]
  const result = await ctx.exec(rules.binary, args, {
    cwd: dir,
    env: ctx.env,
    shell: false,
    timeoutMs: ctx.rules.timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  })
  return { result, log: formatRun([rules.binary, ...args].join(" "), dir, result) }
}

/** clang-tidy's diagnostics (`file:line:col: warning: message [check]`); notes and the source excerpts are skipped. */
export function parseClangTidy(output: string): Finding[] {
  const findings: Finding[] = []
  const pattern = /^(.+?):(\d+):(\d+): (warning|error): (.*?) \[([^\]]+)\]$/
  for (const line of output.split(/\r?\n/)) {
    const match = pattern.exec(line)
    if (!match) continue
    findings.push({
      file: match[1]!,
      line: Number(match[2]),
      severity: match[4] as "warning" | "error",
      // WarningsAsErrors appends `,-warnings-as-errors`: the check is the same.
      id: match[6]!.replace(/,-warnings-as-errors$/, ""),
      message: match[5]!.trim(),
    })
  }
  return findings
}
