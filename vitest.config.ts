import { defineConfig } from "vitest/config"
import { LongestFirst } from "./test/sequencer.ts"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    // End-to-end tests drive the real opencode binary: a few seconds per run on two cores.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: true,
    // Three files at once on two cores: an end-to-end file spends most of its time waiting on the engine and
    // the scripted model (the suite used 1.3 cores on average with two), and the suite must stay under 15 minutes.
    maxWorkers: 3,
    // Longest first, from a committed copy of the durations when there is no cache (CI's fresh clone).
    sequence: { sequencer: LongestFirst },
  },
})
