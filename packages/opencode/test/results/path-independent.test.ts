import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { REGISTRY } from "../../src/scheduler/runtime/gates/index.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { Baseline } from "../../src/scheduler/runtime/integration/baseline.ts"
import { Proc } from "../../src/scheduler/runtime/process.ts"
import { CompilerCache } from "../../src/scheduler/runtime/toolchain/cache.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates, taskBranches } from "../runtime/task-branch.ts"
import { DEBUG_FILES, DEBUG_RULES } from "./debug-project.ts"

/**
 * Issue 38 item 1: a Debug build's outputs do not depend on the worktree's path, so the same sources built
 * for two tasks give the same test binaries, and a task that changes a file no test binary contains reuses
 * every test (on leveldb, a comment in benchmarks/db_bench.cc re-ran all three test executables).
 */
describe("build outputs independent of the worktree's path", () => {
  let repo: CppRepo
  const tasks = taskBranches(() => repo, { commit: true })

  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { ...DEBUG_FILES, [Toolchain.RULES_PATH]: JSON.stringify(DEBUG_RULES) } })
    await Worktrees.ensureExcluded(repo.root)
  }, 60_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  /** Builds `main` in a new worktree for `taskId` with the gates' environment; the test binaries' bytes and the build's ccache stats. */
  async function buildIn(taskId: string, rules: Toolchain.Rules) {
    const wt = await Worktrees.create(repo.root, taskId, "main")
    const statsLog = path.join(repo.root, ".air", "local", `${taskId}-stats.log`)
    const env = await Toolchain.commandEnv(rules, { root: repo.root, worktree: wt.path, statsLog }, process.env)
    for (const command of rules.build) {
      const built = await Proc.run(command, [], { cwd: wt.path, env, shell: true, timeoutMs: 300_000 })
      expect(built.ok, built.output).toBe(true)
    }
    const binary = (name: string) => readFile(path.join(wt.path, Toolchain.BUILD_DIR, name))
    return { path: wt.path, calc: await binary("calc_test"), data: await binary("data_test"), stats: await CompilerCache.readStats(statsLog) }
  }

  test("the same Debug commit built in two worktrees of different path lengths gives byte-identical test binaries, with or without ccache", async () => {
    for (const tool of ["none", "ccache"] as const) {
      const rules = Toolchain.Rules.parse({ ...DEBUG_RULES, cache: { tool } })
      const first = await buildIn(`P-${tool}`, rules)
      const second = await buildIn(`P-${tool}-a-longer-task-name`, rules)
      expect(first.calc.equals(second.calc), `${tool}: calc_test differs between the worktrees`).toBe(true)
      expect(first.data.equals(second.data), `${tool}: data_test differs between the worktrees`).toBe(true)
      // Neither path is in the binary at all, and it is Debug (it has the source's name in its debug info).
      expect(first.calc.includes(first.path)).toBe(false)
      expect(first.calc.includes(repo.root)).toBe(false)
      expect(first.calc.includes("calc_test.cpp")).toBe(true)
      // The second worktree's compiles came from the first one's cache.
      if (tool === "ccache") {
        expect(second.stats?.misses).toBe(0)
        expect(second.stats?.hits).toBeGreaterThanOrEqual(4)
      }
    }
  }, 300_000)

  test("with the map turned off (cache.pathMap false) the two worktrees' binaries differ: what the map is for", async () => {
    const rules = Toolchain.Rules.parse({ ...DEBUG_RULES, cache: { tool: "none", pathMap: false } })
    const first = await buildIn("Q-1", rules)
    const second = await buildIn("Q-1-a-longer-task-name", rules)
    expect(first.calc.equals(second.calc)).toBe(false)
    expect(first.calc.includes(first.path)).toBe(true)
  }, 300_000)

  test("a task that changes only a program no test contains reuses every test of the baseline built elsewhere", async () => {
    const base = await Baseline.run(repo.root, "main")
    expect(base.status, base.message).toBe("passed")
    const { wt } = await tasks.task("T-bench", (ws) => ws.write("tools/bench.cpp", DEBUG_FILES["tools/bench.cpp"]!.replace("// a benchmark", "// a benchmark, said better")))
    const report = await firstGates(repo.root, "T-bench", wt.path, {
      requires: ["diff", "build", "test"],
      gates: REGISTRY.filter((g) => g.id !== "analysis" && g.id !== "clang-tidy"),
    })
    expect(report.passed, report.message).toBe(true)
    const tested = report.gates.find((g) => g.gate === "test")!
    expect(tested.summary).toMatch(new RegExp(`^reused 2 test\\(s\\) whose binaries.* identical to the passing run on ${base.commit.slice(0, 12)}.*; no test ran`))
    expect(await readFile(tested.logPath!, "utf8")).not.toMatch(/\$ ctest/)
  }, 300_000)
})
