import { copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { Proc } from "./process.ts"
import { Gates } from "./gates/index.ts"
import { git, gitTry } from "./git/git.ts"
import { Toolchain } from "./toolchain/index.ts"
import { Worktrees } from "./git/worktree.ts"
import { CompilerCache } from "./toolchain/cache.ts"
import { TestRun, TestRunners } from "./gates/runners/index.ts"
import { JUnit } from "./results/junit.ts"
import { processExec } from "./gates/pipeline.ts"
import type { Exec } from "./gates/gate.ts"
import { Results } from "./results/index.ts"
import { Selection } from "./results/selection.ts"
import { Sandbox } from "./sandbox/sandbox.ts"
import { SandboxExec } from "./sandbox/exec.ts"
import { AirPaths } from "../core/air-paths"

/**
 * The baseline `aircoding init` runs once: the project's HEAD in a detached worktree of its own (submodules
 * from the user's checkout), built, tested and analysed with the rules it is about to write, each step
 * timed. It also fills the shared compiler cache, so the first task's build is already warm.
 */
export namespace BaselineRun {
  export interface Step {
    passed: boolean
    ms: number
    /** The first command that failed and its last lines, for people. */
    failure?: string
  }

  export interface Result {
    commit: string
    build: Step & { cache?: CompilerCache.Stats }
    test: Step
    /** The analysis of the whole project: its findings are the project's as it is (inherited), never a reason the baseline is not green. */
    analysis: Step & { findings: number; errors: number; inherited?: string }
    /** The build and the tests passed (the analysis is recorded, not judged). */
    passed: boolean
    /** Where the logs are: `<root>/.air/local/evidence/_init/`. */
    evidenceDir: string
    submodules: string[]
  }

  export async function run(root: string, rules: Toolchain.Rules, options: { env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
    const top = await Worktrees.repoRoot(root)
    await Worktrees.ensureExcluded(top)
    const commit = (await git(top, ["rev-parse", "HEAD"])).trim()
    const evidenceDir = AirPaths.evidence(top, "_init")
    await rm(evidenceDir, { recursive: true, force: true })
    await mkdir(evidenceDir, { recursive: true })
    const dir = AirPaths.baseline(top, commit.slice(0, 12))
    await gitTry(top, ["worktree", "remove", "--force", dir])
    await rm(dir, { recursive: true, force: true })
    await git(top, ["worktree", "add", "--detach", dir, commit])
    try {
      const submodules = await Worktrees.checkoutSubmodules(top, dir)
      // As the run's baseline does: the project's own commands in the OS sandbox when it can start (the key
      // records which, so this result serves the run's baseline), else as before, unsandboxed.
      const sandboxed = Sandbox.check().ok
      const exec: Exec = sandboxed ? SandboxExec.wrap(processExec, { root: top, worktree: dir, network: Toolchain.networkFor(rules) }) : processExec
      // ccache's stats log inside the cache dir, the one place outside the worktree a sandboxed build may write.
      const statsLog = path.join(path.resolve(top, rules.cache.dir), "stats", "_init.log")
      await mkdir(path.dirname(statsLog), { recursive: true })
      await rm(statsLog, { force: true })
      const baseEnv = options.env ?? process.env
      const env = await Toolchain.commandEnv(rules, { root: top, worktree: dir, statsLog }, baseEnv)
      const build = await steps(exec, rules.build, dir, env, rules.timeoutMs, path.join(evidenceDir, "build.log"))
      const cache = await CompilerCache.readStats(statsLog)
      await copyFile(statsLog, path.join(evidenceDir, CompilerCache.STATS_LOG)).catch(() => undefined)
      const tests: JUnit.Results = {}
      const test: Step = build.passed
        ? await steps(exec, rules.test, dir, env, rules.timeoutMs, path.join(evidenceDir, "test.log"), tests)
        : { passed: false, ms: 0, failure: "not run: the build failed" }
      const analysis = await analyse(rules, dir, env, path.join(evidenceDir, "cppcheck.log"))
      // A green build and test run serves the run's baseline and the first gates on the same build inputs.
      if (build.passed && test.passed) {
        const where = { root: top, dir, rules, sandboxed, env: baseEnv, commit }
        const key = await Results.keyOf(where).catch(() => ({ key: undefined }))
        const prints = key.key && Toolchain.resultsRules(rules).selection ? await Selection.prints(exec, dir, rules, baseEnv) : undefined
        if (key.key) await Results.record(where, key.key, { buildMs: build.ms, testMs: test.ms, source: Object.keys(tests).length > 0 ? "junit" : "none", tests, ...(prints ? { prints } : {}) }, "aircoding init")
      }
      return {
        commit,
        build: { ...build, ...(cache ? { cache } : {}) },
        test,
        analysis,
        passed: build.passed && test.passed,
        evidenceDir,
        submodules,
      }
    } finally {
      await gitTry(top, ["worktree", "remove", "--force", dir])
      await rm(dir, { recursive: true, force: true })
      await gitTry(top, ["worktree", "prune"])
    }
  }

  /** The commands in order; with `tests`, CTest is asked for its JUnit file and the per-test results go there. */
  async function steps(exec: Exec, commands: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number, logPath: string, tests?: JUnit.Results): Promise<Step> {
    const started = Date.now()
    let log = ""
    for (const [i, command] of commands.entries()) {
      const junit = path.join(cwd, Toolchain.BUILD_DIR, `init-${i}-${JUnit.CTEST_FILE}`)
      const report = path.join(cwd, Toolchain.BUILD_DIR, `init-${i}-${TestRunners.REPORT_FILE}`)
      const prepared = tests ? await TestRunners.prepare(command, report) : { run: command }
      const run = prepared.runner ? prepared.run : (tests && JUnit.withCtestJunit(command, junit)) || command
      if (run !== command) await mkdir(path.dirname(junit), { recursive: true })
      // The process runner kills the whole tree at the timeout (a hung ctest with it).
      const result = await exec(run, [], { cwd, env: TestRunners.env(prepared.runner, env), shell: true, timeoutMs })
      if (tests && !prepared.runner && run !== command) Object.assign(tests, JUnit.results(JUnit.parse(await readFile(junit, "utf8").catch(() => "")) ?? []))
      // A known runner read per test: a failing test, output it cannot read, or no test at all is no green run.
      const read = prepared.runner ? await TestRunners.read(prepared.runner, { output: result.output, code: result.code, report, cwd }) : undefined
      if (tests && read?.ok) Object.assign(tests, read.result.tests)
      const output = result.output.split(cwd + "/").join("")
      const runnerSays = !read ? undefined : !read.ok ? read.why : read.result.failures.length > 0 ? TestRun.describe(read.result) : read.result.total === 0 ? `${read.result.framework} ran no test` : undefined
      const how = `${Proc.describe(result, timeoutMs)}${runnerSays ? `; ${runnerSays}` : ""}`
      log += `$ ${run}\n${output}\n# ${how}\n\n`
      if (!result.ok || runnerSays) {
        await writeFile(logPath, log)
        const tail = output.trimEnd().split("\n").slice(-8).join("\n")
        return { passed: false, ms: Date.now() - started, failure: `\`${command}\` ${how}:\n${tail}` }
      }
    }
    await writeFile(logPath, log)
    return { passed: true, ms: Date.now() - started }
  }

  /** cppcheck over the whole project (its compile_commands.json when the build wrote one); errors are recorded as inherited (cppcheck not starting fails it). */
  async function analyse(
    rules: Toolchain.Rules,
    dir: string,
    env: NodeJS.ProcessEnv,
    logPath: string,
  ): Promise<Step & { findings: number; errors: number; inherited?: string }> {
    const cppcheck = rules.analysis.cppcheck
    if (!cppcheck.enabled) return { passed: true, ms: 0, findings: 0, errors: 0, failure: "cppcheck disabled" }
    const started = Date.now()
    const listed = await git(dir, ["ls-files", "--", ...Gates.C_CPP_EXTENSIONS.map((ext) => `*${ext}`)])
    const files = listed.split("\n").filter((f) => f.length > 0)
    if (files.length === 0) return { passed: true, ms: 0, findings: 0, errors: 0 }
    const includes: string[] = []
    for (const sub of ["include", "src"]) if (files.some((f) => f.startsWith(`${sub}/`))) includes.push("-I", sub)
    const cxx = files.some((f) => !f.endsWith(".c") && !f.endsWith(".h"))
    const invocations = await Toolchain.cppcheckArgs(rules, files, { worktree: dir, base: Gates.CPPCHECK_ARGS, cxx, includes })
    let output = ""
    let log = ""
    let spawnFailed: string | undefined
    for (const args of invocations) {
      const result = await Proc.run(cppcheck.binary, args, { cwd: dir, env, shell: false, timeoutMs: rules.timeoutMs })
      output += result.output
      log += `$ ${[cppcheck.binary, ...args].join(" ")}\n${result.output}\n# ${Proc.describe(result, rules.timeoutMs)}\n\n`
      if (result.spawnError) spawnFailed = `${cppcheck.binary} could not start: ${result.spawnError}`
    }
    await writeFile(logPath, log)
    const findings = Gates.parseCppcheck(output.split(dir + "/").join(""))
    const errors = findings.filter((f) => f.severity === "error")
    // Findings on the project as it stands are inherited: recorded here, judged only when a task adds one.
    return {
      passed: !spawnFailed,
      ms: Date.now() - started,
      findings: findings.length,
      errors: errors.length,
      ...(spawnFailed
        ? { failure: spawnFailed }
        : errors.length > 0
          ? { inherited: errors.slice(0, 5).map((f) => `${f.file}:${f.line}: ${f.id}: ${f.message}`).join("\n") }
          : {}),
    }
  }
}
