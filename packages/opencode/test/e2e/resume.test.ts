import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { killLoop, type LoopResult } from "../../scripts/kill-loop"

/**
 * Crash and resume: `aircoding run` (with its engine and scripted model) is killed with SIGKILL, as a
 * process group, at random moments after it starts working — mid-dispatch, mid-gate, mid-merge — and
 * resumed with `aircoding run --resume`, again and again; at the end every task is merged exactly once
 * (one air/done tag, one squash commit with its Air-Task trailer, one merge.succeeded) and the integration
 * branch builds. More kills by hand: `bun packages/opencode/scripts/kill-loop.ts --kills 100`.
 */
// 3 in the suite; the soak stage (`bun run soak`, run by CI after the suite) kills 8 times.
const KILLS = Number(process.env.AIR_RESUME_KILLS ?? 3)
const SEED = Number(process.env.AIR_RESUME_SEED ?? Date.now() % 100_000)

let sandbox: Sandbox
let result: LoopResult
const lines: string[] = []

beforeAll(async () => {
  sandbox = makeSandbox("air-resume-")
  result = await killLoop({ kills: KILLS, minMs: 0, maxMs: 5000, seed: SEED, sandbox, log: (s) => lines.push(s) })
}, 1_500_000)

afterAll(() => sandbox?.cleanup())

describe(`crash and resume (seed ${SEED})`, () => {
  test(`survives ${KILLS} random SIGKILLs of the whole process tree`, () => {
    console.log(`kill loop (seed ${SEED}):\n${lines.join("\n")}`)
    expect(result.kills, lines.join("\n")).toBe(KILLS)
  })

  test("every task merged exactly once and the integration branch green", () => {
    expect(result.problems, `${lines.join("\n")}\n${result.final.stderr.slice(-3000)}`).toEqual([])
    expect(result.final.code).toBe(0)
  })
})
