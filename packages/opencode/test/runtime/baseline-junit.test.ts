import { existsSync } from "node:fs"
import { firstGates } from "./task-branch.ts"
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Baseline } from "../../src/scheduler/runtime/integration/baseline.ts"
import { Gates, REGISTRY } from "../../src/scheduler/runtime/gates/index.ts"
import { JUnitFiles } from "../../src/scheduler/runtime/gates/junit-files.ts"
import { MergeBuild } from "../../src/scheduler/runtime/integration/merge-build.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { createCppRepo, type CppRepo, type Workspace } from "./cpp-repo.ts"

/**
 * Tests judged per test from the project's own JUnit reports (toolchain.json `junit`), where there is no
 * CTest: a real repository whose test command is a script writing one JUnit file per test (as Gradle and
 * Maven do). `calc.legacy` already fails on the integration branch (inherited); a task that breaks
 * `calc.adds` or adds a failing test is blamed, in the test gate and in the merge build alike.
 */

const RUNNER = `#!/bin/sh
# The project's test runner: each tests/*.sh is a test; one JUnit report per test; exit 1 if any failed.
mkdir -p build/test-results
status=0
for t in tests/*.sh; do
  name=$(basename "$t" .sh)
  if sh "$t"; then
    printf '<testsuite name="%s"><testcase classname="calc" name="%s"/></testsuite>\\n' "$name" "$name" > "build/test-results/TEST-$name.xml"
  else
    printf '<testsuite name="%s"><testcase classname="calc" name="%s"><failure message="failed"/></testcase></testsuite>\\n' "$name" "$name" > "build/test-results/TEST-$name.xml"
    echo "FAIL: calc.$name"
    status=1
  fi
done
exit $status
`

const toolchain = (test: string) =>
  JSON.stringify({ schemaVersion: 1, build: ["mkdir -p build"], test: [test], junit: ["build/test-results/*.xml"], analysis: { cppcheck: { enabled: false } }, cache: { tool: "none" } })

const FILES = {
  ".gitignore": "build/\n",
  "run-tests.sh": RUNNER,
  "src/value": "42\n",
  "tests/adds.sh": 'test "$(cat src/value)" = 42\n',
  "tests/legacy.sh": 'echo "legacy: expected 3, got 4"; exit 1\n',
  [Toolchain.RULES_PATH]: toolchain("sh run-tests.sh"),
}

describe("JUnit reports the project's own test command writes", () => {
  let repo: CppRepo
  let record: Baseline.Record

  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: FILES })
    record = await Baseline.run(repo.root, "main")
  }, 120_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  async function task(taskId: string, work: (ws: Workspace) => Promise<void>) {
    const wt = await Worktrees.create(repo.root, taskId, "main")
    const ws = repo.at(wt.path)
    await work(ws)
    await ws.commitAll(`${taskId}: change`)
    return wt.path
  }

  function gated(taskId: string, worktree: string, extra: Partial<Gates.RunInput> = {}) {
    return firstGates(repo.root, taskId, worktree, {
      requires: ["diff", "test"],
      gates: REGISTRY.filter((g) => g.id !== "analysis" && g.id !== "clang-tidy"),
      baseline: { commit: record.commit, failingTests: record.failingTests },
      ...extra,
    })
  }

  test("the baseline reads the reports: per-test results, the failing test recorded, the reports kept", async () => {
    expect(record).toMatchObject({ status: "failed", test: { ran: true, passed: false, source: "junit", command: "sh run-tests.sh" } })
    expect(record.tests).toEqual({ "calc.adds": "passed", "calc.legacy": "failed" })
    expect(record.failingTests).toEqual(["calc.legacy"])
    expect(record.message).toBe("`sh run-tests.sh` failed: calc.legacy")
    const dir = Baseline.evidenceDir(repo.root, record.commit)
    expect(await readFile(path.join(dir, "junit-build_test-results_TEST-legacy.xml"), "utf8")).toMatch(/<failure/)
    expect(await readFile(path.join(dir, "test.log"), "utf8")).toMatch(/JUnit reports \(build\/test-results\/\*\.xml\): build\/test-results\/TEST-adds\.xml, build\/test-results\/TEST-legacy\.xml/)
  })

  test("a correct task passes; the test failing on the baseline is inherited; a stale report is not read", async () => {
    const wt = await task("J-ok", (ws) => ws.write("README.md", "# calc\n"))
    // A report an earlier run left behind, naming a failure: cleared before the tests run.
    await mkdir(path.join(wt, "build", "test-results"), { recursive: true })
    await writeFile(path.join(wt, "build/test-results/TEST-stale.xml"), '<testsuite><testcase classname="calc" name="stale"><failure/></testcase></testsuite>')
    const report = await gated("J-ok", wt)
    expect(report.passed, report.message).toBe(true)
    expect(report.inheritedTests).toEqual(["calc.legacy"])
    expect(report.gates.find((g) => g.gate === "test")?.summary).toMatch(/2 test\(s\) in the JUnit reports; inherited .*calc\.legacy/)
    expect(existsSync(path.join(wt, "build/test-results/TEST-stale.xml"))).toBe(false)
  })

  test("a task that breaks a test that passed on the baseline is blamed for it alone", async () => {
    const wt = await task("J-bad", (ws) => ws.write("src/value", "41\n"))
    const report = await gated("J-bad", wt)
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("test")
    expect(report.message).toMatch(/Failing tests: calc\.adds\n/)
    expect(report.message).toMatch(/inherited, not yours to fix\): calc\.legacy/)
    expect(existsSync(path.join(report.evidenceDir, "junit-build_test-results_TEST-adds.xml"))).toBe(true)
  })

  test("a task whose new test fails is blamed for it", async () => {
    const wt = await task("J-new", (ws) => ws.write("tests/new.sh", "exit 1\n"))
    const report = await gated("J-new", wt)
    expect(report.passed).toBe(false)
    expect(report.message).toMatch(/Failing tests: calc\.new\n/)
  })

  test("judged per test though the command exits 0: a runner told to ignore failures still names them", async () => {
    const ignoring = Toolchain.parse(toolchain("sh run-tests.sh || true"))
    const ok = await gated("J-ok0", await task("J-ok0", (ws) => ws.write("README.md", "# calc\n")), { toolchain: ignoring })
    expect(ok.passed, ok.message).toBe(true)
    expect(ok.inheritedTests).toEqual(["calc.legacy"])
    const bad = await gated("J-bad0", await task("J-bad0", (ws) => ws.write("src/value", "7\n")), { toolchain: ignoring })
    expect(bad.passed).toBe(false)
    expect(bad.message).toMatch(/`sh run-tests.sh \|\| true` exited 0, but the JUnit reports name failing tests/)
    expect(bad.message).toMatch(/Failing tests: calc\.adds\n/)
  })

  test("the merge build judges the candidate the same way (it runs the test gate)", async () => {
    const top = await Worktrees.repoRoot(repo.root)
    const base = (await repo.git(["rev-parse", "main"])).trim()
    const verify = async (taskId: string) =>
      MergeBuild.verify(
        { top, taskId, integration: "main", base, commit: (await repo.git(["rev-parse", `air/${taskId}`])).trim() },
        { evidenceDir: path.join(repo.root, ".air", "local", "evidence", taskId, "merge-1"), baseline: { commit: record.commit, failingTests: record.failingTests } },
      )
    const good = await verify("J-ok")
    expect(good.passed, good.summary).toBe(true)
    expect(good.summary).toMatch(/inherited .*calc\.legacy/)
    const bad = await verify("J-bad")
    expect(bad.passed).toBe(false)
    expect(bad.summary).toBe("merge failing tests: calc.adds")
  })

  test("a baseline whose runner exits 0 still records the failures its reports name", async () => {
    const other = await createCppRepo({ empty: true, files: { ...FILES, [Toolchain.RULES_PATH]: toolchain("sh run-tests.sh || true") } })
    try {
      const r = await Baseline.run(other.root, "main")
      expect(r).toMatchObject({ status: "failed", test: { passed: false, command: "sh run-tests.sh || true" }, failingTests: ["calc.legacy"] })
    } finally {
      await other.cleanup()
    }
  })
})

describe("finding the reports", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "air-junit-files-"))
    for (const file of ["build/test-results/TEST-a.xml", "build/test-results/nested/TEST-b.xml", "out/report.xml", "out/notes.txt"]) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true })
      await writeFile(path.join(dir, file), "<testsuite/>")
    }
    await writeFile(path.join(dir, "..", `${path.basename(dir)}-secret.xml`), "SECRET")
    await symlink(path.join(dir, "..", `${path.basename(dir)}-secret.xml`), path.join(dir, "build/test-results/TEST-link.xml"))
    await symlink(path.join(dir, ".."), path.join(dir, "up"))
  })
  afterAll(async () => {
    await rm(path.join(dir, "..", `${path.basename(dir)}-secret.xml`), { force: true })
    await rm(dir, { recursive: true, force: true })
  })

  test("globs: * within a directory, ** across, a plain path; symlinks (out of the worktree) never read", async () => {
    expect(await JUnitFiles.find(dir, ["build/test-results/*.xml"])).toEqual(["build/test-results/TEST-a.xml"])
    expect(await JUnitFiles.find(dir, ["build/**/*.xml", "out/report.xml"])).toEqual(["build/test-results/TEST-a.xml", "build/test-results/nested/TEST-b.xml", "out/report.xml"])
    expect(await JUnitFiles.find(dir, ["**/*.xml"])).not.toContain("build/test-results/TEST-link.xml")
    expect(await JUnitFiles.find(dir, [`up/${path.basename(dir)}-secret.xml`, "up/*.xml"])).toEqual([])
    expect(await JUnitFiles.read(dir, ["out/*"])).toEqual([{ file: "out/notes.txt", xml: "<testsuite/>", cases: [] }, { file: "out/report.xml", xml: "<testsuite/>", cases: [] }])
  })

  test("toolchain.json takes only paths inside the worktree", () => {
    expect(Toolchain.parse(JSON.stringify({ schemaVersion: 1, junit: ["build/**/TEST-*.xml"] })).junit).toEqual(["build/**/TEST-*.xml"])
    for (const bad of ["/tmp/x.xml", "../x.xml", "build/../../x.xml", ".git/x.xml"])
      expect(() => Toolchain.parse(JSON.stringify({ schemaVersion: 1, junit: [bad] })), bad).toThrow(Toolchain.RulesInvalid)
  })
})
