import { lstat, mkdir, readFile, rm } from "node:fs/promises"
import path from "node:path"
import { cargoTestRunner } from "./cargo-test.ts"
import { goTestRunner } from "./go-test.ts"
import { jestRunner } from "./jest.ts"
import { pytestRunner } from "./pytest.ts"
import type { TestRunner } from "./runner.ts"
import type { TestRun as Run_ } from "./schema.ts"
import { vitestRunner } from "./vitest.ts"

export { TestRun } from "./schema.ts"
export type { TestRunner, Run } from "./runner.ts"

/** The test runners the gates read per test, besides CTest (the test gate's own); one file each. */
export namespace TestRunners {
  export const ALL: readonly TestRunner[] = [pytestRunner, vitestRunner, jestRunner, goTestRunner, cargoTestRunner]

  /** The runner a test command runs, or undefined (CTest, a script: judged as today). */
  export function of(command: string): TestRunner | undefined {
    return ALL.find((r) => r.matches(command))
  }

  /** The file name a runner's report is asked for (beside CTest's, in the build's excluded dir). */
  export const REPORT_FILE = "air-test-report"

  /** A report larger than this is not a test report (not read). */
  const MAX_BYTES = 64 * 1024 * 1024

  export interface Prepared {
    /** The command to run: the runner asked for its report, or the command as it is. */
    run: string
    runner?: TestRunner
  }

  /** The command as a runner runs it, its stale report removed; the command itself when no runner takes it. */
  export async function prepare(command: string, report: string): Promise<Prepared> {
    const runner = of(command)
    const run = runner?.instrument(command, report)
    if (!runner || run === undefined) return { run: command }
    await mkdir(path.dirname(report), { recursive: true })
    await rm(report, { force: true })
    return { run, runner }
  }

  /**
   * One run read into its result. The report is read only as a regular file (never through a link: the test
   * command is the task's code, the reading is not sandboxed).
   */
  export async function read(runner: TestRunner, run: { output: string; code: number | null; report: string; cwd: string }): Promise<Run_.Read> {
    const st = await lstat(run.report).catch(() => undefined)
    const text = st?.isFile() && st.size <= MAX_BYTES ? await readFile(run.report, "utf8").catch(() => undefined) : undefined
    try {
      return runner.read({ output: run.output, code: run.code, report: text, cwd: run.cwd })
    } catch (e) {
      return { ok: false, why: `${runner.framework}'s results could not be read (${e instanceof Error ? e.message : String(e)})` }
    }
  }

  /** The variables a runner adds to `base` for its command (none for most). */
  export function env(runner: TestRunner | undefined, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return runner?.env ? { ...base, ...runner.env(base) } : base
  }

  /** With no failure read: a run of no test at all ("ran no test"), which is not evidence. */
  export function ranNoTest(runner: TestRunner, result: Run_.Result, code: number | null): boolean {
    return result.total === 0 && (code === 0 || (runner.noTestsCode !== undefined && code === runner.noTestsCode))
  }
}
