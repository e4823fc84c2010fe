import { existsSync, readFileSync } from "node:fs"
import { readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import { writeFileAtomic } from "../store/atomic"
import { Toolchain } from "../toolchain/index"
import { Proc } from "../process.ts"
import { JUnit } from "../results/junit.ts"
import { JUnitFiles } from "../gates/junit-files"
import { TestRun, TestRunners } from "../gates/runners/index.ts"
import { Sandbox } from "../sandbox/sandbox"
import { SandboxExec } from "../sandbox/exec"
import { BudgetExec } from "../jobs/exec"
import { RunJobs } from "../jobs/run-jobs"
import { Results } from "../results/index.ts"
import { ProgressWriter } from "../gates/progress.ts"
import { GateProgress } from "../store/gate-progress.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * After the last merge, the Scheduler builds and tests the integration branch itself: each task passed
 * its gates on its own branch, and only this run shows that together they still build and pass.
 * Evidence goes to .air/local/evidence/_final/.
 */
export namespace FinalCheck {
  export type Result = { passed: boolean; summary: string; evidenceDir: string; commands: { command: string; code: number }[]; reused?: Results.Reused }

  export function dir(root: string): string {
    return AirPaths.evidence(root, "_final")
  }

  type Exec = (
    command: string,
    args: readonly string[],
    options: { cwd: string; env: NodeJS.ProcessEnv; shell: boolean; timeoutMs: number; onOutput?: (chunk: Buffer) => void },
  ) => Promise<Proc.Result>
  const processExec: Exec = (command, args, options) => Proc.run(command, args, options)

  /** Through the one process runner: a timeout kills the shell and everything it started (a hung ctest too). */
  async function sh(exec: Exec, command: string, cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv, onOutput?: (chunk: Buffer) => void): Promise<{ code: number; output: string; how: string }> {
    const r = await exec(command, [], { cwd, env, shell: true, timeoutMs, ...(onOutput ? { onOutput } : {}) })
    const code = r.spawnError ? 127 : r.timedOut ? 124 : (r.code ?? 128)
    return { code, output: r.output, how: Proc.describe(r, timeoutMs) }
  }

  export type Options = {
    /**
     * The OS sandbox, as for the gates: "on" (no sandbox → the check fails saying why), "fallback" (the
     * user allowed running without it), "off" (tests). Default from the settings' `sandboxFallback`.
     */
    sandbox?: "on" | "fallback" | "off"
    /** Tests that failed on the run's baseline (the user went on with them): not a failure here either. */
    knownFailingTests?: readonly string[]
  }


  export async function run(root: string, options: Options = {}): Promise<Result> {
    const known = new Set(options.knownFailingTests ?? [])
    const inherited: string[] = []
    const { rules, note } = await Toolchain.load(root)
    const out = dir(root)
    const commands: Result["commands"] = []
    let log = `# ${note}\n`
    let lastHow = ""
    // Through the compiler cache the task worktrees filled: the same sources hit at the project root too.
    const env = await Toolchain.commandEnv(rules, { root, worktree: root }, process.env)
    // The merged tree's CMakeLists.txt and tests are the tasks' code: they run in the gates' sandbox, with
    // the project root writable (its build dir) but its .git and .air (the run's state) read-only.
    const mode = options.sandbox ?? SandboxExec.modeOf(root)
    const check = mode === "off" ? undefined : Sandbox.check()
    if (check && !check.ok && mode === "on") {
      const result: Result = {
        passed: false,
        summary: `the integration branch was not built: its build and tests run only inside the OS sandbox, which cannot start here: ${check.message}. Install it, or allow running without it ("sandboxFallback": true in ${AirPaths.CONFIG}).`,
        evidenceDir: out,
        commands: [],
      }
      await writeFileAtomic(join(out, "final.log"), `# ${result.summary}\n`)
      await writeFileAtomic(join(out, "result.json"), JSON.stringify(result, null, 2))
      return result
    }
    const sandboxedExec: Exec = check?.ok ? SandboxExec.wrap(processExec, { root, worktree: root, network: Toolchain.networkFor(rules), readOnly: [AirPaths.air(root)] }) : processExec
    // The run's one job budget around the final check's commands.
    const exec: Exec = BudgetExec.wrap(sandboxedExec, RunJobs.of(root), "final check")
    if (check && !check.ok) log += `# without the OS sandbox (allowed by sandboxFallback): ${check.message}\n`
    // After a fast-forward merge the integration head is the tree a task's gates just passed: reused, nothing runs.
    const where = { root, dir: root, rules, sandboxed: check?.ok === true, env: process.env }
    const looked = await Results.lookup(where, "final check")
    if (looked.hit) {
      const reused = await Results.reused(where, looked.hit, "final check")
      const result: Result = { passed: true, summary: `integration branch builds and its tests pass: ${Results.describe(reused)}`, evidenceDir: out, commands: [], reused }
      await writeFileAtomic(join(out, "final.log"), `${log}# ${Results.describe(reused)}\n`)
      await writeFileAtomic(join(out, "result.json"), JSON.stringify(result, null, 2))
      return result
    }
    if (looked.reason) log += `# results store: ${looked.reason}\n`
    const started = Date.now()
    let buildMs = 0
    const tests: JUnit.Results = {}
    const junit = join(root, Toolchain.BUILD_DIR, `final-${JUnit.CTEST_FILE}`)
    const report = join(root, Toolchain.BUILD_DIR, `final-${TestRunners.REPORT_FILE}`)
    // The project's own JUnit reports name the failing tests too: stale ones from an earlier build must not.
    if ((known.size > 0 || looked.key) && rules.test.length > 0) await JUnitFiles.clear(root, rules.junit)
    for (const command of [...rules.build, ...rules.test]) {
      const isTest = (known.size > 0 || looked.key !== undefined) && rules.test.includes(command) && !rules.build.includes(command)
      if (isTest && buildMs === 0) buildMs = Date.now() - started
      // A known runner (pytest, vitest, jest, go, cargo) is read per test whenever it runs a test command.
      const isTestCommand = rules.test.includes(command) && !rules.build.includes(command)
      const prepared = isTestCommand ? await TestRunners.prepare(command, report) : { run: command }
      const run = prepared.runner ? prepared.run : (isTest && JUnit.withCtestJunit(command, junit)) || command
      if (!prepared.runner && run !== command) await rm(junit, { force: true })
      // The views see the final check move (step, count, time) as they see a task's gates.
      const progress = new ProgressWriter(root, GateProgress.CHECK_IDS.final, rules.test.includes(command) && !rules.build.includes(command) ? "test" : "build", run)
      const r = await sh(exec, run, root, rules.timeoutMs, TestRunners.env(prepared.runner, env), progress.onOutput).finally(() => progress.end())
      const read = prepared.runner ? await TestRunners.read(prepared.runner, { output: r.output, code: r.code, report, cwd: root }) : undefined
      if (!prepared.runner && isTest && run !== command) Object.assign(tests, JUnit.results(JUnit.parse(await readFile(junit, "utf8").catch(() => "")) ?? []))
      if (read?.ok) Object.assign(tests, read.result.tests)
      // Only tests that already failed on the baseline failing: inherited, the check goes on.
      const failing = read?.ok
        ? read.result.failures.map((f) => f.name)
        : isTest && r.code !== 0 && !read
          ? await failingTests(run !== command ? junit : undefined, root, rules.junit)
          : []
      const onlyKnown = failing.length > 0 && failing.every((name) => known.has(name))
      if (onlyKnown) inherited.push(...failing)
      // A runner's failing test fails the check though its command exited 0; output it cannot read is no pass.
      const code = onlyKnown ? 0 : r.code === 0 && (failing.length > 0 || read?.ok === false) ? 1 : r.code
      commands.push({ command, code })
      lastHow = read && !read.ok ? `${r.how}; ${read.why}` : failing.length > 0 && !onlyKnown && r.code === 0 ? `${r.how}, but its runner names failing tests: ${failing.join(", ")}` : r.how
      const runNote = read?.ok ? `; ${TestRun.describe(read.result)}` : read ? `; ${read.why}` : ""
      log += `$ ${run}\n${r.output}\n# ${r.how} (exit ${r.code})${runNote}${onlyKnown ? `; inherited from the baseline: ${failing.join(", ")}` : ""}\n`
      if (code !== 0) break
    }
    const passed = commands.length > 0 && commands.every((c) => c.code === 0)
    const summary = commands.length === 0
      ? `no build or test command to run on the integration branch (${note})`
      : passed
        ? `integration branch builds and its tests pass (${commands.length} command(s))${inherited.length > 0 ? `, but for tests failing before the run (inherited): ${inherited.join(", ")}` : ""}`
        : `integration branch FAILS: \`${commands.at(-1)!.command}\` ${lastHow}; see ${join(out, "final.log")}`
    const result: Result = { passed, summary, evidenceDir: out, commands }
    if (passed && looked.key && inherited.length === 0) {
      Object.assign(tests, JUnitFiles.results(await JUnitFiles.read(root, rules.junit)) ?? {})
      const source = Object.keys(tests).length > 0 ? "junit" : "none"
      await Results.record(where, looked.key, { buildMs, testMs: Date.now() - started - buildMs, source, tests }, "final check")
    }
    await writeFileAtomic(join(out, "final.log"), log)
    await writeFileAtomic(join(out, "result.json"), JSON.stringify(result, null, 2))
    return result
  }

  /**
   * The build commands alone at the project root, never reused from the results store: a deploy stages
   * the artefacts of the tree it carries, and a final check that was reused built nothing there. Same
   * sandbox and job budget as the final check; evidence in `out` (never `_final`, which recovery reads).
   */
  export async function build(root: string, out: string, options: Pick<Options, "sandbox"> = {}): Promise<Result> {
    const { rules, note } = await Toolchain.load(root)
    const env = await Toolchain.commandEnv(rules, { root, worktree: root }, process.env)
    const mode = options.sandbox ?? SandboxExec.modeOf(root)
    const check = mode === "off" ? undefined : Sandbox.check()
    const commands: Result["commands"] = []
    let log = `# ${note}\n`
    const finish = async (passed: boolean, summary: string): Promise<Result> => {
      const result: Result = { passed, summary, evidenceDir: out, commands }
      await writeFileAtomic(join(out, "build.log"), log)
      await writeFileAtomic(join(out, "result.json"), JSON.stringify(result, null, 2))
      return result
    }
    if (check && !check.ok && mode === "on") return finish(false, `the build for the deploy runs only inside the OS sandbox, which cannot start here: ${check.message}`)
    const sandboxedExec: Exec = check?.ok ? SandboxExec.wrap(processExec, { root, worktree: root, network: Toolchain.networkFor(rules), readOnly: [AirPaths.air(root)] }) : processExec
    const exec: Exec = BudgetExec.wrap(sandboxedExec, RunJobs.of(root), "deploy build")
    for (const command of rules.build) {
      const r = await sh(exec, command, root, rules.timeoutMs, env)
      commands.push({ command, code: r.code })
      log += `$ ${command}\n${r.output}\n# ${r.how} (exit ${r.code})\n`
      if (r.code !== 0) return finish(false, `the build for the deploy FAILS: \`${command}\` ${r.how}; see ${join(out, "build.log")}`)
    }
    return finish(true, commands.length ? `built for the deploy (${commands.length} command(s))` : `no build command (${note}): the artefacts are deployed as they are`)
  }

  /** The failing tests CTest's JUnit file (when asked for) and the project's own reports name. */
  async function failingTests(ctestFile: string | undefined, root: string, patterns: readonly string[]): Promise<string[]> {
    const ctest = ctestFile ? (JUnit.parse(await readFile(ctestFile, "utf8").catch(() => "")) ?? []) : []
    const reported = JUnitFiles.results(await JUnitFiles.read(root, patterns)) ?? {}
    return [...new Set([...JUnit.failed(JUnit.results(ctest)), ...JUnit.failed(reported)])]
  }

  export function read(root: string): Result | undefined {
    const file = join(dir(root), "result.json")
    if (!existsSync(file)) return undefined
    try {
      return JSON.parse(readFileSync(file, "utf8"))
    } catch {
      return undefined
    }
  }
}
