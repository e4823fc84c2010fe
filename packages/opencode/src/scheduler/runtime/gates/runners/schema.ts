import { z } from "zod"
import { JUnit } from "../../results/junit.ts"

/**
 * The one result every test runner's output is read into (pytest, vitest, jest, go test, cargo test), so the
 * test gate, the baseline and the evidence judge them alike: per test, against the base.
 */
export namespace TestRun {
  export const Framework = z.enum(["pytest", "vitest", "jest", "go", "cargo"])
  export type Framework = z.infer<typeof Framework>

  export const Failure = z
    .object({
      name: z.string().min(1),
      /** The runner's own words for it (assertion, expected/received), trimmed; empty when it gave none. */
      message: z.string(),
    })
    .strict()
  export type Failure = z.infer<typeof Failure>

  const Count = z.number().int().nonnegative()

  export const Result = z
    .object({
      framework: Framework,
      total: Count,
      passed: Count,
      failed: Count,
      skipped: Count,
      /** What the runner reported; undefined when it reports none. */
      durationMs: Count.optional(),
      failures: z.array(Failure),
      /** Test name → outcome: what the baseline records and the gate compares. */
      tests: JUnit.Results,
    })
    .strict()
  export type Result = z.infer<typeof Result>

  /** A runner's output read: its result, or why it could not be read (said, never taken for a pass). */
  export type Read = { ok: true; result: Result } | { ok: false; why: string }

  /** Longest message kept per failure: the log holds the rest. */
  const MAX_MESSAGE = 2000

  /** The result from per-test outcomes and messages; the counts are the tests' own, so they always agree. */
  export function of(framework: Framework, cases: readonly { name: string; outcome: JUnit.Outcome; message?: string }[], durationMs?: number): Result {
    const tests = JUnit.results(cases.map((c) => ({ name: c.name, outcome: c.outcome })))
    const names = Object.keys(tests)
    const failures = JUnit.failed(tests).map((name) => ({
      name,
      message: trimMessage(cases.filter((c) => c.name === name && c.outcome === "failed").map((c) => c.message ?? "").find((m) => m !== "") ?? ""),
    }))
    return Result.parse({
      framework,
      total: names.length,
      passed: names.filter((n) => tests[n] === "passed").length,
      failed: failures.length,
      skipped: names.filter((n) => tests[n] === "skipped").length,
      ...(durationMs !== undefined && Number.isFinite(durationMs) ? { durationMs: Math.max(0, Math.round(durationMs)) } : {}),
      failures,
      tests,
    })
  }

  export function trimMessage(text: string): string {
    const trimmed = text.replace(/\x1b\[[0-9;]*m/g, "").trim()
    return trimmed.length > MAX_MESSAGE ? `${trimmed.slice(0, MAX_MESSAGE)}…` : trimmed
  }

  /** One line for people: "pytest: 3 test(s), 2 passed, 1 failed, 0 skipped in 0.4 s". */
  export function describe(r: Result): string {
    const time = r.durationMs === undefined ? "" : ` in ${(r.durationMs / 1000).toFixed(1)} s`
    return `${r.framework}: ${r.total} test(s), ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped${time}`
  }
}
