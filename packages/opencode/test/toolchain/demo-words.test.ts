import { describe, expect, test } from "vitest"
import { closingWords } from "../../src/cli/demo.ts"
import type { RunOutcome } from "../../src/cli/run.ts"

function outcome(exitCode: number, states: string[], final: boolean | null, errors: string[] = []): RunOutcome {
  return {
    exitCode,
    summary: {
      status: exitCode === 0 ? "done" : "blocked",
      runId: "r1",
      stage: "finished",
      tasks: states.map((state, i) => ({ id: `T-${i + 1}`, title: "t", state, attempts: 1, repairs: 0, evidence: [] })),
      questions: [],
      modelRequests: {},
      evidenceRoot: ".air/local/evidence",
      final: final === null ? null : { passed: final, summary: "", evidenceDir: "", commands: [] },
      answer: "All done, everything merged!",
      wallTimeMs: 1,
      errors,
    },
  }
}

describe("the demo's closing words come from the run's outcome", () => {
  test("everything merged and the final check green", () => {
    expect(closingWords(outcome(0, ["merged", "merged", "merged"], true))).toBe(
      "Demo finished: 3 of 3 task(s) merged; the integration branch builds and its tests pass.",
    )
  })
  test("a blocked task, whatever the model's answer says", () => {
    const words = closingWords(outcome(2, ["merged", "blocked"], null, ["cppcheck is not installed"]))
    expect(words).toBe(
      "Demo did not finish: 1 of 2 task(s) merged (T-2 blocked); no final check ran; run status blocked; first error: cppcheck is not installed.",
    )
    expect(words).not.toContain("All done")
  })
})
