import { describe, expect, test } from "vitest"
import { FAULTS } from "@aircoding/scripted-model"
import { Chaos } from "../support/chaos"

/**
 * The chaos property: 30 seeds across the demo and the 4-task, 2-phase scenario (a Debugger repair and a
 * replan), each a real headless run under the scripted model's seeded provider faults, questions answered
 * with --resume --answer up to a bound. For every seed: exit 0 with every task merged once and the
 * integration branch built and tested, or exit 2 with questions naming their cause — never a hang, never
 * exit 0 with a task unmerged, the user's commits kept, no task merged twice (test/support/chaos.ts).
 *
 * `stall` is left out here (each costs the inactivity timeout, ≥ 15 s, and up to the engine's start-up
 * allowance): `bun run chaos` and `bun run bench` (chaos_seeds_ok) include it.
 *
 * Off unless AIR_CHAOS_CI=1: 30 seeds cost about 20 minutes on two cores, more than the whole suite may
 * take. CI runs the same property after the suite, in its soak stage (`./start.sh soak`, bench/soak.ts),
 * with every fault of the list.
 */
const SEEDS = Number(process.env.AIR_CHAOS_SEEDS ?? 30)
const PARALLEL = Number(process.env.AIR_CHAOS_PARALLEL ?? 4)

describe.skipIf(!process.env.AIR_CHAOS_CI)("chaos: whatever the model does, a merged result or a clear question", () => {
  test(`${SEEDS} seeds across both scenarios meet the invariant`, async () => {
    const faults = FAULTS.filter((f) => f !== "stall")
    const seeds = Array.from({ length: SEEDS }, (_, i): Chaos.Options => ({ seed: 1000 + i, scenario: i % 2 ? "four" : "demo", faults, processMs: 150_000, answers: 2 }))
    const verdicts = await Chaos.runMany(seeds, PARALLEL)
    const failing = verdicts.filter((v) => !v.ok)
    expect(failing.map(Chaos.describe), Chaos.summary(verdicts)).toEqual([])
    // Both outcomes really occur: the faults are not a no-op.
    expect(verdicts.some((v) => v.faults.length > 0)).toBe(true)
  }, 900_000)
})
