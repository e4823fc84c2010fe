import type { Gate, GateContext } from "./registry.ts"
import { commandEvidenceMissing, runCommands } from "./command.ts"
import { indent, lastLines, listSome } from "./text.ts"

export const TEST_LOG = "test.log"

/**
 * The toolchain's test commands pass in the worktree; a failure names the failing tests (CTest's summary)
 * and quotes their output. Passing commands that found no test at all (CTest exits 0) are not evidence.
 */
export const testGate = {
  id: "test",
  provides: "test",
  route: "debugger",
  words: { en: "test", "zh-CN": "测试" },
  logs: [TEST_LOG],
  reportsNotRun: true,
  async run(ctx: GateContext) {
    const { output, ...outcome } = await runCommands(ctx, "test", TEST_LOG, (command, what, out, logPath) => {
      const failing = failingTests(out)
      const details = testFailureLines(out)
      return {
        summary: failing.length > 0 ? `failing tests: ${listSome(failing, 5)}` : `\`${command}\` ${what}`,
        message:
          `${ctx.label}: tests failed: \`${command}\` ${what}.\n` +
          (failing.length > 0 ? `Failing tests: ${failing.join(", ")}\n` : "") +
          (details ? `Output:\n${indent(details)}\n` : `Last lines:\n${indent(lastLines(out, 15))}\n`) +
          `Full log: ${logPath}\nFix the code (or the test, if the test is what is wrong), commit on air/${ctx.taskId}, and report again.`,
      }
    })
    // CTest exits 0 when it finds no test at all: that is not evidence that tests pass.
    if (!outcome.failure && output !== undefined && /No tests were found/.test(output)) {
      return { ...outcome, ran: false, summary: "the test commands passed but found no tests (ctest: No tests were found)" }
    }
    return outcome
  },
  missingEvidence: (ctx, result) => commandEvidenceMissing(ctx, "test", result),
} as const satisfies Gate

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
export function testFailureLines(output: string): string | undefined {
  const lines = output
    .split(/\r?\n/)
    .filter((line) => /\b(FAIL|FAILED|Assertion|assert|expected|Error)\b/i.test(line))
    .filter((line) => !/The following tests FAILED|tests passed, \d+ tests failed|Errors while running CTest/.test(line))
    .filter((line) => !/^\s*\d+\s+-\s+.+\(.+\)\s*$/.test(line))
  if (lines.length === 0) return undefined
  return lines.slice(0, 10).join("\n")
}
