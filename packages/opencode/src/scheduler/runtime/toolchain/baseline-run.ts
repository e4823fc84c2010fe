import { mkdir, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { Proc } from "../process.ts"
import { Gates } from "../gates/index.ts"
import { git, gitTry } from "../git/git.ts"
import { Toolchain } from "./index.ts"
import { Worktrees } from "../git/worktree.ts"
import { CompilerCache } from "./cache.ts"

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
    analysis: Step & { findings: number; errors: number }
    passed: boolean
    /** Where the logs are: `<root>/.air/local/evidence/_init/`. */
    evidenceDir: string
    submodules: string[]
  }

  export async function run(root: string, rules: Toolchain.Rules, options: { env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
    const top = await Worktrees.repoRoot(root)
    await Worktrees.ensureExcluded(top)
    const commit = (await git(top, ["rev-parse", "HEAD"])).trim()
    const evidenceDir = path.join(top, ".air", "local", "evidence", "_init")
    await rm(evidenceDir, { recursive: true, force: true })
    await mkdir(evidenceDir, { recursive: true })
    const dir = path.join(top, ".air", "local", "baseline", commit.slice(0, 12))
    await gitTry(top, ["worktree", "remove", "--force", dir])
    await rm(dir, { recursive: true, force: true })
    await git(top, ["worktree", "add", "--detach", dir, commit])
    try {
      const submodules = await Worktrees.checkoutSubmodules(top, dir)
      const statsLog = path.join(evidenceDir, CompilerCache.STATS_LOG)
      const env = Toolchain.commandEnv(rules, { root: top, worktree: dir, statsLog }, options.env ?? process.env)
      const build = await steps(rules.build, dir, env, rules.timeoutMs, path.join(evidenceDir, "build.log"))
      const cache = await CompilerCache.readStats(statsLog)
      const test: Step = build.passed
        ? await steps(rules.test, dir, env, rules.timeoutMs, path.join(evidenceDir, "test.log"))
        : { passed: false, ms: 0, failure: "not run: the build failed" }
      const analysis = await analyse(rules, dir, env, path.join(evidenceDir, "cppcheck.log"))
      return {
        commit,
        build: { ...build, ...(cache ? { cache } : {}) },
        test,
        analysis,
        passed: build.passed && test.passed && analysis.passed,
        evidenceDir,
        submodules,
      }
    } finally {
      await gitTry(top, ["worktree", "remove", "--force", dir])
      await rm(dir, { recursive: true, force: true })
      await gitTry(top, ["worktree", "prune"])
    }
  }

  async function steps(commands: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number, logPath: string): Promise<Step> {
    const started = Date.now()
    let log = ""
    for (const command of commands) {
      // The process runner kills the whole tree at the timeout (a hung ctest with it).
      const result = await Proc.run(command, [], { cwd, env, shell: true, timeoutMs })
      const output = result.output.split(cwd + "/").join("")
      const how = Proc.describe(result, timeoutMs)
      log += `$ ${command}\n${output}\n# ${how}\n\n`
      if (!result.ok) {
        await writeFile(logPath, log)
        const tail = output.trimEnd().split("\n").slice(-8).join("\n")
        return { passed: false, ms: Date.now() - started, failure: `\`${command}\` ${how}:\n${tail}` }
      }
    }
    await writeFile(logPath, log)
    return { passed: true, ms: Date.now() - started }
  }

  /** cppcheck over the whole project (its compile_commands.json when the build wrote one); errors fail it. */
  async function analyse(
    rules: Toolchain.Rules,
    dir: string,
    env: NodeJS.ProcessEnv,
    logPath: string,
  ): Promise<Step & { findings: number; errors: number }> {
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
    return {
      passed: !spawnFailed && errors.length === 0,
      ms: Date.now() - started,
      findings: findings.length,
      errors: errors.length,
      ...(spawnFailed
        ? { failure: spawnFailed }
        : errors.length > 0
          ? { failure: errors.slice(0, 5).map((f) => `${f.file}:${f.line}: ${f.id}: ${f.message}`).join("\n") }
          : {}),
    }
  }
}
