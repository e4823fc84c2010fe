import { existsSync } from "node:fs"
import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { BASELINE_STATUSES, type BaselineStatus } from "../../core/baseline"
import { writeFileAtomic } from "../store/atomic"
import { firstError } from "../gates/build"
import { JUnit } from "../results/junit.ts"
import { TestRun, TestRunners, type TestRunner } from "../gates/runners/index.ts"
import { JUnitFiles } from "../gates/junit-files"
import { processExec } from "../gates/pipeline"
import type { Exec } from "../gates/gate"
import { failingTestNames } from "../gates/test"
import { git } from "../git/git"
import { Proc } from "../process"
import { Sandbox } from "../sandbox/sandbox"
import { SandboxExec } from "../sandbox/exec"
import { Toolchain } from "../toolchain/index"
import { Worktrees } from "../git/worktree"
import { BudgetExec } from "../jobs/exec"
import { RunJobs } from "../jobs/run-jobs"
import { Results } from "../results/index.ts"
import { Selection } from "../results/selection.ts"
import { ProgressWriter } from "../gates/progress.ts"
import { GateProgress } from "../store/gate-progress.ts"
import { AirPaths } from "../../core/air-paths"
import { MergeBuild } from "./merge-build.ts"
import { queued } from "./merge-lock.ts"

/**
 * The run's baseline (`runBaseline`): the integration head built and tested once per commit in a detached
 * worktree of its own (submodules from the user's checkout, the shared compiler cache), before any task
 * is dispatched. Its record, `.air/local/evidence/_baseline/<commit>/baseline.json`, is what the test gate
 * judges a task against: a test that already failed here is inherited, not blamed. A record on disk for
 * the same commit is reused (a restart, a second run on the same head).
 *
 * The commands are the project's own build and tests, so they run in the gates' OS sandbox: the baseline
 * worktree writable (its build dir), the repository's .git, the run's .air and everything else read-only,
 * secrets hidden. No sandbox and no `sandboxFallback`: nothing runs, and the baseline errors (the user is
 * asked).
 */
export namespace Baseline {
  export const Step = z
    .object({
      ran: z.boolean(),
      passed: z.boolean(),
      ms: z.number().int().nonnegative(),
      /** The command that failed, and the first error in its output (the compiler's, CMake's), for people. */
      command: z.string().optional(),
      firstError: z.string().optional(),
    })
    .strict()

  export const Record = z
    .object({
      commit: z.string().min(1),
      status: z.enum(BASELINE_STATUSES),
      build: Step,
      test: Step.extend({ source: z.enum(["junit", "ctest-output", "none"]) }).strict(),
      /** Test name → passed | failed | skipped (CTest's JUnit file, the project's own `junit` reports; failed names from CTest's summary otherwise). */
      tests: JUnit.Results,
      failingTests: z.array(z.string()),
      /** One line for the question and the notice: the failing command and the first error. */
      message: z.string(),
      at: z.string(),
      /** Set when nothing ran: a passing result recorded for the same build inputs was reused (runtime/results/). */
      reused: z.object({ commit: z.string(), at: z.string(), key: z.string(), savedMs: z.number().int().nonnegative(), tests: z.number().int().nonnegative(), source: z.string() }).strict().optional(),
    })
    .strict()
  export type Record = z.infer<typeof Record>

  export const FILE = "baseline.json"

  export function evidenceDir(root: string, commit: string): string {
    return AirPaths.evidence(root, "_baseline", commit)
  }

  /** The record of `commit`, if one was written (a malformed one counts as none). */
  export async function read(root: string, commit: string): Promise<Record | undefined> {
    const text = await readFile(path.join(evidenceDir(root, commit), FILE), "utf8").catch(() => undefined)
    if (text === undefined) return undefined
    try {
      return Record.parse(JSON.parse(text))
    } catch {
      return undefined
    }
  }

  export interface Options {
    /** Rules to use instead of toolchain.json / detection. */
    rules?: Toolchain.Rules
    env?: NodeJS.ProcessEnv
    now?: () => Date
    /** As the gates: "on" (default unless the settings allow a fallback), "fallback", "off" (the caller's exec). */
    sandbox?: "on" | "fallback" | "off"
    /** How commands run (a sandbox wraps it). */
    exec?: Exec
  }

  /** Builds and tests `ref` (the integration branch) unless its commit already has a record. */
  export async function run(root: string, ref: string, options: Options = {}): Promise<Record> {
    const top = await Worktrees.repoRoot(root)
    const commit = (await git(top, ["rev-parse", `${ref}^{commit}`])).trim()
    const known = await read(top, commit)
    const rules = options.rules ?? (await Toolchain.load(top)).rules
    if (known) {
      RunJobs.recordBaseline(top, rules, known.build.ms + known.test.ms)
      return known
    }
    const now = options.now ?? (() => new Date())
    const dir = evidenceDir(top, commit)
    await mkdir(dir, { recursive: true })
    if (rules.build.length === 0 && rules.test.length === 0) {
      const skipped = notRun()
      return save(dir, { commit, status: "skipped", build: skipped, test: { ...skipped, source: "none" }, tests: {}, failingTests: [], message: "no build or test command in the toolchain", at: now().toISOString() })
    }
    const exec = sandboxed(top, rules, options)
    // `aircoding init`'s baseline, a task's gates or another machine may have passed these very build inputs.
    const mode = options.sandbox ?? SandboxExec.modeOf(top)
    const where = { root: top, dir: top, rules, sandboxed: mode !== "off" && Sandbox.check().ok, env: options.env ?? process.env, commit }
    const looked = options.exec ? undefined : await Results.lookup(where, "baseline")
    if (looked?.hit) {
      const reused = await Results.reused(where, looked.hit, "baseline")
      const { entry } = looked.hit
      await writeFile(path.join(dir, "test.log"), `# ${Results.describe(reused)}\n`)
      return save(dir, {
        commit,
        status: "passed",
        build: { ran: true, passed: true, ms: 0 },
        test: { ran: true, passed: true, ms: 0, source: entry.test.source },
        tests: entry.test.tests,
        failingTests: [],
        message: Results.describe(reused),
        at: now().toISOString(),
        reused,
      })
    }
    await Worktrees.ensureExcluded(top)
    const build = (worktree: string, keep: boolean) => inWorktree({ top, commit, dir, rules, options, exec, looked, where, now }, worktree, keep)
    const own = AirPaths.baseline(top, `run-${commit.slice(0, 12)}`)
    // With no merge worktree yet (the run's first baseline), the baseline builds there and leaves it: the first merge
    // that must build goes on from its build directory (no configure, no build from nothing), and no tree is removed
    // before baseline.done. In the merge queue's turn, so no merge checks out there meanwhile; once a merge made
    // it, it is the merge build's, and the baseline builds in a tree of its own, removed after.
    const merge = MergeBuild.worktreeOf(top)
    if (existsSync(merge)) return build(own, false)
    return queued(root, () => (existsSync(merge) ? build(own, false) : build(merge, true)))
  }

  interface Taken {
    top: string
    commit: string
    dir: string
    rules: Toolchain.Rules
    options: Options
    exec: (worktree: string) => { exec: Exec; note?: string }
    looked: Awaited<ReturnType<typeof Results.lookup>> | undefined
    where: Parameters<typeof Results.record>[0]
    now: () => Date
  }

  /** The build and tests in a detached worktree at the commit; `keep`: left there when they ran to the end. */
  async function inWorktree({ top, commit, dir, rules, options, exec, looked, where, now }: Taken, worktree: string, keep: boolean): Promise<Record> {
    await Worktrees.dropDetached(top, worktree)
    await git(top, ["worktree", "add", "--detach", worktree, commit])
    let done = false
    try {
      await Worktrees.checkoutSubmodules(top, worktree)
      const statsLog = path.join(path.resolve(top, rules.cache.dir), "stats", "_baseline.log")
      await mkdir(path.dirname(statsLog), { recursive: true })
      const env = await Toolchain.commandEnv(rules, { root: top, worktree, statsLog }, options.env ?? process.env)
      const inner = exec(worktree)
      // The run's one job budget around the baseline's commands.
      const budgeted = BudgetExec.wrap(inner.exec, RunJobs.of(top), "baseline")
      // The views see the baseline move (step, count, time) as they see a task's gates.
      const run: Run = (command, gate, runner) => {
        const progress = new ProgressWriter(top, GateProgress.CHECK_IDS.baseline, gate, command)
        return budgeted(command, [], { cwd: worktree, env: TestRunners.env(runner, env), shell: true, timeoutMs: rules.timeoutMs, onOutput: progress.onOutput }).finally(() => progress.end())
      }
      const build = await buildStep(rules.build, worktree, dir, run, inner.note)
      const test = build.passed ? await testStep(rules, worktree, dir, run) : { step: { ...notRun(), source: "none" as const }, tests: {} }
      const failingTests = JUnit.failed(test.tests)
      const status: BaselineStatus = build.passed && test.step.passed ? "passed" : "failed"
      const message = !build.passed
        ? `\`${build.command}\` failed${build.firstError ? `: ${build.firstError.split("\n")[0]}` : ""}`
        : !test.step.passed
          ? `\`${test.step.command}\` failed${failingTests.length > 0 ? `: ${failingTests.join(", ")}` : ""}`
          : ""
      // Gates scale their timeout from what the project takes to build and test here.
      RunJobs.recordBaseline(top, rules, build.ms + test.step.ms)
      if (looked?.key && status === "passed") {
        // Each test's print, for selecting the tests a task's change reaches (results/selection.ts).
        const prints = Toolchain.resultsRules(rules).selection ? await Selection.prints(inner.exec, worktree, rules, env) : undefined
        await Results.record(where, looked.key, { buildMs: build.ms, testMs: test.step.ms, source: test.step.source, tests: test.tests, ...(prints ? { prints } : {}) }, "baseline")
      }
      const record = await save(dir, { commit, status, build, test: test.step, tests: test.tests, failingTests, message, at: now().toISOString() })
      done = true
      return record
    } finally {
      if (!keep || !done) await Worktrees.dropDetached(top, worktree)
    }
  }

  type Run = (command: string, gate: "build" | "test", runner?: TestRunner) => Promise<Proc.Result>

  /**
   * The exec for a worktree, sandboxed as the gates' is; throws before anything runs when the sandbox
   * cannot start and the user did not allow running without it.
   */
  function sandboxed(top: string, rules: Toolchain.Rules, options: Options): (worktree: string) => { exec: Exec; note?: string } {
    const inner = options.exec ?? processExec
    const mode = options.sandbox ?? SandboxExec.modeOf(top)
    if (mode === "off") return () => ({ exec: inner })
    const check = Sandbox.check()
    if (check.ok) return (worktree) => ({ exec: SandboxExec.wrap(inner, { root: top, worktree, network: Toolchain.networkFor(rules) }) })
    if (mode === "on")
      throw new Error(
        `the baseline runs the project's build and tests only inside the OS sandbox, and it cannot start here: ${check.message}. ` +
          `Install it, or allow running without it ("sandboxFallback": true in ${AirPaths.CONFIG}).`,
      )
    return () => ({ exec: inner, note: `# without the OS sandbox (allowed by sandboxFallback): ${check.message}\n` })
  }

  async function buildStep(commands: readonly string[], worktree: string, dir: string, exec: Run, note = ""): Promise<z.infer<typeof Step>> {
    const started = Date.now()
    let log = note
    for (const command of commands) {
      const result = await exec(command, "build")
      const output = result.output.split(worktree + "/").join("")
      log += `$ ${command}\n${output}\n# ${Proc.describe(result)}\n\n`
      if (!result.ok) {
        await writeFile(path.join(dir, "build.log"), log)
        const first = firstError(output)
        return { ran: true, passed: false, ms: Date.now() - started, command, ...(first ? { firstError: first } : {}) }
      }
    }
    await writeFile(path.join(dir, "build.log"), log)
    return { ran: commands.length > 0, passed: true, ms: Date.now() - started }
  }

  /**
   * Every test command runs (a failing one does not hide the next one's results). Per-test results come
   * from CTest's JUnit file (asked for) and the project's own reports (toolchain.json `junit`, cleared
   * first, read after the last command); a test they name failing fails the baseline even when its command
   * exited 0, as it would fail a task's test gate.
   */
  async function testStep(rules: Toolchain.Rules, worktree: string, dir: string, exec: Run) {
    const commands = rules.test
    const started = Date.now()
    let log = ""
    let tests: JUnit.Results = {}
    let source: "junit" | "ctest-output" | "none" = "none"
    let failed: string | undefined
    if (commands.length > 0) await JUnitFiles.clear(worktree, rules.junit)
    for (const [i, command] of commands.entries()) {
      const junitFile = path.join(worktree, Toolchain.BUILD_DIR, `${i}-${JUnit.CTEST_FILE}`)
      await mkdir(path.dirname(junitFile), { recursive: true })
      await rm(junitFile, { force: true })
      const reportFile = path.join(worktree, Toolchain.BUILD_DIR, `${i}-${TestRunners.REPORT_FILE}`)
      const prepared = await TestRunners.prepare(command, reportFile)
      const run = prepared.run === command ? (JUnit.withCtestJunit(command, junitFile) ?? command) : prepared.run
      const result = await exec(run, "test", prepared.runner)
      const output = result.output.split(worktree + "/").join("")
      log += `$ ${run}\n${output}\n# ${Proc.describe(result)}\n\n`
      if (prepared.runner) {
        // A known runner's tests, named as the test gate names them; a run it cannot read is a failed baseline.
        const read = await TestRunners.read(prepared.runner, { output: result.output, code: result.code, report: reportFile, cwd: worktree })
        if (read.ok) {
          await writeFile(path.join(dir, `test-results-${i + 1}.json`), JSON.stringify(read.result, null, 2) + "\n")
          tests = { ...tests, ...read.result.tests }
          source = "junit"
          log += `# ${TestRun.describe(read.result)}\n\n`
          if (read.result.failures.length > 0 && failed === undefined) failed = command
        } else log += `# ${read.why}\n\n`
        if ((!result.ok || !read.ok) && failed === undefined) failed = command
        continue
      }
      const xml = await readFile(junitFile, "utf8").catch(() => undefined)
      const cases = xml === undefined ? undefined : JUnit.parse(xml)
      if (xml !== undefined) await writeFile(path.join(dir, `ctest-${i}.xml`), xml)
      if (cases) {
        tests = { ...tests, ...JUnit.results(cases) }
        source = "junit"
      } else if (!result.ok) {
        for (const name of failingTestNames(output)) tests[name] = "failed"
        if (source === "none") source = "ctest-output"
      }
      if (!result.ok && failed === undefined) failed = command
    }
    const reports = commands.length > 0 ? await JUnitFiles.read(worktree, rules.junit) : []
    for (const r of reports) await writeFile(path.join(dir, JUnitFiles.evidenceName(r.file)), r.xml)
    const reported = JUnitFiles.results(reports)
    if (reported) {
      tests = { ...tests, ...reported }
      source = "junit"
    }
    if (failed === undefined && reported && JUnit.failed(reported).length > 0) failed = commands.at(-1)
    log += rules.junit.length === 0 ? "" : `# JUnit reports (${rules.junit.join(", ")}): ${reports.map((r) => r.file).join(", ") || "none found"}\n`
    await writeFile(path.join(dir, "test.log"), log)
    const step = { ran: commands.length > 0, passed: failed === undefined, ms: Date.now() - started, ...(failed ? { command: failed } : {}), source }
    return { step, tests }
  }

  function notRun(): z.infer<typeof Step> {
    return { ran: false, passed: true, ms: 0 }
  }

  async function save(dir: string, record: Record): Promise<Record> {
    const checked = Record.parse(record)
    await writeFileAtomic(path.join(dir, FILE), JSON.stringify(checked, null, 2) + "\n", { backup: false })
    return checked
  }

}
