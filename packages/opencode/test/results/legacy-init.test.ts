import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Init } from "../../src/cli/init.ts"
import { BaselineRun } from "../../src/scheduler/runtime/baseline-run.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { PLANTED_FILES, PLANTED_RULES } from "./planted.ts"

/**
 * `aircoding init` on a legacy project: cppcheck errors the project already has are recorded as inherited,
 * and the baseline is green because the build and the tests pass.
 */
describe("init's baseline on a legacy project", () => {
  let repo: CppRepo
  let result: BaselineRun.Result
  const rules = Toolchain.parse(JSON.stringify(PLANTED_RULES))

  beforeAll(async () => {
    const legacy = `#include "calc.h"\nint add(int a, int b) { return a + b + kBase; }\nint legacy() { int* p = nullptr; return *p; }\n`
    repo = await createCppRepo({ empty: true, files: { ...PLANTED_FILES, "src/calc.cpp": legacy } })
    result = await BaselineRun.run(repo.root, rules)
  }, 120_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("analysis errors are inherited, the baseline is green, and init says the project is ready", () => {
    expect(result.build.passed && result.test.passed).toBe(true)
    expect(result.analysis.errors).toBeGreaterThan(0)
    expect(result.analysis.inherited).toMatch(/src\/calc\.cpp:3: nullPointer/)
    expect(result.passed).toBe(true)
    const text = Init.describe({ root: repo.root, file: `${repo.root}/${Toolchain.RULES_PATH}`, rules, reasons: [], submoduleProblems: [], baseline: result })
    expect(text).toMatch(/analysis ran in .*: \d+ finding\(s\), \d+ error\(s\), recorded as inherited: a task is judged only on findings it adds/)
    expect(text).toMatch(/\(inherited\) src\/calc\.cpp:3: nullPointer/)
    expect(text).toMatch(/The project is ready/)
    expect(text).not.toMatch(/not green/)
  })

  test("a failing test is what makes it not green, and the words name it", () => {
    const failed = { ...result, test: { ...result.test, passed: false, failure: "`ctest` exited with 8" }, passed: false }
    const text = Init.describe({ root: repo.root, file: `${repo.root}/${Toolchain.RULES_PATH}`, rules, reasons: [], submoduleProblems: [], baseline: failed })
    expect(text).toMatch(/The baseline is not green \(the tests failed\)/)
  })
})
