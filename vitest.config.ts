import { defineConfig } from "vitest/config"
import { LongestFirst } from "./test/sequencer.ts"
import { suiteExcludes } from "./test/stages.ts"

/**
 * Files that drive whole processes (the engine, the CLI, the TUI) keep a fresh worker each: beside the
 * processes they start, a worker's imports cost them little, and nothing one leaves behind can reach another.
 */
const PROCESS_DRIVEN = [
  "packages/opencode/test/e2e/**/*.test.ts",
  "packages/opencode/test/tui/**/*.test.ts",
  "packages/opencode/test/engine/**/*.test.ts",
  "packages/opencode/test/cli/**/*.test.ts",
  "packages/scripted-model/test/opencode-e2e.test.ts",
]

// The soak stage's files (test/stages.ts) are left out of the suite, from every project; `./start.sh soak` runs them.
const SOAK_ONLY = suiteExcludes(process.env, process.argv)

export default defineConfig({
  test: {
    // End-to-end tests drive the real opencode binary: a few seconds per run on two cores.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: true,
    // Three files at once on two cores: an end-to-end file spends most of its time waiting on the engine and
    // the scripted model (the suite used 1.3 cores on average with two), and the suite must stay under 15 minutes.
    maxWorkers: 3,
    // Longest first, from a committed copy of the durations when there is no cache (CI's fresh clone).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: { name: "processes", include: PROCESS_DRIVEN, exclude: SOAK_ONLY },
      },
      {
        extends: true,
        // The rest share their workers' module cache (isolate: false): a fresh worker and fresh imports per file
        // cost more than most of these files' tests (measured on these 120 files: 568 → 451 CPU-s, 352 → 289 s).
        test: { name: "units", include: ["packages/*/test/**/*.test.ts"], exclude: [...PROCESS_DRIVEN, ...SOAK_ONLY], isolate: false },
      },
    ],
  },
})
