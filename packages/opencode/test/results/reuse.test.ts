import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Baseline } from "../../src/scheduler/runtime/integration/baseline.ts"
import { FinalCheck } from "../../src/scheduler/runtime/integration/final-check.ts"
import { REGISTRY } from "../../src/scheduler/runtime/gates/index.ts"
import { ResultStore } from "../../src/scheduler/runtime/results/store.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates, taskBranches } from "../runtime/task-branch.ts"

/**
 * Results keyed by content, on a real CMake project: the baseline records a pass; a commit that changes only
 * `.air/` or a declared non-input reuses it (baseline, gates, final check after a fast-forward), and says so.
 */
export const RULES = {
  schemaVersion: 1,
  build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-on-failure"],
  cache: { tool: "none", results: { notInputs: ["docs/**"] } },
}

describe("results keyed by content", () => {
  let repo: CppRepo
  let first: Baseline.Record
  const tasks = taskBranches(() => repo, { commit: true })

  beforeAll(async () => {
    repo = await createCppRepo({ files: { [Toolchain.RULES_PATH]: JSON.stringify(RULES), "docs/guide.md": "how to add\n" } })
    first = await Baseline.run(repo.root, "main")
  }, 120_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("the baseline runs and records a pass; a later commit with the same build inputs reuses it", async () => {
    expect(first).toMatchObject({ status: "passed", tests: { calc_test: "passed" } })
    expect(first.reused).toBeUndefined()
    await repo.write(".air/shared/rules/notes.md", "only the run's notes changed\n")
    await repo.write("docs/guide.md", "how to add and subtract\n")
    const second = await repo.commitAll("docs and notes")
    const again = await Baseline.run(repo.root, "main")
    expect(again.commit).toBe(second)
    expect(again.reused).toMatchObject({ commit: first.commit, tests: 1 })
    expect(again).toMatchObject({ status: "passed", tests: { calc_test: "passed" }, failingTests: [] })
    expect(again.message).toMatch(new RegExp(`^reused: same build inputs as ${first.commit.slice(0, 12)} at .*, key [0-9a-f]{16}`))
  })

  test("a task that changes only docs reuses the tests in its gates, and the final check after the fast-forward is reused", async () => {
    await tasks.task("T-docs", (ws) => ws.write("docs/guide.md", "a better guide\n"))
    const wt = path.join(repo.root, ".air", "local", "worktrees", "T-docs")
    const report = await firstGates(repo.root, "T-docs", wt, { requires: ["diff", "build", "test"], gates: REGISTRY.filter((g) => g.id !== "analysis") })
    expect(report.passed, report.message).toBe(true)
    const tested = report.gates.find((g) => g.gate === "test")!
    expect(tested.reused).toMatchObject({ commit: first.commit, tests: 1 })
    expect(tested.summary).toMatch(/^reused: same build inputs as/)
    expect(await readFile(tested.logPath!, "utf8")).toMatch(/no test ran; the recorded results:\n# {3}calc_test: passed/)
    await tasks.merge("T-docs")
    await repo.git(["reset", "--hard", "main"])
    const final = await FinalCheck.run(repo.root)
    expect(final.passed, final.summary).toBe(true)
    expect(final.reused).toBeDefined()
    expect(final.summary).toMatch(/reused: same build inputs as/)
    expect(existsSync(path.join(repo.root, ".air-build"))).toBe(false)
    const summary = await ResultStore.summary(repo.root, Toolchain.parse(JSON.stringify(RULES)))
    expect(summary.entries).toBe(1)
    expect(summary.hits).toBe(3)
    expect(summary.savedMs).toBeGreaterThan(0)
  })
})
