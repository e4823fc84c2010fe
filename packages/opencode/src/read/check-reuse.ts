import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import type { SchedulerState } from "../scheduler/core/state"
import { RunData } from "../scheduler/runtime/store/run-data"

/**
 * Whether the run's baseline and its final check reused a recorded result (runtime/results/) instead of
 * building and testing: read from their records in the evidence (`_baseline/<commit>/baseline.json`,
 * `_final/result.json`), only for the checks the state knows of (a record from an earlier run says nothing).
 */
export namespace CheckReuse {
  /** What the views say of a reuse: how many tests' results, and the time the reused run took. */
  export type Reuse = { tests: number; savedMs: number }
  export type Checks = { baseline?: Reuse; final?: Reuse }

  const Record = z.object({ reused: z.object({ tests: z.number().int().nonnegative(), savedMs: z.number().nonnegative() }).passthrough().optional() }).passthrough()

  function reuseIn(file: string): Reuse | undefined {
    if (!existsSync(file)) return undefined
    try {
      const parsed = Record.safeParse(JSON.parse(readFileSync(file, "utf8")))
      const reused = parsed.success ? parsed.data.reused : undefined
      return reused ? { tests: reused.tests, savedMs: reused.savedMs } : undefined
    } catch {
      return undefined
    }
  }

  /** The reuses of the state's baseline (its commit's record) and final check (once it is done). */
  export function read(root: string, state: SchedulerState): Checks {
    const evidence = RunData.evidenceRoot(root)
    const commit = state.baseline?.status === "passed" ? state.baseline.commit : null
    const baseline = commit && /^[0-9a-f]{7,64}$/.test(commit) ? reuseIn(join(evidence, "_baseline", commit, "baseline.json")) : undefined
    const final = state.finalCheck?.status === "passed" ? reuseIn(join(evidence, "_final", "result.json")) : undefined
    return { ...(baseline ? { baseline } : {}), ...(final ? { final } : {}) }
  }
}
