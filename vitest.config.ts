import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    // End-to-end tests drive the real opencode binary: a few seconds per run on two cores.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
})
