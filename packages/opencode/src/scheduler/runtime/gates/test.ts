import { mkdir, readFile, rm } from "node:fs/promises"
import path from "node:path"
import { Toolchain } from "../toolchain/index.ts"
import type { Failure, Gate, GateContext, GateOutcome } from "./gate.ts"
import { JUnit } from "./junit.ts"
import { JUnitFiles } from "./junit-files.ts"
import { TOOL_MISSING } from "./schema.ts"
import { commandEvidenceMissing, runCommands } from "./command.ts"
import { indent, lastLines, listSome } from "./text.ts"
import { Results } from "../results/index.ts"
import { Selection } from "../results/selection.ts"

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
  logs: [TEST_LOG],
  async run(ctx: GateContext) {
    // The same build inputs passed before (this task's earlier attempt, another task, the baseline, another machine): reuse.
    const where = resultsWhere(ctx)
    const looked = where ? await Results.lookup(where, `test gate, ${ctx.label}`) : undefined
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
    const selected = where && looked?.key ? await Selection.forGate(ctx, where) : undefined
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
      const outcome = await judgeTests(narrowed)
      if (outcome.failure || !outcome.ran) return outcome
      if (ctx.inheritedTests.length === 0) {
        const { tests } = await passedResults(narrowed)
        await Results.record(where, looked.key, { buildMs, testMs: Date.now() - started + savedMs, source: "junit", tests: { ...reusedTests, ...tests }, prints: plan.prints }, `test gate, ${ctx.label}`)
      }
      return { ...outcome, summary: `ran ${plan.run.length} test(s) whose binaries or data changed (${listSome(plan.run, 5)}): ${outcome.summary}; ${note}`, ...(plan.reuse.length > 0 ? { reused } : {}) }
    }
    const outcome = await judgeTests(ctx)
    if (where && looked?.key && outcome.ran && !outcome.failure && ctx.inheritedTests.length === 0) {
      const { tests, source } = await passedResults(ctx)
      const prints = Toolchain.resultsRules(ctx.rules).selection ? await Selection.prints(ctx.exec, ctx.worktree, ctx.rules, ctx.env) : undefined
      await Results.record(where, looked.key, { buildMs, testMs: Date.now() - started, source, tests, ...(prints ? { prints } : {}) }, `test gate, ${ctx.label}`)
    }
    return outcome
  },
  missingEvidence: (ctx, result) => commandEvidenceMissing(ctx, "test", result),
} as const satisfies Gate

/**
 * Runs the test commands (CTest asked for its JUnit file, the project's own JUnit reports cleared first) and
 * judges the failing tests against the baseline: a command whose failing tests all failed on the baseline
 * too is inherited, and the commands after it still run; a test that passed there, or is new, failing fails
 * the gate, even when its command exited 0 (a runner told to ignore failures still names them in its report).
 */
async function judgeTests(ctx: GateContext): Promise<GateOutcome> {
  const junitFiles = ctx.rules.test.map((_, i) => path.join(ctx.worktree, Toolchain.BUILD_DIR, `${i}-${JUnit.CTEST_FILE}`))
  const commands = ctx.rules.test.map((command, i) => JUnit.withCtestJunit(command, junitFiles[i]!) ?? command)
  const known = new Set(ctx.baseline?.failingTests ?? [])
  if (commands.length > 0) await JUnitFiles.clear(ctx.worktree, ctx.rules.junit)
  let start = 0
  let outcome: GateOutcome & { output?: string } = { ran: false, summary: "" }
  while (true) {
    const slice = commands.slice(start)
    for (const i of slice.keys()) {
      await mkdir(path.dirname(junitFiles[start + i]!), { recursive: true })
      await rm(junitFiles[start + i]!, { force: true })
    }
    let failedAt = -1
    let failedOutput = ""
    let failedWhat = "failed"
    outcome = await runCommands({ ...ctx, rules: { ...ctx.rules, test: slice } }, "test", start === 0 ? TEST_LOG : `test-${start + 1}.log`, (command, what, out, logPath) => {
      failedAt = start + slice.indexOf(command)
      failedOutput = out
      failedWhat = what
      return explain(ctx, command, what, out, logPath, [], [])
    })
    if (!outcome.failure || outcome.failure.gate === TOOL_MISSING || failedAt < 0) break
    // Which tests failed: CTest's JUnit file and the project's reports first, CTest's summary when there is neither.
    const xml = await readFile(junitFiles[failedAt]!, "utf8").catch(() => undefined)
    if (xml !== undefined) await ctx.write(`ctest-${failedAt + 1}.xml`, xml)
    const cases = xml === undefined ? undefined : JUnit.parse(xml)
    const reported = await projectResults(ctx)
    const failing =
      cases || reported ? [...new Set([...JUnit.failed(JUnit.results(cases ?? [])), ...JUnit.failed(reported ?? {})])] : failingTestNames(failedOutput)
    const blamed = failing.filter((name) => !known.has(name))
    const inherited = failing.filter((name) => known.has(name))
    if (failing.length === 0 || blamed.length > 0) {
      const failure = explain(ctx, ctx.rules.test[failedAt]!, failedWhat, failedOutput, outcome.logPath ?? TEST_LOG, blamed.length > 0 ? blamed : failing, inherited)
      return { ...outcome, summary: failure.summary, failure }
    }
    noteInherited(ctx, inherited)
    start = failedAt + 1
    if (start >= commands.length) {
      outcome = { ran: true, summary: `${commands.length} command(s) ran`, ...(outcome.logPath ? { logPath: outcome.logPath } : {}) }
      break
    }
  }
  let reportNote = ""
  if (!outcome.failure && commands.length > 0 && ctx.rules.junit.length > 0) {
    // Every command exited 0 (or failed only as the baseline did): the project's reports may still name failures.
    const reported = await projectResults(ctx)
    const failing = JUnit.failed(reported ?? {})
    const blamed = failing.filter((name) => !known.has(name))
    if (blamed.length > 0) {
      const what = "exited 0, but the JUnit reports name failing tests"
      const failure = explain(ctx, ctx.rules.test.at(-1)!, what, outcome.output ?? "", outcome.logPath ?? TEST_LOG, blamed, failing.filter((name) => known.has(name)))
      const { output: _, ...rest } = outcome
      return { ...rest, summary: failure.summary, failure }
    }
    noteInherited(ctx, failing)
    const count = Object.keys(reported ?? {}).length
    reportNote = reported ? `; ${count} test(s) in the JUnit reports` : `; no JUnit report matched ${ctx.rules.junit.join(", ")}`
  }
  const inheritedNote =
    ctx.inheritedTests.length > 0 ? `; inherited (failing on the baseline ${ctx.baseline?.commit.slice(0, 12) ?? ""} too, not blamed): ${listSome(ctx.inheritedTests, 5)}` : ""
  // CTest exits 0 when it finds no test at all: that is not evidence that tests pass.
  if (!outcome.failure && outcome.output !== undefined && /No tests were found/.test(outcome.output)) {
    const { output: _, ...rest } = outcome
    return { ...rest, ran: false, summary: NO_TESTS }
  }
  const { output: _, ...rest } = outcome
  return rest.failure ? rest : { ...rest, summary: `${rest.summary}${reportNote}${inheritedNote}` }
}

/** Where the results store looks for this gate's tree; none when the sandbox state is unknown (a caller's own context). */
function resultsWhere(ctx: GateContext): Results.Where | undefined {
  if (ctx.sandboxed === undefined) return undefined
  return { root: ctx.root, dir: ctx.worktree, rules: ctx.rules, sandboxed: ctx.sandboxed, env: ctx.env }
}

/** Per-test results of a run that passed: CTest's JUnit files and the project's own reports. */
async function passedResults(ctx: GateContext): Promise<{ tests: JUnit.Results; source: "junit" | "none" }> {
  let tests: JUnit.Results = {}
  let found = false
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
