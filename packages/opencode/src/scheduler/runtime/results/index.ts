import { Toolchain } from "../toolchain/index.ts"
import type { JUnit } from "./junit.ts"
import type { ResultEntry } from "./entry.ts"
import { ResultKey } from "./key.ts"
import { ResultStore } from "./store.ts"

/**
 * Verified once, reused everywhere: what the baseline, the gates, the merge build and the final check ask
 * before they build and test (README.md in this folder). A lookup never throws: a key that cannot be made
 * or a store that cannot be read is a miss, and everything runs as it would without the store.
 */
export namespace Results {
  export interface Where {
    /** The project root (the local store is under it). */
    root: string
    /** The checkout that is built (git runs there). */
    dir: string
    rules: Toolchain.Rules
    sandboxed: boolean
    env: NodeJS.ProcessEnv
    /** The commit built, when known; otherwise the checkout's HEAD, and only if its working tree is clean. */
    commit?: string
  }

  /** What a reuse is, for the evidence and the views. */
  export interface Reused {
    commit: string
    at: string
    key: string
    /** The time the reused run took (its build and tests), i.e. about what this reuse saved. */
    savedMs: number
    /** How many tests' results were reused. */
    tests: number
    source: string
  }

  export type Lookup = { key?: ResultKey.Key; hit?: ResultStore.Hit; reason?: string }

  export async function lookup(where: Where, what: string): Promise<Lookup> {
    try {
      const made = await keyOf(where)
      if (!made.key) return made
      const store = ResultStore.open(where.root, where.rules, where.env)
      const hit = await store.get(made.key.key, what)
      return hit ? { key: made.key, hit } : { key: made.key, reason: "no result recorded for these build inputs" }
    } catch (error) {
      return { reason: `the results store could not be read: ${(error as Error).message}` }
    }
  }

  export async function keyOf(where: Where): Promise<{ key?: ResultKey.Key; reason?: string }> {
    if (where.commit) {
      const key = await ResultKey.of({ dir: where.dir, commit: where.commit, rules: where.rules, sandboxed: where.sandboxed, env: where.env })
      return key ? { key } : { reason: "the results store is off" }
    }
    return ResultKey.ofCheckout({ dir: where.dir, rules: where.rules, sandboxed: where.sandboxed, env: where.env })
  }

  /** The reuse for a hit, logged with the time it saved. */
  export async function reused(where: Where, hit: ResultStore.Hit, what: string): Promise<Reused> {
    const { entry } = hit
    const savedMs = entry.build.ms + entry.test.ms
    await ResultStore.open(where.root, where.rules, where.env)
      .saved(entry.key, what, savedMs)
      .catch(() => undefined)
    return { commit: entry.commit, at: entry.at, key: entry.key, savedMs, tests: Object.keys(entry.test.tests).length, source: hit.source }
  }

  /** "reused: same build inputs as <commit> at <time>, key …": the evidence's line for a reuse. */
  export function describe(reuse: Reused): string {
    return (
      `reused: same build inputs as ${reuse.commit.slice(0, 12)} at ${reuse.at}, key ${reuse.key.slice(0, 16)}` +
      ` (${reuse.tests} test result(s)${reuse.source === "local" ? "" : ` from ${reuse.source}`}; saved about ${(reuse.savedMs / 1000).toFixed(1)} s)`
    )
  }

  export interface Outcome {
    buildMs: number
    testMs: number
    source: "junit" | "ctest-output" | "none"
    tests: JUnit.Results
    prints?: ResultEntry.Body["prints"]
  }

  /**
   * Records a passing build and test run under `key`. Only a run where every command passed and no test
   * failed (inherited ones included) is recorded: failures are never reused. Errors are swallowed: the
   * store saves time, it never decides a verdict.
   */
  export async function record(where: Where, key: ResultKey.Key, outcome: Outcome, by: string): Promise<void> {
    if (Object.values(outcome.tests).includes("failed")) return
    try {
      await ResultStore.open(where.root, where.rules, where.env).put({
        version: 1,
        key: key.key,
        commit: key.commit,
        at: new Date().toISOString(),
        producer: { by, host: ResultStore.host(), tools: key.parts.tools },
        build: { ms: Math.max(0, Math.round(outcome.buildMs)) },
        test: { ms: Math.max(0, Math.round(outcome.testMs)), source: outcome.source, tests: outcome.tests },
        ...(outcome.prints ? { prints: outcome.prints } : {}),
      })
    } catch {
      // A full disk or an unreachable remote costs a future re-run, nothing else.
    }
  }
}

export { ResultKey, ResultStore }
