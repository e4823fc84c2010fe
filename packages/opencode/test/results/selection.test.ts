import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Baseline } from "../../src/scheduler/runtime/integration/baseline.ts"
import { REGISTRY } from "../../src/scheduler/runtime/gates/index.ts"
import { StepTimes } from "../../src/scheduler/runtime/gates/step-times.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates, taskBranches } from "../runtime/task-branch.ts"
import { PLANTED_FILES, PLANTED_RULES } from "./planted.ts"

/**
 * Test selection by changed binaries on a real CMake project: the baseline records each test's print; a
 * comment-only task runs no test; a changed data file runs the one test that reads it, which fails.
 */
describe("test selection by changed binaries", () => {
  let repo: CppRepo
  let base: Baseline.Record
  const tasks = taskBranches(() => repo, { commit: true })
  const gates = (taskId: string, worktree: string) =>
    firstGates(repo.root, taskId, worktree, { requires: ["diff", "build", "test"], gates: REGISTRY.filter((g) => g.id !== "analysis" && g.id !== "clang-tidy") })

  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { ...PLANTED_FILES, [Toolchain.RULES_PATH]: JSON.stringify(PLANTED_RULES) } })
    await Worktrees.ensureExcluded(repo.root)
    base = await Baseline.run(repo.root, "main")
  }, 120_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("a comment-only change leaves every binary as it was: no test runs, each is reported reused", async () => {
    expect(base.status).toBe("passed")
    const { wt } = await tasks.task("T-comment", (ws) =>
      ws.write("src/calc.cpp", PLANTED_FILES["src/calc.cpp"]!.replace("kBase; }", "kBase; }  // the sum, offset by the base")),
    )
    const report = await gates("T-comment", wt.path)
    expect(report.passed, report.message).toBe(true)
    const tested = report.gates.find((g) => g.gate === "test")!
    expect(tested.summary).toMatch(new RegExp(`^reused 2 test\\(s\\) whose binaries.* identical to the passing run on ${base.commit.slice(0, 12)}.*; no test ran`))
    expect(tested.reused).toMatchObject({ commit: base.commit, tests: 2, source: "selection" })
    expect(await readFile(tested.logPath!, "utf8")).not.toMatch(/\$ ctest/)
  })

  test("a changed data file a test names runs that test alone, and it fails; the other is reused", async () => {
    const { wt } = await tasks.task("T-data", (ws) => ws.write("test/data/expected.txt", "6\n"))
    const report = await gates("T-data", wt.path)
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("test")
    const log = await readFile(report.gates.find((g) => g.gate === "test")!.logPath!, "utf8")
    expect(log).toMatch(/-R '\^\(data_test\)\$'/)
    expect(log).toMatch(/data_test \(Failed\)/)
    expect(log).not.toMatch(/calc_test/)
    // Where the gate's time went, kept beside its log: the selection's listing (no ldd: the binaries' bytes are those
    // the baseline's ldd read), then the one test run.
    const testLog = report.gates.find((g) => g.gate === "test")!.logPath!
    const times = StepTimes.File.parse(JSON.parse(await readFile(path.join(path.dirname(testLog), StepTimes.fileName("test")), "utf8")))
    expect(times.steps.map((s) => s.step)).toEqual(["lookup", "selection", "tests"])
    const commands = times.steps.flatMap((s) => s.commands.map((c) => `${s.step}: ${c.command.split(" ")[0]}`))
    expect(commands).toEqual(["selection: ctest", "tests: ctest"])
    for (const c of times.steps.flatMap((s) => s.commands)) expect(c.ms).toBeGreaterThanOrEqual(c.runMs)
  })
})
