import { silent, shellQuote, splitCommand, type TestRunner } from "./runner.ts"
import { JestJson } from "./jest-json.ts"
import { TestRun } from "./schema.ts"

/** jest: `--json --outputFile` (its own report; the human output stays on stderr, in the log). */
export const jestRunner = {
  framework: "jest",
  // "No tests found, exiting with code 1".
  noTestsCode: 1,
  matches(command) {
    const rest = splitCommand(command)?.rest
    return rest !== undefined && /^(?:(?:npx|bunx|pnpm\s+exec|yarn)\s+)?(?:\S*\/)?jest(\s|$)/.test(rest)
  },
  instrument(command, report) {
    if (/--json\b|--outputFile\b/.test(command)) return undefined
    return `${command.trimEnd()} --json --outputFile=${shellQuote(report)}`
  },
  read(run) {
    if (run.report === undefined) return silent(run) ? { ok: true, result: TestRun.of("jest", []) } : { ok: false, why: "jest wrote no JSON report (--json)" }
    return JestJson.read("jest", run.report, run.cwd)
  },
} as const satisfies TestRunner
