import { JUnit } from "../../results/junit.ts"
import { shellQuote, silent, splitCommand, type Run, type TestRunner } from "./runner.ts"
import { TestRun } from "./schema.ts"

/** pytest (`pytest`, `pytest-3`, `python3 -m pytest`): asked for its JUnit report with `--junitxml`. */
export const pytestRunner = {
  framework: "pytest",
  noTestsCode: 5,
  matches(command) {
    const rest = splitCommand(command)?.rest
    return rest !== undefined && /^(?:\S*\/)?(?:(?:pytest|py\.test)(?:-3)?|python[\d.]*\s+-m\s+pytest)(\s|$)/.test(rest)
  },
  instrument(command, report) {
    if (/--junit-?xml\b/.test(command)) return undefined
    return `${command.trimEnd()} --junitxml=${shellQuote(report)}`
  },
  read(run: Run): TestRun.Read {
    if (run.report === undefined) {
      if (silent(run)) return { ok: true, result: TestRun.of("pytest", []) }
      return { ok: false, why: "pytest wrote no JUnit report (--junitxml)" }
    }
    const cases = JUnit.parse(run.report)
    if (!cases) return { ok: false, why: "pytest's --junitxml report is not JUnit XML (no testsuite element)" }
    return { ok: true, result: TestRun.of("pytest", cases, suiteSeconds(run.report) * 1000) }
  },
} as const satisfies TestRunner

/** The sum of the testsuite elements' `time` (seconds). */
function suiteSeconds(xml: string): number {
  let total = 0
  for (const m of xml.matchAll(/<testsuite\b[^>]*?\btime\s*=\s*"([\d.]+)"/g)) total += Number(m[1])
  return total
}
