import { spawn } from "node:child_process"
import { mkdir, rm, stat, writeFile } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { writeFileAtomic } from "./atomic.ts"
import { CompilerCache } from "../runtime/toolchain/cache.ts"
import { Toolchain } from "./toolchain.ts"
import { Worktrees } from "./worktree.ts"

/**
 * The evidence gates: what the Scheduler's code checks itself before a task may go to review. A worker's
 * report only asks for them; the report below is the evidence (ARCHITECTURE.md §5.1).
 *
 * Gates run in order and stop at the first failure: commit → diff → build → test → analysis → evidence.
 * Every command's output, the diff and the report are kept under the attempt's evidence directory.
 */
export namespace Gates {
  export const GATE_NAMES = ["commit", "diff", "build", "test", "analysis", "evidence"] as const
  export const GateName = z.enum(GATE_NAMES)
  export type GateName = z.infer<typeof GateName>

  /** `tool-missing`: a required tool (cppcheck, cmake, …) is not installed; a person must install it. */
  export const FailedGate = z.enum([...GATE_NAMES, "tool-missing"])
  export type FailedGate = z.infer<typeof FailedGate>

  /** What a task's kind requires the gates to have run and passed (the caller maps kind → requires). */
  export const Requirement = z.enum(["diff", "build", "test", "analysis"])
  export type Requirement = z.infer<typeof Requirement>

  export const Severity = z.enum(["error", "warning", "style", "performance", "portability", "information"])
  export const Finding = z.object({
    file: z.string(),
    line: z.number().int(),
    severity: Severity,
    id: z.string(),
    message: z.string(),
  })
  export type Finding = z.infer<typeof Finding>

  export const GateResult = z.object({
    gate: GateName,
    passed: z.boolean(),
    /** False when the gate had nothing to run (no command configured, no C/C++ file changed, skipped). */
    ran: z.boolean(),
    ms: z.number().int().nonnegative(),
    logPath: z.string().optional(),
    summary: z.string(),
    /** Set when the gate could not run because this tool is not installed. */
    missingTool: z.string().optional(),
  })
  export type GateResult = z.infer<typeof GateResult>

  export const GateReport = z.object({
    taskId: z.string(),
    attempt: z.number().int().nonnegative(),
    kind: z.string(),
    passed: z.boolean(),
    failedGate: FailedGate.optional(),
    /** For people (and the Debugger): what failed, where, the first relevant lines, what to do. */
    message: z.string(),
    gates: z.array(GateResult),
    changedFiles: z.array(z.string()),
    findings: z.array(Finding),
    requires: z.array(Requirement),
    toolchain: z.object({ source: z.enum(["file", "detected", "none", "given"]), note: z.string() }),
    evidenceDir: z.string(),
  })
  export type GateReport = z.infer<typeof GateReport>

  export const C_CPP_EXTENSIONS = [".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx"] as const
  export const CPPCHECK_ARGS = [
    "--enable=warning,style,performance,portability",
    "--inline-suppr",
    "--error-exitcode=1",
    "--template={file}:{line}:{severity}:{id}:{message}",
  ] as const
  export const INSTALL_HINTS: Record<string, string> = {
    cppcheck: "sudo apt-get install cppcheck (macOS: brew install cppcheck; Windows: choco install cppcheck)",
    cmake: "sudo apt-get install cmake (macOS: brew install cmake)",
    ctest: "sudo apt-get install cmake (ctest comes with cmake)",
    make: "sudo apt-get install build-essential",
    ninja: "sudo apt-get install ninja-build",
    "g++": "sudo apt-get install g++",
    gcc: "sudo apt-get install gcc",
    clang: "sudo apt-get install clang",
  }

  export interface RunInput {
    /** The project root (the user's checkout of the integration branch). */
    root: string
    /** The task's worktree: where commands run. */
    worktree: string
    taskId: string
    /** The integration branch the task branched from. */
    base: string
    kind: string
    attempt: number
    /** `<root>/.air/local/evidence/<task-id>/attempt-<n>/` */
    evidenceDir: string
    requires: readonly Requirement[]
    /** Rules to use instead of toolchain.json / detection. */
    toolchain?: Toolchain.RulesInput
    /** Environment for build, test and analysis commands; default `process.env`. */
    env?: NodeJS.ProcessEnv
  }

  export const LOGS = {
    build: "build.log",
    test: "test.log",
    analysis: "cppcheck.log",
    diff: "diff.patch",
    report: "report.json",
  } as const

  export async function run(input: RunInput): Promise<GateReport> {
    Worktrees.assertTaskId(input.taskId)
    const requires = [...new Set(input.requires.map((r) => Requirement.parse(r)))]
    const evidenceDir = path.resolve(input.evidenceDir)
    await Worktrees.ensureExcluded(input.root)
    await mkdir(evidenceDir, { recursive: true })
    await Promise.all(Object.values(LOGS).map((name) => rm(path.join(evidenceDir, name), { force: true })))

    const resolved: Toolchain.Resolved = input.toolchain
      ? { rules: Toolchain.Rules.parse(input.toolchain), source: "file", note: "toolchain rules given by the caller" }
      : await Toolchain.load(input.root, input.worktree)
    const toolchainInfo = {
      source: input.toolchain ? ("given" as const) : resolved.source,
      note: resolved.note,
    }
    const ctx: Context = {
      input,
      rules: resolved.rules,
      toolchainNote: resolved.note,
      evidenceDir,
      env: input.env ?? process.env,
      label: `task ${input.taskId}`,
    }
    const gates: GateResult[] = []
    let changed: Worktrees.Change[] = []
    let findings: Finding[] = []
    const finish = async (failure?: Failure): Promise<GateReport> => {
      const report: GateReport = {
        taskId: input.taskId,
        attempt: input.attempt,
        kind: input.kind,
        passed: !failure,
        ...(failure ? { failedGate: failure.gate } : {}),
        message: failure ? failure.message : passMessage(ctx, gates, findings),
        gates,
        changedFiles: changed.map((change) => change.path),
        findings,
        requires,
        toolchain: toolchainInfo,
        evidenceDir,
      }
      // Written last and atomically: a report.json on disk always describes a finished run.
      await writeFileAtomic(path.join(evidenceDir, LOGS.report), JSON.stringify(report, null, 2) + "\n", { backup: false })
      return report
    }

    const diffRequired = requires.includes("diff")

    // 1. commit
    {
      const started = Date.now()
      if (!diffRequired) {
        gates.push(skipped("commit", `not required for a ${input.kind} task`))
      } else {
        const failure = await commitGate(ctx)
        gates.push(timed("commit", started, failure, failure ? failure.summary : "committed on the task branch, worktree clean"))
        if (failure) return finish(failure)
      }
    }

    // 2. diff (the changed files are needed by the analysis even when the diff itself is not required)
    {
      const started = Date.now()
      const branchExists = diffRequired || (await hasBranch(input.root, input.taskId))
      if (branchExists) changed = await Worktrees.changes(input.root, input.taskId, input.base)
      if (!diffRequired) {
        gates.push(skipped("diff", `not required for a ${input.kind} task`))
      } else {
        const patch = await Worktrees.diff(input.root, input.taskId, input.base)
        const logPath = path.join(evidenceDir, LOGS.diff)
        await writeFile(logPath, patch)
        if (changed.length === 0 || patch.trim() === "") {
          const failure: Failure = {
            gate: "diff",
            summary: "the diff against the integration branch is empty",
            message:
              `${ctx.label}: air/${input.taskId} has commits but no change against ${input.base}: the diff is empty. ` +
              `A task is done only when its diff shows the work. Make the change in ${input.worktree}, commit it on ` +
              `air/${input.taskId}, and report again.`,
          }
          gates.push({ ...timed("diff", started, failure, failure.summary), logPath })
          return finish(failure)
        }
        gates.push({
          ...timed("diff", started, undefined, `${changed.length} file(s) changed: ${listSome(changed.map((c) => c.path), 8)}`),
          logPath,
        })
      }
    }

    // 3. build, 4. test
    for (const gate of ["build", "test"] as const) {
      const started = Date.now()
      const commands = ctx.rules[gate]
      if (commands.length === 0) {
        gates.push({
          gate,
          passed: true,
          ran: false,
          ms: 0,
          summary: `no ${gate} command configured (${resolved.note})`,
        })
        continue
      }
      const logPath = path.join(evidenceDir, LOGS[gate])
      const { failure, noTests, cache } = await commandGate(ctx, gate, commands, logPath)
      const summary = failure
        ? failure.summary
        : noTests
          ? "the test commands passed but found no tests (ctest: No tests were found)"
          : `${commands.length} command(s) passed${cache ? `; ${CompilerCache.describe(cache)}` : ""}`
      gates.push({
        ...timed(gate, started, failure, summary),
        ran: !noTests,
        logPath,
        ...(failure?.missingTool ? { missingTool: failure.missingTool } : {}),
      })
      if (failure) return finish(failure)
    }

    // 5. analysis
    {
      const started = Date.now()
      const result = await analysisGate(ctx, changed)
      findings = result.findings
      gates.push({
        gate: "analysis",
        passed: !result.failure,
        ran: result.ran,
        ms: Date.now() - started,
        ...(result.ran || result.failure ? { logPath: path.join(evidenceDir, LOGS.analysis) } : {}),
        summary: result.summary,
        ...(result.failure?.missingTool ? { missingTool: result.failure.missingTool } : {}),
      })
      if (result.failure) return finish(result.failure)
    }

    // 6. evidence
    {
      const started = Date.now()
      const failure = evidenceGate(ctx, requires, gates, changed)
      gates.push(
        timed("evidence", started, failure, failure ? failure.summary : `required evidence present: ${requires.join(", ") || "none"}`),
      )
      if (failure) return finish(failure)
    }
    return finish()
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

  /**
   * The untracked files that matter: C/C++ sources and headers and CMake files, outside any CMake build tree
   * (a directory holding a CMakeCache.txt, whose generated sources are build output). Notes, logs and binaries
   * are left alone.
   */
  export function untrackedSources(untracked: string[]): string[] {
    const buildTrees = untracked
      .filter((file) => file === "CMakeCache.txt" || file.endsWith("/CMakeCache.txt"))
      .map((file) => file.slice(0, -"CMakeCache.txt".length))
    return untracked.filter((file) => {
      if (buildTrees.some((tree) => file.startsWith(tree))) return false
      const name = path.posix.basename(file)
      return isCppFile(file) || name === "CMakeLists.txt" || name.endsWith(".cmake")
    })
  }

  export function isCppFile(file: string): boolean {
    return (C_CPP_EXTENSIONS as readonly string[]).includes(path.extname(file).toLowerCase())
  }

  // ---- internals ----

  interface Context {
    input: RunInput
    rules: Toolchain.Rules
    toolchainNote: string
    evidenceDir: string
    env: NodeJS.ProcessEnv
    label: string
  }

  interface Failure {
    gate: FailedGate
    summary: string
    message: string
    missingTool?: string
  }

  async function commitGate(ctx: Context): Promise<Failure | undefined> {
    const { input, label } = ctx
    const branch = `air/${input.taskId}`
    if (!(await isDir(input.worktree))) {
      return {
        gate: "commit",
        summary: `no worktree at ${input.worktree}`,
        message: `${label}: the worktree ${input.worktree} does not exist, so there is nothing to check. The task's work must be committed on ${branch} in its worktree.`,
      }
    }
    if (!(await hasBranch(input.root, input.taskId))) {
      return {
        gate: "commit",
        summary: `no branch ${branch}`,
        message: `${label}: the task branch ${branch} does not exist, so there is nothing to check. The task's work must be committed on ${branch} in its worktree.`,
      }
    }
    const ahead = await Worktrees.commitsAhead(input.root, input.taskId, input.base)
    if (ahead === 0) {
      return {
        gate: "commit",
        summary: `no commit on ${branch} ahead of ${input.base}`,
        message:
          `${label}: ${branch} has no commit ahead of ${input.base}, so there is no work to check. Work counts only ` +
          `once it is committed on the task branch: in ${input.worktree}, git add the files you changed, git commit, ` +
          `then report again.`,
      }
    }
    const head = await Worktrees.headBranch(input.worktree)
    if (head !== branch) {
      return {
        gate: "commit",
        summary: `the worktree is on ${head ?? "a detached HEAD"}, not ${branch}`,
        message:
          `${label}: the worktree ${input.worktree} is on ${head ?? "a detached HEAD"}, not on the task branch ` +
          `${branch}, so what would be built is not what would be merged. Put the work on ${branch} ` +
          `(git switch ${branch}, then commit or cherry-pick it there) and report again.`,
      }
    }
    const dirty = await Worktrees.uncommittedFiles(input.worktree, { untracked: false })
    if (dirty.length > 0) {
      return {
        gate: "commit",
        summary: `uncommitted changes: ${listSome(dirty, 5)}`,
        message:
          `${label}: the worktree has uncommitted changes: ${listSome(dirty, 10)}. Uncommitted work is not evidence ` +
          `(the build and tests would check files the merge would not carry). In ${input.worktree}, commit them on ` +
          `${branch} or discard them, then report again.`,
      }
    }
    const loose = untrackedSources(await Worktrees.untrackedFiles(input.worktree))
    if (loose.length > 0) {
      return {
        gate: "commit",
        summary: `untracked source files: ${listSome(loose, 5)}`,
        message:
          `${label}: the worktree has untracked source files: ${listSome(loose, 10)}. The build would use them but ` +
          `the merge would not carry them, so uncommitted work is not evidence. In ${input.worktree}, git add and ` +
          `commit them on ${branch} (or delete them), then report again.`,
      }
    }
    return undefined
  }

  async function commandGate(
    ctx: Context,
    gate: "build" | "test",
    commands: string[],
    logPath: string,
  ): Promise<{ failure?: Failure; noTests?: boolean; cache?: CompilerCache.Stats }> {
    const { input, label } = ctx
    let log = ""
    let noTests = false
    // The compiler cache shared by every worktree; the build's own stats log gives its hit rate.
    const statsLog = gate === "build" ? path.join(ctx.evidenceDir, CACHE_STATS_LOG) : undefined
    if (statsLog) await rm(statsLog, { force: true })
    const env = Toolchain.commandEnv(ctx.rules, { root: input.root, worktree: input.worktree, ...(statsLog ? { statsLog } : {}) }, ctx.env)
    try {
      for (const command of commands) {
        const result = await runProcess(command, [], {
          cwd: input.worktree,
          env,
          shell: true,
          timeoutMs: ctx.rules.timeoutMs,
        })
        log += formatRun(command, input.worktree, result)
        await writeFile(logPath, log)
        if (result.ok) {
          // CTest exits 0 when it finds no test at all: that is not evidence that tests pass.
          if (gate === "test" && /No tests were found/.test(result.output)) noTests = true
          continue
        }
        const output = stripPrefix(result.output, input.worktree)
        const tool = command.trim().split(/\s+/)[0] ?? command
        if (result.code === 127 && /not found|not recognized/i.test(output)) {
          const failure: Failure = {
            gate: "tool-missing",
            missingTool: tool,
            summary: `${tool} is not installed`,
            message:
              `${label}: the ${gate} command \`${command}\` could not start: ${tool} is not installed or not on PATH. ` +
              `Install it${INSTALL_HINTS[path.basename(tool)] ? `: ${INSTALL_HINTS[path.basename(tool)]}` : ""}, or change ` +
              `the ${gate} commands in ${Toolchain.RULES_PATH}. Log: ${logPath}`,
          }
          return { failure }
        }
        const what = result.timedOut
          ? `did not finish within ${seconds(ctx.rules.timeoutMs)} and was stopped`
          : result.spawnError
            ? `could not start (${result.spawnError})`
            : `exited with ${result.code ?? `signal ${result.signal}`}`
        if (gate === "build") {
          const first = firstError(output)
          const failure: Failure = {
            gate,
            summary: first ? `build failed: ${first.split("\n")[0]}` : `\`${command}\` ${what}`,
            message:
              `${label}: build failed: \`${command}\` ${what}.\n` +
              (first ? `First error:\n${indent(first)}\n` : `Last lines:\n${indent(lastLines(output, 15))}\n`) +
              `Full log: ${logPath}\nFix the build, commit on air/${input.taskId}, and report again.`,
          }
          return { failure }
        }
        const failing = failingTests(output)
        const details = testFailureLines(output)
        const failure: Failure = {
          gate,
          summary: failing.length > 0 ? `failing tests: ${listSome(failing, 5)}` : `\`${command}\` ${what}`,
          message:
            `${label}: tests failed: \`${command}\` ${what}.\n` +
            (failing.length > 0 ? `Failing tests: ${failing.join(", ")}\n` : "") +
            (details ? `Output:\n${indent(details)}\n` : `Last lines:\n${indent(lastLines(output, 15))}\n`) +
            `Full log: ${logPath}\nFix the code (or the test, if the test is what is wrong), commit on air/${input.taskId}, and report again.`,
        }
        return { failure }
      }
    } finally {
      await writeFile(logPath, log)
    }
    const cache = statsLog ? await CompilerCache.readStats(statsLog) : undefined
    if (cache) await writeFile(path.join(ctx.evidenceDir, "cache.json"), JSON.stringify(cache, null, 2) + "\n")
    return { noTests, ...(cache ? { cache } : {}) }
  }

  /** ccache's per-build stats log in the attempt's evidence (cache.json holds the hit rate it gives). */
  export const CACHE_STATS_LOG = "ccache-stats.log"

  /** Whether the worktree holds C++ sources (so its headers are C++ too). */
  async function hasCxxSources(worktree: string): Promise<boolean> {
    const listed = await runProcess("git", ["ls-files", "*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx"], {
      cwd: worktree,
      env: process.env,
      shell: false,
      timeoutMs: 30_000,
    })
    return listed.output.trim().length > 0
  }

  async function analysisGate(
    ctx: Context,
    changed: Worktrees.Change[],
  ): Promise<{ failure?: Failure; findings: Finding[]; ran: boolean; summary: string }> {
    const { input, label } = ctx
    const cppcheck = ctx.rules.analysis.cppcheck
    if (!cppcheck.enabled) {
      return { findings: [], ran: false, summary: `cppcheck disabled in ${Toolchain.RULES_PATH}` }
    }
    const files = changed.filter((c) => c.status !== "deleted" && isCppFile(c.path)).map((c) => c.path)
    if (files.length === 0) return { findings: [], ran: false, summary: "no C/C++ files changed" }

    const logPath = path.join(ctx.evidenceDir, LOGS.analysis)
    const includes: string[] = []
    for (const dir of ["include", "src"]) if (await isDir(path.join(input.worktree, dir))) includes.push("-I", dir)
    // cppcheck reads a .h as C: in a project without C sources, headers are C++ (`namespace` is not a syntax error).
    const cxx = files.every((f) => !f.endsWith(".c")) && (files.some((f) => !/\.h$/.test(f)) || (await hasCxxSources(input.worktree)))
    // With the build's compile_commands.json: the project's own includes and defines (see Toolchain.cppcheckArgs).
    const invocations = await Toolchain.cppcheckArgs(ctx.rules, files, { worktree: input.worktree, base: CPPCHECK_ARGS, cxx, includes })
    let result: ProcessResult | undefined
    let log = ""
    for (const args of invocations) {
      const one = await runProcess(cppcheck.binary, args, {
        cwd: input.worktree,
        env: ctx.env,
        shell: false,
        timeoutMs: ctx.rules.timeoutMs,
      })
      log += formatRun([cppcheck.binary, ...args].join(" "), input.worktree, one)
      result = result
        ? { ...one, ok: result.ok && one.ok, output: result.output + one.output, ms: result.ms + one.ms, code: result.ok ? one.code : result.code }
        : one
      if (one.spawnError) break
    }
    await writeFile(logPath, log)
    if (!result) return { findings: [], ran: false, summary: "no C/C++ files to analyse" }

    if (result.spawnError && /ENOENT/.test(result.spawnError)) {
      const failure: Failure = {
        gate: "tool-missing",
        missingTool: "cppcheck",
        summary: `cppcheck is not installed (tried \`${cppcheck.binary}\`)`,
        message:
          `${label}: cppcheck is not installed (tried \`${cppcheck.binary}\`), so the analysis gate cannot run, ` +
          `and a task never passes without it. Install it: ${INSTALL_HINTS.cppcheck}; or set ` +
          `analysis.cppcheck.binary in ${Toolchain.RULES_PATH}. Then run the gates again.`,
      }
      return { failure, findings: [], ran: false, summary: failure.summary }
    }
    const findings = parseCppcheck(stripPrefix(result.output, input.worktree))
    const errors = findings.filter((f) => f.severity === "error")
    if (errors.length > 0) {
      const failure: Failure = {
        gate: "analysis",
        summary: `cppcheck: ${errors.length} error(s): ${listSome(errors.map((f) => `${f.file}:${f.line} ${f.id}`), 3)}`,
        message:
          `${label}: cppcheck found ${errors.length} error(s) in the changed files:\n` +
          indent(errors.slice(0, 10).map((f) => `${f.file}:${f.line}: ${f.id}: ${f.message}`).join("\n")) +
          `${errors.length > 10 ? `\n  … and ${errors.length - 10} more` : ""}\n` +
          `Full log: ${logPath}\nFix them (if one is a false positive, suppress it on its line with ` +
          `// cppcheck-suppress <id> and say why), commit on air/${input.taskId}, and report again.`,
      }
      return { failure, findings, ran: true, summary: failure.summary }
    }
    if (!result.ok && findings.length === 0) {
      const what = result.timedOut
        ? `did not finish within ${seconds(ctx.rules.timeoutMs)}`
        : result.spawnError
          ? `could not start (${result.spawnError})`
          : `exited with ${result.code ?? `signal ${result.signal}`} without a finding`
      const failure: Failure = {
        gate: "analysis",
        summary: `cppcheck ${what}`,
        message:
          `${label}: cppcheck ${what}, so the changed files were not analysed.\n` +
          `Last lines:\n${indent(lastLines(result.output, 15))}\nFull log: ${logPath}\n` +
          `Check analysis.cppcheck in ${Toolchain.RULES_PATH}, then run the gates again.`,
      }
      return { failure, findings, ran: true, summary: failure.summary }
    }
    const counts = countBySeverity(findings)
    return {
      findings,
      ran: true,
      summary:
        `cppcheck on ${files.length} file(s): no errors` + (findings.length > 0 ? `; recorded ${counts}` : ""),
    }
  }

  function evidenceGate(
    ctx: Context,
    requires: Requirement[],
    gates: GateResult[],
    changed: Worktrees.Change[],
  ): Failure | undefined {
    const missing: string[] = []
    for (const requirement of requires) {
      const gate = gates.find((g) => g.gate === requirement)
      if (requirement === "diff") {
        if (!gate?.passed || changed.length === 0) missing.push("diff: the task has no diff")
        continue
      }
      if (requirement === "analysis") {
        if (!ctx.rules.analysis.cppcheck.enabled) missing.push(`analysis: cppcheck is disabled in ${Toolchain.RULES_PATH}`)
        else if (!gate?.passed) missing.push("analysis: cppcheck did not pass")
        continue
      }
      if (gate?.passed && !gate.ran && ctx.rules[requirement].length > 0) missing.push(`${requirement}: ${gate.summary}`)
      else if (!gate?.ran) missing.push(`${requirement}: no ${requirement} command configured (${ctx.toolchainNote})`)
      else if (!gate.passed) missing.push(`${requirement}: did not pass`)
    }
    if (missing.length === 0) return undefined
    return {
      gate: "evidence",
      summary: `missing evidence: ${missing.map((m) => m.split(":")[0]).join(", ")}`,
      message:
        `${ctx.label} (kind ${ctx.input.kind}): the evidence this kind of task requires is missing:\n` +
        indent(missing.join("\n")) +
        `\nAdd what is missing (tests registered with add_test in CMakeLists.txt, or build[] / test[] commands in ` +
        `${Toolchain.RULES_PATH}), commit, and report again.`,
    }
  }

  function passMessage(ctx: Context, gates: GateResult[], findings: Finding[]): string {
    const ran = gates.filter((g) => g.ran || g.gate === "commit" || g.gate === "diff" || g.gate === "evidence")
    const notRun = gates.filter((g) => !g.ran && (g.gate === "build" || g.gate === "test" || g.gate === "analysis"))
    let message = `${ctx.label}: all gates passed (${ran.map((g) => g.gate).join(", ")})`
    if (notRun.length > 0) message += `; not run: ${notRun.map((g) => `${g.gate} (${g.summary})`).join("; ")}`
    if (findings.length > 0) {
      message +=
        `; cppcheck recorded ${countBySeverity(findings)}:\n` +
        indent(findings.slice(0, 10).map((f) => `${f.file}:${f.line}: ${f.severity}: ${f.id}: ${f.message}`).join("\n"))
    }
    return message
  }

  function timed(gate: GateName, started: number, failure: Failure | undefined, summary: string): GateResult {
    return { gate, passed: !failure, ran: true, ms: Date.now() - started, summary }
  }

  function skipped(gate: GateName, why: string): GateResult {
    return { gate, passed: true, ran: false, ms: 0, summary: `skipped: ${why}` }
  }

  function hasBranch(root: string, taskId: string): Promise<boolean> {
    return Worktrees.branchExists(root, taskId)
  }

  interface ProcessResult {
    ok: boolean
    code: number | null
    signal: NodeJS.Signals | null
    timedOut: boolean
    spawnError?: string
    ms: number
    output: string
  }

  const OUTPUT_CAP = 8 * 1024 * 1024

  /** Runs one command, output interleaved as it arrives, killed (with its children) at the timeout. */
  function runProcess(
    command: string,
    args: string[],
    options: { cwd: string; env: NodeJS.ProcessEnv; shell: boolean; timeoutMs: number },
  ): Promise<ProcessResult> {
    const started = Date.now()
    return new Promise((resolve) => {
      const chunks: Buffer[] = []
      let size = 0
      let truncated = false
      let timedOut = false
      let spawnError: string | undefined
      const windows = process.platform === "win32"
      const child = spawn(command, args, {
        cwd: options.cwd,
        env: options.env,
        shell: options.shell,
        detached: !windows,
        stdio: ["ignore", "pipe", "pipe"],
        windowsHide: true,
      })
      const collect = (chunk: Buffer) => {
        if (size >= OUTPUT_CAP) {
          truncated = true
          return
        }
        chunks.push(chunk)
        size += chunk.length
      }
      child.stdout?.on("data", collect)
      child.stderr?.on("data", collect)
      const kill = (signal: NodeJS.Signals) => {
        if (child.pid === undefined) return
        try {
          if (windows) spawn("taskkill", ["/pid", String(child.pid), "/T", "/F"], { windowsHide: true })
          else process.kill(-child.pid, signal)
        } catch {
          // already gone
        }
      }
      let hardKill: NodeJS.Timeout | undefined
      const timer = setTimeout(() => {
        timedOut = true
        kill("SIGTERM")
        hardKill = setTimeout(() => kill("SIGKILL"), 2000)
      }, options.timeoutMs)
      let settled = false
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (hardKill) clearTimeout(hardKill)
        let output = Buffer.concat(chunks).toString("utf8")
        if (truncated) output += `\n[output truncated after ${OUTPUT_CAP} bytes]\n`
        resolve({
          ok: code === 0 && !timedOut && !spawnError,
          code,
          signal,
          timedOut,
          ...(spawnError ? { spawnError } : {}),
          ms: Date.now() - started,
          output,
        })
      }
      child.on("error", (error: NodeJS.ErrnoException) => {
        spawnError = `${error.code ?? "error"}: ${error.message}`
        done(null, null)
      })
      child.on("close", (code, signal) => done(code, signal))
    })
  }

  function formatRun(command: string, cwd: string, result: ProcessResult): string {
    const status = result.timedOut
      ? "timed out, stopped"
      : result.spawnError
        ? `could not start: ${result.spawnError}`
        : result.code !== null
          ? `exit ${result.code}`
          : `killed by ${result.signal}`
    return `$ ${command}\n# cwd: ${cwd}\n${result.output}${result.output.endsWith("\n") || result.output === "" ? "" : "\n"}# ${status} after ${(result.ms / 1000).toFixed(1)} s\n\n`
  }

  /** The first compiler, linker or CMake error with the lines that follow it. */
  function firstError(output: string): string | undefined {
    const lines = output.split(/\r?\n/)
    const patterns = [
      /:\d+(:\d+)?:\s*(fatal )?error\b/i,
      /^CMake Error/,
      /\berror\s*(C|LNK)\d+/,
      /undefined reference to/,
      /^\S.*:\s*(fatal )?error:/i,
      /\berror\b/i,
    ]
    for (const pattern of patterns) {
      const index = lines.findIndex((line) => pattern.test(line) && !/^\s*--/.test(line) && !/Werror/.test(line))
      if (index >= 0) return lines.slice(index, index + 4).join("\n").trimEnd()
    }
    return undefined
  }

  /** Test names from CTest's summary ("The following tests FAILED: 1 - calc_test (Failed)"). */
  function failingTests(output: string): string[] {
    const names: string[] = []
    const start = output.indexOf("The following tests FAILED:")
    if (start < 0) return names
    for (const line of output.slice(start).split(/\r?\n/).slice(1)) {
      const match = /^\s*\d+\s+-\s+(.+?)\s+\(([^)]+)\)\s*$/.exec(line)
      if (!match) {
        if (line.trim() === "") continue
        break
      }
      names.push(`${match[1]} (${match[2]})`)
    }
    return names
  }

  /** The lines of a test's own output that say what went wrong. */
  function testFailureLines(output: string): string | undefined {
    const lines = output
      .split(/\r?\n/)
      .filter((line) => /\b(FAIL|FAILED|Assertion|assert|expected|Error)\b/i.test(line))
      .filter((line) => !/The following tests FAILED|tests passed, \d+ tests failed|Errors while running CTest/.test(line))
      .filter((line) => !/^\s*\d+\s+-\s+.+\(.+\)\s*$/.test(line))
    if (lines.length === 0) return undefined
    return lines.slice(0, 10).join("\n")
  }

  function stripPrefix(text: string, dir: string): string {
    const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep
    return text.split(prefix).join("")
  }

  function seconds(ms: number): string {
    return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`
  }

  function lastLines(text: string, n: number): string {
    return text.trimEnd().split(/\r?\n/).slice(-n).join("\n")
  }

  function indent(text: string): string {
    return text
      .split("\n")
      .map((line) => `  ${line}`)
      .join("\n")
  }

  function listSome(items: string[], n: number): string {
    return items.length <= n ? items.join(", ") : `${items.slice(0, n).join(", ")} and ${items.length - n} more`
  }

  function countBySeverity(findings: Finding[]): string {
    const counts = new Map<string, number>()
    for (const f of findings) counts.set(f.severity, (counts.get(f.severity) ?? 0) + 1)
    return [...counts].map(([severity, count]) => `${count} ${severity}`).join(", ")
  }

  async function isDir(dir: string): Promise<boolean> {
    try {
      return (await stat(dir)).isDirectory()
    } catch {
      return false
    }
  }
}
