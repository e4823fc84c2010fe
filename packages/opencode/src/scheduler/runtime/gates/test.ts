import { mkdir, readFile, rm } from "node:fs/promises"
import path from "node:path"
import { Toolchain } from "../toolchain/index.ts"
import type { Failure, Gate, GateContext, GateOutcome } from "./gate.ts"
import { JUnit } from "../results/junit.ts"
import { JUnitFiles } from "./junit-files.ts"
import { TOOL_MISSING } from "./schema.ts"
import { commandEvidenceMissing, runCommands } from "./command.ts"
import { indent, lastLines, listSome } from "./text.ts"
import { Results } from "../results/index.ts"
import { Selection } from "../results/selection.ts"
import { Proc } from "../process.ts"
import { TestRun, TestRunners } from "./runners/index.ts"
import { StepTimes } from "./step-times.ts"

export const TEST_LOG = "test.log"
const NO_TESTS = "the test commands passed but found no tests (ctest: No tests were found)"

/**
 * The toolchain's test commands pass in the worktree; a failure names the failing tests (CTest's JUnit file,
 * the project's own JUnit reports, CTest's summary) and quotes their output. Passing commands that found no test at all (CTest exits 0) are not evidence.
 */
export const testGate = {
  id: "test",
  tree: "build",
  reportsNotRun: true,
  provides: "test",
  requiredFor: ["code", "fix", "refactor", "ui", "service", "test", "verify"],
  route: "debugger",
  logs: [TEST_LOG, StepTimes.fileName("test")],
  async run(outer: GateContext) {
    const times = new StepTimes.Recorder("test")
    try {
      return await runTimed({ ...outer, exec: times.exec(outer.exec) }, times)
    } finally {
      await outer.write(StepTimes.fileName("test"), JSON.stringify(times, null, 2) + "\n").catch(() => undefined)
    }
  },
  missingEvidence: (ctx, result) => commandEvidenceMissing(ctx, "test", result),
} as const satisfies Gate

async function runTimed(ctx: GateContext, times: StepTimes.Recorder): Promise<GateOutcome> {
    // The same build inputs passed before (this task's earlier attempt, another task, the baseline, another machine): reuse.
    const where = resultsWhere(ctx)
    const looked = where ? await times.step("lookup", () => Results.lookup(where, `test gate, ${ctx.label}`)) : undefined
    if (where && looked?.hit) {
      const reused = await Results.reused(where, looked.hit, `test gate, ${ctx.label}`)
      const tests = Object.entries(looked.hit.entry.test.tests).map(([name, outcome]) => `#   ${name}: ${outcome}`)
      const logPath = await ctx.write(TEST_LOG, `# ${Results.describe(reused)}
# no test ran; the recorded results:
${tests.join("\n")}
`)
      return { ran: true, summary: Results.describe(reused), logPath, reused }
    }
    const started = Date.now()
    const buildMs = ctx.results.find((r) => r.gate === "build")?.ms ?? 0
    // Otherwise only the tests whose binaries and data differ from the base's passing run (selection.ts).
    const selected = where && looked?.key ? await times.step("selection", () => Selection.forGate(ctx, where)) : undefined
    const command = selected && selected.plan.run.length > 0 ? Selection.restricted(ctx.rules.test[0]!, selected.plan.run) : undefined
    if (where && looked?.key && selected && (selected.plan.run.length === 0 || command)) {
      const { plan } = selected
      // Nothing to run and nothing to reuse: the project registers no test, which is not evidence (as CTest's "No tests were found").
      if (plan.run.length === 0 && plan.reuse.length === 0) return { ran: false, summary: NO_TESTS }
      const reusedTests = Object.fromEntries(plan.reuse.map((name) => [name, "passed" as const]))
      const savedMs = Math.round((plan.base.test.ms * plan.reuse.length) / Math.max(1, Object.keys(plan.base.test.tests).length))
      const reused: Results.Reused = { commit: plan.base.commit, at: plan.base.at, key: plan.base.key, savedMs, tests: plan.reuse.length, source: "selection" }
      const note = `reused ${plan.reuse.length} test(s) whose binaries, libraries, command lines and data are identical to the passing run on ${plan.base.commit.slice(0, 12)} (key ${plan.base.key.slice(0, 16)})`
      if (plan.run.length === 0) {
        const logPath = await ctx.write(TEST_LOG, `# ${note}; no test ran:\n${plan.reuse.map((name) => `#   ${name}: passed (reused)`).join("\n")}\n`)
        await Results.record(where, looked.key, { buildMs, testMs: savedMs, source: plan.base.test.source, tests: reusedTests, prints: plan.prints }, `test gate, ${ctx.label}`)
        await Results.reused(where, { entry: plan.base, source: "selection" }, `test gate selection, ${ctx.label}`)
        return { ran: true, summary: `${note}; no test ran`, logPath, reused }
      }
      const narrowed = { ...ctx, rules: { ...ctx.rules, test: [command!] } }
      const { outcome, runnerTests } = await times.step("tests", () => judgeTests(narrowed))
      if (outcome.failure || !outcome.ran) return outcome
      if (ctx.inheritedTests.length === 0) {
        const key = looked.key
        await times.step("record", async () => {
          const { tests } = await passedResults(narrowed, runnerTests)
          await Results.record(where, key, { buildMs, testMs: Date.now() - started + savedMs, source: "junit", tests: { ...reusedTests, ...tests }, prints: plan.prints }, `test gate, ${ctx.label}`)
        })
      }
      return { ...outcome, summary: `ran ${plan.run.length} test(s) whose binaries or data changed (${listSome(plan.run, 5)}): ${outcome.summary}; ${note}`, ...(plan.reuse.length > 0 ? { reused } : {}) }
    }
    const { outcome, runnerTests } = await times.step("tests", () => judgeTests(ctx))
    if (where && looked?.key && outcome.ran && !outcome.failure && ctx.inheritedTests.length === 0) {
      const key = looked.key
      const { tests, source } = await times.step("record", () => passedResults(ctx, runnerTests))
      const prints = Toolchain.resultsRules(ctx.rules).selection ? await times.step("prints", () => Selection.prints(ctx.exec, ctx.worktree, ctx.rules, ctx.env)) : undefined
      await times.step("record", () => Results.record(where, key, { buildMs, testMs: Date.now() - started, source, tests, ...(prints ? { prints } : {}) }, `test gate, ${ctx.label}`))
    }
    return outcome
}

/**
 * Runs the test commands one by one (CTest asked for its JUnit file, a known runner for its report, the
 * project's own JUnit reports cleared first) and judges the failing tests against the baseline: a command
 * whose failing tests all failed on the baseline too is inherited, and the commands after it still run; a
 * test that passed there, or is new, failing fails the gate, even when its command exited 0 (a runner told to
 * ignore failures still names them in its report). A runner's output that cannot be read is said, never taken
 * for a pass; a runner that ran no test is not evidence.
 */
async function judgeTests(ctx: GateContext): Promise<Judged> {
  const junitFiles = ctx.rules.test.map((_, i) => path.join(ctx.worktree, Toolchain.BUILD_DIR, `${i}-${JUnit.CTEST_FILE}`))
  const reportFiles = ctx.rules.test.map((_, i) => path.join(ctx.worktree, Toolchain.BUILD_DIR, `${i}-${TestRunners.REPORT_FILE}`))
  const known = new Set(ctx.baseline?.failingTests ?? [])
  const runnerTests: JUnit.Results = {}
  const runs: string[] = []
  const commands = ctx.rules.test
  if (commands.length === 0) return { outcome: await runCommands(ctx, "test", TEST_LOG, () => ({ summary: "", message: "" })), runnerTests }
  await JUnitFiles.clear(ctx.worktree, ctx.rules.junit)
  // One log for the commands up to one whose failures are inherited; the next ones start the next log.
  let logName = TEST_LOG
  let logText = ""
  let written = ""
  const seen: { last?: Proc.Result } = {}
  let commandFailed = false
  // Read through a function: the closure above sets it, which the compiler's narrowing cannot see.
  const lastRun = (): Proc.Result | undefined => seen.last
  const judged: GateContext = {
    ...ctx,
    write: (name, data) => (name === logName ? ((written = logText + data), ctx.write(name, written)) : ctx.write(name, data)),
    exec: async (...args) => (seen.last = await ctx.exec(...args)),
  }
  let outputs = ""
  let logPath: string | undefined
  for (const [i, original] of commands.entries()) {
    await mkdir(path.dirname(junitFiles[i]!), { recursive: true })
    await rm(junitFiles[i]!, { force: true })
    const prepared = await TestRunners.prepare(original, reportFiles[i]!)
    const command = prepared.run === original ? (JUnit.withCtestJunit(original, junitFiles[i]!) ?? original) : prepared.run
    delete seen.last
    let failedOutput = ""
    let failedWhat = "failed"
    const outcome = await runCommands({ ...judged, env: TestRunners.env(prepared.runner, ctx.env), rules: { ...ctx.rules, test: [command] } }, "test", logName, (cmd, what, out, log) => {
      failedOutput = out
      failedWhat = what
      return explain(ctx, cmd, what, out, log, [], [])
    })
    logText = written
    if (outcome.logPath) logPath = outcome.logPath
    if (outcome.failure?.gate === TOOL_MISSING) return { outcome, runnerTests }
    const output = outcome.failure ? failedOutput : (outcome.output ?? "")
    outputs += outcome.output ?? ""
    let inherited: string[] = []
    if (prepared.runner) {
      const ran = lastRun()
      const code = ran?.code ?? (outcome.failure ? 1 : 0)
      const read = await TestRunners.read(prepared.runner, { output: ran?.output ?? output, code, report: reportFiles[i]!, cwd: ctx.worktree })
      if (!read.ok) {
        const failure = outcome.failure
          ? { ...outcome.failure, message: `${outcome.failure.message}\n(${read.why}: no per-test result.)` }
          : unreadable(ctx, original, read.why, outcome.logPath ?? TEST_LOG)
        return { outcome: { ...outcome, summary: failure.summary, failure }, runnerTests }
      }
      const result = read.result
      await ctx.write(`test-results-${i + 1}.json`, JSON.stringify(result, null, 2) + "\n")
      runs.push(TestRun.describe(result))
      if (result.failures.length === 0 && TestRunners.ranNoTest(prepared.runner, result, code))
        return { outcome: { ran: false, summary: `\`${original}\` ran no test (${result.framework} found none)`, ...(logPath ? { logPath } : {}) }, runnerTests }
      Object.assign(runnerTests, result.tests)
      const failing = result.failures.map((f) => f.name)
      const blamed = failing.filter((name) => !known.has(name))
      inherited = failing.filter((name) => known.has(name))
      if (blamed.length > 0) {
        const failure = explainRun(ctx, original, outcome.failure ? failedWhat : "exited 0, but its runner names failing tests", result, blamed, inherited, outcome.logPath ?? TEST_LOG)
        return { outcome: { ran: true, summary: failure.summary, ...(logPath ? { logPath } : {}), failure }, runnerTests }
      }
      // Failed with no failing test read (a crash, a usage error): judged by its exit code.
      if (outcome.failure && failing.length === 0) return { outcome, runnerTests }
    } else if (outcome.failure) {
      // Which tests failed: CTest's JUnit file and the project's reports first, CTest's summary when there is neither.
      const xml = await readFile(junitFiles[i]!, "utf8").catch(() => undefined)
      if (xml !== undefined) await ctx.write(`ctest-${i + 1}.xml`, xml)
      const cases = xml === undefined ? undefined : JUnit.parse(xml)
      const reported = await projectResults(ctx)
      const failing =
        cases || reported ? [...new Set([...JUnit.failed(JUnit.results(cases ?? [])), ...JUnit.failed(reported ?? {})])] : failingTestNames(failedOutput)
      const blamed = failing.filter((name) => !known.has(name))
      inherited = failing.filter((name) => known.has(name))
      if (failing.length === 0 || blamed.length > 0) {
        const failure = explain(ctx, original, failedWhat, failedOutput, outcome.logPath ?? TEST_LOG, blamed.length > 0 ? blamed : failing, inherited)
        return { outcome: { ...outcome, summary: failure.summary, failure }, runnerTests }
      }
    }
    if (inherited.length > 0 || outcome.failure) {
      noteInherited(ctx, inherited)
      if (outcome.failure) {
        commandFailed = true
        logName = `test-${i + 2}.log`
        logText = ""
      }
    }
  }
  let reportNote = ""
  if (ctx.rules.junit.length > 0) {
    // Every command exited 0 (or failed only as the baseline did): the project's reports may still name failures.
    const reported = await projectResults(ctx)
    const failing = JUnit.failed(reported ?? {})
    const blamed = failing.filter((name) => !known.has(name))
    if (blamed.length > 0) {
      const what = "exited 0, but the JUnit reports name failing tests"
      const failure = explain(ctx, commands.at(-1)!, what, outputs, logPath ?? TEST_LOG, blamed, failing.filter((name) => known.has(name)))
      return { outcome: { ran: true, summary: failure.summary, ...(logPath ? { logPath } : {}), failure }, runnerTests }
    }
    noteInherited(ctx, failing)
    const count = Object.keys(reported ?? {}).length
    reportNote = reported ? `; ${count} test(s) in the JUnit reports` : `; no JUnit report matched ${ctx.rules.junit.join(", ")}`
  }
  const inheritedNote =
    ctx.inheritedTests.length > 0 ? `; inherited (failing on the baseline ${ctx.baseline?.commit.slice(0, 12) ?? ""} too, not blamed): ${listSome(ctx.inheritedTests, 5)}` : ""
  // CTest exits 0 when it finds no test at all: that is not evidence that tests pass.
  if (/No tests were found/.test(outputs)) return { outcome: { ran: false, summary: NO_TESTS, ...(logPath ? { logPath } : {}) }, runnerTests }
  const runNote = runs.length > 0 ? `; ${runs.join("; ")}` : ""
  const summary = `${commands.length} command(s) ${commandFailed ? "ran" : "passed"}${runNote}${reportNote}${inheritedNote}`
  return { outcome: { ran: true, summary, ...(logPath ? { logPath } : {}) }, runnerTests }
}

interface Judged {
  outcome: GateOutcome
  /** The known runners' per-test results (pytest, vitest, jest, go, cargo), for the results store. */
  runnerTests: JUnit.Results
}

/** A runner exited 0 but its results cannot be read: said, never taken for a pass. */
function unreadable(ctx: GateContext, command: string, why: string, logPath: string): Failure {
  return {
    summary: `\`${command}\` exited 0 but its results could not be read: ${why}`,
    message:
      `${ctx.label}: tests not judged: \`${command}\` exited 0 but its results could not be read (${why}); a run whose results cannot be read is not a pass.\n` +
      `Full log: ${logPath}\n` +
      `Reproduce it in your worktree (one bash command, the build first): ${[...ctx.rules.build, command].join(" && ")}\n` +
      `Make the test command report its results (do not replace its reporter), commit on air/${ctx.taskId}, and report again.`,
  }
}

/** A known runner's failing tests, each with the runner's own words. */
function explainRun(ctx: GateContext, command: string, what: string, result: TestRun.Result, blamed: readonly string[], inherited: readonly string[], logPath: string): Failure {
  const words = result.failures
    .filter((f) => blamed.includes(f.name))
    .slice(0, 5)
    // The first lines: the assertion comes before a backtrace.
    .map((f) => `${f.name}:\n${indent(f.message.split("\n").slice(0, 15).join("\n") || "(no message)")}`)
    .join("\n")
  return {
    summary: `failing tests: ${listSome([...blamed], 5)}`,
    message:
      `${ctx.label}: tests failed: \`${command}\` ${what} (${TestRun.describe(result)}).\n` +
      `Failing tests: ${blamed.join(", ")}\n` +
      (inherited.length > 0 ? `Also failing, as on the baseline before this task (inherited, not yours to fix): ${inherited.join(", ")}\n` : "") +
      `Failures:\n${indent(words)}\n` +
      `Full log: ${logPath}\n` +
      `Reproduce it in your worktree (one bash command, the build first): ${[...ctx.rules.build, command].join(" && ")}\n` +
      `Fix the code (or the test, if the test is what is wrong), commit on air/${ctx.taskId}, and report again.`,
  }
}

/** Where the results store looks for this gate's tree; none when the sandbox state is unknown (a caller's own context). */
function resultsWhere(ctx: GateContext): Results.Where | undefined {
  if (ctx.sandboxed === undefined) return undefined
  return { root: ctx.root, dir: ctx.worktree, rules: ctx.rules, sandboxed: ctx.sandboxed, env: ctx.env }
}

/** Per-test results of a run that passed: CTest's JUnit files and the project's own reports. */
async function passedResults(ctx: GateContext, runnerTests: JUnit.Results): Promise<{ tests: JUnit.Results; source: "junit" | "none" }> {
  let tests: JUnit.Results = { ...runnerTests }
  let found = Object.keys(runnerTests).length > 0
  for (const i of ctx.rules.test.keys()) {
    const xml = await readFile(path.join(ctx.worktree, Toolchain.BUILD_DIR, `${i}-${JUnit.CTEST_FILE}`), "utf8").catch(() => undefined)
    const cases = xml === undefined ? undefined : JUnit.parse(xml)
    if (cases) {
      tests = { ...tests, ...JUnit.results(cases) }
      found = true
    }
  }
  const reported = JUnitFiles.results(await JUnitFiles.read(ctx.worktree, ctx.rules.junit))
  if (reported) {
    tests = { ...tests, ...reported }
    found = true
  }
  return { tests, source: found ? "junit" : "none" }
}

/** The project's own JUnit reports (toolchain.json `junit`), kept in the evidence; undefined when none is JUnit. */
async function projectResults(ctx: GateContext): Promise<JUnit.Results | undefined> {
  const reports = await JUnitFiles.read(ctx.worktree, ctx.rules.junit)
  for (const r of reports) await ctx.write(JUnitFiles.evidenceName(r.file), r.xml)
  return JUnitFiles.results(reports)
}

function noteInherited(ctx: GateContext, names: readonly string[]): void {
  ctx.inheritedTests.push(...names.filter((name) => !ctx.inheritedTests.includes(name)))
}

function explain(ctx: GateContext, command: string, what: string, out: string, logPath: string, failing: readonly string[], inherited: readonly string[]): Failure {
  // CTest's own words for each test when its summary has them ("calc_test (Failed)", "(Timeout)").
  const summary = failingTests(out)
  const named = failing.length > 0 ? failing.map((name) => summary.find((entry) => entry.replace(/\s+\([^)]*\)$/, "") === name) ?? name) : summary
  const details = testFailureLines(out)
  return {
    summary: named.length > 0 ? `failing tests: ${listSome([...named], 5)}` : `\`${command}\` ${what}`,
    message:
      `${ctx.label}: tests failed: \`${command}\` ${what}.\n` +
      (named.length > 0 ? `Failing tests: ${named.join(", ")}\n` : "") +
      (inherited.length > 0 ? `Also failing, as on the baseline before this task (inherited, not yours to fix): ${inherited.join(", ")}\n` : "") +
      (details ? `Output:\n${indent(details)}\n` : `Last lines:\n${indent(lastLines(out, 15))}\n`) +
      `Full log: ${logPath}\n` +
      // The gates built in a build slot of their own: a worker's worktree holds its own build, or none yet.
      `Reproduce it in your worktree (one bash command, the build first): ${[...ctx.rules.build, command].join(" && ")}\n` +
      `Fix the code (or the test, if the test is what is wrong), commit on air/${ctx.taskId}, and report again.`,
  }
}

/** Test names from CTest's summary ("The following tests FAILED: 1 - calc_test (Failed)"). */
export function failingTests(output: string): string[] {
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

/** The bare names of CTest's failing tests ("calc_test", not "calc_test (Failed)"): what a baseline records. */
export function failingTestNames(output: string): string[] {
  return failingTests(output).map((name) => name.replace(/\s+\([^)]*\)$/, ""))
}
