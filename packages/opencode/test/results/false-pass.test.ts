import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { FinalCheck } from "../../src/scheduler/runtime/integration/final-check.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { FLAKY_CMAKE, FLAKY_TEST_CPP, PLANTED_CHANGES, PLANTED_FILES, PLANTED_RULES } from "./planted.ts"

/**
 * Never a false pass: on a real CMake project whose passing result is recorded, each planted change re-runs
 * and fails where it breaks; going back to the recorded tree reuses again (the control); a flaky test's
 * failure is never recorded, so the same tree runs again.
 */
describe("no planted change passes on a recorded result", () => {
  let repo: CppRepo
  let good: string

  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { ...PLANTED_FILES, [Toolchain.RULES_PATH]: JSON.stringify(PLANTED_RULES) } })
    good = (await repo.git(["rev-parse", "HEAD"])).trim()
    // As a run does: the build dir and .air/local are never committed (the planted commits use `git add -A`).
    await Worktrees.ensureExcluded(repo.root)
    const first = await FinalCheck.run(repo.root)
    expect(first.passed, first.summary).toBe(true)
    expect(first.reused).toBeUndefined()
  }, 120_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("each planted change runs and fails; the recorded tree is reused again after it", async () => {
    for (const change of PLANTED_CHANGES) {
      for (const [file, content] of Object.entries(change.files ?? {})) await repo.write(file, content)
      if (change.files) await repo.commitAll(change.name)
      const saved = { ...process.env }
      Object.assign(process.env, change.env ?? {})
      try {
        const result = await FinalCheck.run(repo.root)
        expect(result.reused, change.name).toBeUndefined()
        expect(result.passed, change.name).toBe(false)
        const log = await repo.read(".air/local/evidence/_final/final.log")
        if (change.breaks === "build") expect(log, change.name).toMatch(/undefined reference to .*add/)
        else expect(log, change.name).toMatch(new RegExp(`\\d+ - ${change.breaks} \\(Failed\\)`))
      } finally {
        for (const name of Object.keys(change.env ?? {})) if (saved[name] === undefined) delete process.env[name]
        else process.env[name] = saved[name]
      }
      await repo.git(["reset", "--quiet", "--hard", good])
      const control = await FinalCheck.run(repo.root)
      expect(control.reused, `${change.name}: back on the recorded tree`).toBeDefined()
    }
  }, 120_000)

  test("a flaky test's failure is not recorded: the same tree runs again, and only its pass is reused", async () => {
    await repo.write("test/flaky_test.cpp", FLAKY_TEST_CPP)
    await repo.write("CMakeLists.txt", PLANTED_FILES["CMakeLists.txt"] + FLAKY_CMAKE)
    await repo.commitAll("a flaky test")
    const failed = await FinalCheck.run(repo.root)
    expect(failed.passed).toBe(false)
    const rerun = await FinalCheck.run(repo.root)
    expect(rerun.reused).toBeUndefined()
    expect(rerun.passed, rerun.summary).toBe(true)
    expect((await FinalCheck.run(repo.root)).reused).toBeDefined()
  }, 60_000)
})
