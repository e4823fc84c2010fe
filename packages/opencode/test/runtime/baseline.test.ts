import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Baseline } from "../../src/scheduler/runtime/integration/baseline.ts"
import { baselineDone } from "../../src/scheduler/core/baseline.ts"
import { REGISTRY } from "../../src/scheduler/runtime/gates/index.ts"
import { JUnit } from "../../src/scheduler/runtime/results/junit.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { MergeBuild } from "../../src/scheduler/runtime/integration/merge-build.ts"
import { firstGates } from "./task-branch.ts"
import { CALC_CPP, createCppRepo, type CppRepo, legacyFailureFiles } from "./cpp-repo.ts"

/**
 * The baseline on real repositories (cmake, ctest, git worktrees) and the test gate judged against it:
 * a test that already failed on the integration branch is inherited, never blamed on a task.
 */

// calc_test passes; legacy_test fails before any task (an old bug); "odd <&> name" passes; off is disabled.
const MORE_TESTS = `add_test(NAME "odd <&> name" COMMAND calc_test)
add_test(NAME off COMMAND calc_test)
set_tests_properties(off PROPERTIES DISABLED TRUE)
`

describe("the baseline and the test gate judged against it", () => {
  let repo: CppRepo
  let record: Baseline.Record

  beforeAll(async () => {
    repo = await createCppRepo({ files: legacyFailureFiles({ cmake: MORE_TESTS }) })
    record = await Baseline.run(repo.root, "main")
  }, 180_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("builds and tests the integration head once: per-test results from CTest's JUnit file, in baseline.json", async () => {
    const head = (await repo.git(["rev-parse", "main"])).trim()
    expect(record).toMatchObject({ commit: head, status: "failed", build: { ran: true, passed: true }, test: { ran: true, passed: false, source: "junit" } })
    expect(record.tests).toEqual({ calc_test: "passed", legacy_test: "failed", "odd <&> name": "passed", off: "skipped" })
    expect(record.failingTests).toEqual(["legacy_test"])
    expect(record.message).toMatch(/ctest --test-dir .* failed: legacy_test/)
    const dir = Baseline.evidenceDir(repo.root, head)
    expect(Baseline.Record.parse(JSON.parse(await readFile(path.join(dir, "baseline.json"), "utf8")))).toEqual(record)
    expect(existsSync(path.join(dir, "test.log")) && existsSync(path.join(dir, "ctest-0.xml"))).toBe(true)
    // The run's first baseline leaves its build as the merge worktree's (the first merge build goes on from it), and
    // no tree of its own; the same commit is not built twice.
    const merge = MergeBuild.worktreeOf(await Worktrees.repoRoot(repo.root))
    expect(existsSync(path.join(merge, ".air-build", "CMakeCache.txt"))).toBe(true)
    expect((await repo.git(["-C", merge, "rev-parse", "HEAD"])).trim()).toBe(head)
    expect(await repo.git(["worktree", "list"])).not.toMatch(/baseline/)
    expect(await Baseline.run(repo.root, "main")).toEqual(record)
    expect(baselineDone(record)).toEqual({ commit: head, status: "failed", buildFailed: false, failingTests: ["legacy_test"], message: record.message })
  })

  test("the JUnit reader on CTest's real file: entities decoded, notrun fails, disabled skips", async () => {
    const xml = await readFile(path.join(Baseline.evidenceDir(repo.root, record.commit), "ctest-0.xml"), "utf8")
    expect(xml).toMatch(/odd &lt;&amp;&gt; name/)
    const cases = JUnit.parse(xml)!
    expect(cases.map((c) => `${c.name}=${c.outcome}`).sort()).toEqual(["calc_test=passed", "legacy_test=failed", "odd <&> name=passed", "off=skipped"])
    expect(JUnit.parse("no xml here")).toBeUndefined()
    // Another runner's JUnit (gtest's shape): class-qualified names, failure and skipped children.
    const gtest = `<?xml version="1.0"?><testsuites><testsuite name="Calc"><testcase name="Adds" classname="Calc"/><testcase name="Subs" classname="Calc"><failure message="x">a &amp; b</failure></testcase><testcase name="Later" classname="Calc"><skipped/></testcase></testsuite></testsuites>`
    expect(JUnit.results(JUnit.parse(gtest)!)).toEqual({ "Calc.Adds": "passed", "Calc.Subs": "failed", "Calc.Later": "skipped" })
    expect(JUnit.withCtestJunit("ctest --test-dir b -j 2", "/w/x.xml")).toBe("ctest --test-dir b -j 2 --output-junit '/w/x.xml'")
    expect(JUnit.withCtestJunit("make test", "/w/x.xml")).toBeUndefined()
  })

  async function gated(taskId: string, source: string, extraFiles: Record<string, string> = {}) {
    const wt = await Worktrees.create(repo.root, taskId, "main")
    const ws = repo.at(wt.path)
    await ws.write("src/calc.cpp", source)
    for (const [file, content] of Object.entries(extraFiles)) await ws.write(file, content)
    await ws.commitAll(`${taskId}: change`)
    return firstGates(repo.root, taskId, wt.path, {
      requires: ["diff", "build", "test"],
      gates: REGISTRY.filter((g) => g.id !== "analysis"),
      baseline: { commit: record.commit, failingTests: record.failingTests },
    })
  }

  test("a correct task passes: the test failing on the baseline is reported inherited, not blamed", async () => {
    const report = await gated("T-ok", `// a comment\n${CALC_CPP}`)
    expect(report.passed, report.message).toBe(true)
    expect(report.inheritedTests).toEqual(["legacy_test"])
    expect(report.gates.find((g) => g.gate === "test")?.summary).toMatch(/inherited .*legacy_test/)
    expect(report.message).toMatch(/inherited, not blamed\): legacy_test/)
  }, 180_000)

  test("a task that breaks a test that passed on the baseline fails, blamed for it alone", async () => {
    const report = await gated("T-bad", CALC_CPP.replace("a - b", "a + b"))
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("test")
    expect(report.message).toMatch(/Failing tests: calc_test \(Failed\), odd <&> name \(Failed\)\n/)
    expect(report.message).toMatch(/inherited, not yours to fix\): legacy_test/)
  }, 180_000)

  test("a task whose new test fails is blamed for it", async () => {
    const cmake = legacyFailureFiles({ cmake: MORE_TESTS + "add_executable(new_test test/new_test.cpp)\nadd_test(NAME new_test COMMAND new_test)\n" })["CMakeLists.txt"]!
    const report = await gated("T-new", CALC_CPP, { "CMakeLists.txt": cmake, "test/new_test.cpp": "int main() { return 2; }\n" })
    expect(report.passed).toBe(false)
    expect(report.message).toMatch(/Failing tests: new_test \(Failed\)\n/)
  }, 180_000)

  test("once the merge worktree is there, a baseline builds in a tree of its own, removed after, and leaves the merge build's alone", async () => {
    const other = await createCppRepo()
    try {
      const merge = MergeBuild.worktreeOf(await Worktrees.repoRoot(other.root))
      const first = await Baseline.run(other.root, "main")
      await other.write("src/calc.cpp", `// moved under the run\n${CALC_CPP}`)
      const moved = await other.commitAll("moved under the run")
      const again = await Baseline.run(other.root, "main")
      expect([first.status, again.status, again.commit]).toEqual(["passed", "passed", moved])
      expect((await other.git(["-C", merge, "rev-parse", "HEAD"])).trim()).toBe(first.commit)
      expect(await other.git(["worktree", "list"])).not.toMatch(/baseline/)
    } finally {
      await other.cleanup()
    }
  }, 180_000)

  test("a baseline that does not build records the failing command and the first error", async () => {
    const broken = await createCppRepo({ files: { "src/calc.cpp": CALC_CPP.replace("return a + b;", "return a + undeclared_thing;") } })
    try {
      const r = await Baseline.run(broken.root, "main")
      expect(r).toMatchObject({ status: "failed", build: { ran: true, passed: false }, test: { ran: false }, failingTests: [] })
      expect(r.build.firstError).toMatch(/calc\.cpp:\d+:\d+: error: .*undeclared_thing/)
      expect(r.message).toMatch(/^`cmake .*` failed: (\.\.\/)?src\/calc\.cpp:\d+:\d+: error/)
      expect(baselineDone(r).buildFailed).toBe(true)
    } finally {
      await broken.cleanup()
    }
  }, 180_000)
})
