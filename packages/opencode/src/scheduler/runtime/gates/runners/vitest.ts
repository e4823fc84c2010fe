import { silent, shellQuote, splitCommand, type TestRunner } from "./runner.ts"
import { JestJson } from "./jest-json.ts"
import { TestRun } from "./schema.ts"

/** vitest: its JSON reporter into the report file beside the default one (the log stays readable). */
export const vitestRunner = {
  framework: "vitest",
  // "No test files found, exiting with code 1", its JSON report written with no test in it.
  noTestsCode: 1,
  matches(command) {
    const rest = splitCommand(command)?.rest
    return rest !== undefined && /^(?:(?:npx|bunx|pnpm\s+exec|yarn)\s+)?(?:\S*\/)?vitest(\s|$)/.test(rest)
  },
  instrument(command, report) {
    if (/--reporter\b|--outputFile\b/.test(command)) return undefined
    return `${command.trimEnd()} --reporter=default --reporter=json --outputFile.json=${shellQuote(report)}`
  },
  read(run) {
    if (run.report === undefined) return silent(run) ? { ok: true, result: TestRun.of("vitest", []) } : { ok: false, why: "vitest wrote no JSON report" }
    return JestJson.read("vitest", run.report, run.cwd)
  },
} as const satisfies TestRunner
