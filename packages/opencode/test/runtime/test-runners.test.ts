import { spawnSync } from "node:child_process"
import { chmod, readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { firstGates } from "./task-branch.ts"
import { FinalCheck } from "../../src/scheduler/runtime/integration/final-check.ts"
import { Baseline } from "../../src/scheduler/runtime/integration/baseline.ts"
import { Gates, REGISTRY } from "../../src/scheduler/runtime/gates/index.ts"
import { TestRun } from "../../src/scheduler/runtime/gates/runners/index.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { createCppRepo, type CppRepo, type Workspace } from "./cpp-repo.ts"

/**
 * Test runners read per test (gates/runners/): real pytest and vitest on tiny projects in a temp git
 * repository. A test failing on the base is inherited; a test the task breaks fails the gate with its name
 * and the runner's message; a runner that prints nothing and exits 0 "ran no test"; output the runner's
 * reader cannot read fails the gate as unreadable, never passes.
 */

const VITEST = path.resolve(import.meta.dirname, "../../../../node_modules/.bin/vitest")

const toolchain = (test: string) =>
  JSON.stringify({ schemaVersion: 1, build: ["true"], test: [test], analysis: { cppcheck: { enabled: false } }, cache: { tool: "none" } })

function project(files: Record<string, string>) {
  let repo: CppRepo
  let record: Baseline.Record
  return {
    repo: () => repo,
    record: () => record,
    async setup() {
      repo = await createCppRepo({ empty: true, files })
      record = await Baseline.run(repo.root, "main")
    },
    cleanup: () => repo?.cleanup(),
    async task(taskId: string, work: (ws: Workspace) => Promise<void>) {
      const wt = await Worktrees.create(repo.root, taskId, "main")
      const ws = repo.at(wt.path)
      await work(ws)
      await ws.commitAll(`${taskId}: change`)
      return wt.path
    },
    gated(taskId: string, worktree: string, extra: Partial<Gates.RunInput> = {}) {
      return firstGates(repo.root, taskId, worktree, {
        requires: ["diff", "test"],
        gates: REGISTRY.filter((g) => g.id === "commit" || g.id === "diff" || g.id === "build" || g.id === "test" || g.id === "evidence"),
        baseline: { commit: record.commit, failingTests: record.failingTests },
        ...extra,
      })
    },
  }
}

describe("pytest, read from its --junitxml report", () => {
  const p = project({
    ".gitignore": "build/\n__pycache__/\n.air/\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py":
      "from calc import add\n\n\ndef test_adds():\n    assert add(2, 2) == 4\n\n\ndef test_legacy():\n    assert add(1, 2) == 4, 'legacy: expected 4'\n\n\ndef test_skipped():\n    import pytest\n    pytest.skip('not here')\n",
    [Toolchain.RULES_PATH]: toolchain("python3 -m pytest -q -p no:cacheprovider tests"),
  })
  beforeAll(() => p.setup(), 120_000)
  afterAll(() => p.cleanup())

  test("the baseline records each test under its pytest name; the failing one is the base's", async () => {
    const record = p.record()
    expect(record).toMatchObject({ status: "failed", test: { ran: true, passed: false, command: "python3 -m pytest -q -p no:cacheprovider tests" } })
    expect(record.tests).toEqual({ "tests.test_calc.test_adds": "passed", "tests.test_calc.test_legacy": "failed", "tests.test_calc.test_skipped": "skipped" })
    expect(record.failingTests).toEqual(["tests.test_calc.test_legacy"])
    const result = TestRun.Result.parse(JSON.parse(await readFile(path.join(Baseline.evidenceDir(p.repo().root, record.commit), "test-results-1.json"), "utf8")))
    expect(result).toMatchObject({ framework: "pytest", total: 3, passed: 1, failed: 1, skipped: 1 })
    expect(result.failures[0]!.message).toMatch(/legacy: expected 4/)
  })

  test("a task that leaves the tests alone passes; the base's failing test is inherited", async () => {
    const report = await p.gated("P-ok", await p.task("P-ok", (ws) => ws.write("README.md", "# calc\n")))
    expect(report.passed, report.message).toBe(true)
    expect(report.inheritedTests).toEqual(["tests.test_calc.test_legacy"])
    expect(report.gates.find((g) => g.gate === "test")?.summary).toMatch(/pytest: 3 test\(s\), 1 passed, 1 failed, 1 skipped.*inherited .*test_legacy/)
  })

  test("a task that breaks a passing test fails the gate with its name and pytest's message", async () => {
    const report = await p.gated("P-bad", await p.task("P-bad", (ws) => ws.write("calc.py", "def add(a, b):\n    return a - b\n")))
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("test")
    expect(report.message).toMatch(/Failing tests: tests\.test_calc\.test_adds\n/)
    expect(report.message).toMatch(/assert 0 == 4/)
    expect(report.message).toMatch(/inherited, not yours to fix\): tests\.test_calc\.test_legacy/)
  })

  test("the final check reads pytest too: the base's failure inherited, else named", async () => {
    const inherited = await FinalCheck.run(p.repo().root, { sandbox: "off", knownFailingTests: p.record().failingTests })
    expect(inherited.passed, inherited.summary).toBe(true)
    expect(inherited.summary).toMatch(/inherited\): tests\.test_calc\.test_legacy/)
    const blamed = await FinalCheck.run(p.repo().root, { sandbox: "off" })
    expect(blamed.passed).toBe(false)
    expect(await readFile(path.join(blamed.evidenceDir, "final.log"), "utf8")).toMatch(/pytest: 3 test\(s\), 1 passed, 1 failed, 1 skipped/)
  })

  test("a runner that prints nothing and exits 0 ran no test: a task that requires tests fails", async () => {
    const silent = Toolchain.parse(toolchain("bin/pytest tests"))
    const wt = await p.task("P-silent", async (ws) => {
      await ws.write("bin/pytest", "#!/bin/sh\nexit 0\n")
      await chmod(path.join(ws.root, "bin/pytest"), 0o755)
    })
    const report = await p.gated("P-silent", wt, { toolchain: silent })
    const line = report.gates.find((g) => g.gate === "test")
    expect(line).toMatchObject({ ran: false })
    expect(line?.summary).toMatch(/`bin\/pytest tests` ran no test \(pytest found none\)/)
    expect(report.passed).toBe(false)
    expect(report.message).toMatch(/ran no test/)
  })

  test("output the reader cannot read is said, never a pass", async () => {
    const chatty = Toolchain.parse(toolchain("bin/pytest tests"))
    const wt = await p.task("P-chatty", async (ws) => {
      await ws.write("bin/pytest", "#!/bin/sh\necho 'all good, trust me'\nexit 0\n")
      await chmod(path.join(ws.root, "bin/pytest"), 0o755)
    })
    const report = await p.gated("P-chatty", wt, { toolchain: chatty })
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("test")
    expect(report.message).toMatch(/exited 0 but its results could not be read \(pytest wrote no JUnit report \(--junitxml\)\)/)
  })
})

describe("vitest, read from its JSON reporter", () => {
  const p = project({
    ".gitignore": "build/\nnode_modules/\n.air/\n",
    "calc.js": "export const add = (a, b) => a + b\n",
    "calc.test.js":
      'import { add } from "./calc.js"\n\ndescribe("add", () => {\n  test("adds", () => expect(add(2, 2)).toBe(4))\n  test("legacy", () => expect(add(1, 2)).toBe(4))\n})\n',
    [Toolchain.RULES_PATH]: toolchain(`${VITEST} run --globals`),
  })
  beforeAll(() => p.setup(), 120_000)
  afterAll(() => p.cleanup())

  test("the base's failing test is inherited; a broken one fails with its name and vitest's message", async () => {
    expect(p.record().tests).toEqual({ "calc.test.js > add > adds": "passed", "calc.test.js > add > legacy": "failed" })
    const ok = await p.gated("V-ok", await p.task("V-ok", (ws) => ws.write("README.md", "# calc\n")))
    expect(ok.passed, ok.message).toBe(true)
    expect(ok.inheritedTests).toEqual(["calc.test.js > add > legacy"])
    expect(ok.gates.find((g) => g.gate === "test")?.summary).toMatch(/vitest: 2 test\(s\), 1 passed, 1 failed, 0 skipped/)
    const bad = await p.gated("V-bad", await p.task("V-bad", (ws) => ws.write("calc.js", "export const add = (a, b) => a * b + 1\n")))
    expect(bad.passed).toBe(false)
    expect(bad.failedGate).toBe("test")
    expect(bad.message).toMatch(/Failing tests: calc\.test\.js > add > adds\n/)
    expect(bad.message).toMatch(/expected 5 to be 4/)
  })

  test("vitest finding no test file ran no test (its exit 1 and empty report are not a failure to debug)", async () => {
    const none = Toolchain.parse(toolchain(`${VITEST} run --globals no-such-test`))
    const report = await p.gated("V-none", await p.task("V-none", (ws) => ws.write("README.md", "# none\n")), { toolchain: none })
    expect(report.gates.find((g) => g.gate === "test")).toMatchObject({ ran: false, summary: expect.stringMatching(/ran no test \(vitest found none\)/) })
    expect(report.passed).toBe(false)
  })
})

// Go and Rust are installed where the analysers need them; without them their runners' tests do not run.
const has = (tool: string) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0

describe.skipIf(!has("go"))("go test, read from its -json events", () => {
  const p = project({
    ".gitignore": "build/\n.air/\n",
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    "calc_test.go":
      'package calc\n\nimport "testing"\n\nfunc TestAdds(t *testing.T) {\n\tif got := Add(2, 2); got != 4 {\n\t\tt.Fatalf("Add(2, 2) = %d, want 4", got)\n\t}\n}\n\nfunc TestLegacy(t *testing.T) {\n\tif got := Add(1, 2); got != 4 {\n\t\tt.Errorf("legacy: Add(1, 2) = %d, want 4", got)\n\t}\n}\n',
    // HOME is read-only in the sandbox: the runner puts go's build cache in AirCoding's own cache dir.
    [Toolchain.RULES_PATH]: toolchain("go test ./..."),
  })
  beforeAll(() => p.setup(), 120_000)
  afterAll(() => p.cleanup())

  test("the base's failing test is inherited; a broken one fails with its name and go's message; a build error is said", async () => {
    expect(p.record().tests).toEqual({ "example.com/calc.TestAdds": "passed", "example.com/calc.TestLegacy": "failed" })
    const ok = await p.gated("G-ok", await p.task("G-ok", (ws) => ws.write("README.md", "# calc\n")))
    expect(ok.passed, ok.message).toBe(true)
    expect(ok.inheritedTests).toEqual(["example.com/calc.TestLegacy"])
    const bad = await p.gated("G-bad", await p.task("G-bad", (ws) => ws.write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a * b + 1 }\n")))
    expect(bad.passed).toBe(false)
    expect(bad.failedGate).toBe("test")
    expect(bad.message).toMatch(/Failing tests: example\.com\/calc\.TestAdds\n/)
    expect(bad.message).toMatch(/Add\(2, 2\) = 5, want 4/)
    const broken = await p.gated("G-broken", await p.task("G-broken", (ws) => ws.write("calc.go", "package calc\n\nfunc Add(a, b int) int { return a + }\n")))
    expect(broken.passed).toBe(false)
    expect(broken.failedGate).toBe("test")
    // go 1.19 prints a build error as text, no event: the compiler's words, and that no test result was read.
    expect(broken.message).toMatch(/calc\.go:3:\d+: syntax error/)
    expect(broken.message).toMatch(/go test printed no test2json event \(-json\): no per-test result/)
  })
})

describe.skipIf(!has("cargo"))("cargo test, read from libtest's output", () => {
  const p = project({
    ".gitignore": "build/\ntarget/\n.air/\n",
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs":
      'pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4, "adds: expected 4"); }\n    #[test]\n    fn legacy() { assert_eq!(add(1, 2), 4, "legacy: expected 4"); }\n}\n',
    [Toolchain.RULES_PATH]: toolchain("cargo test --offline"),
  })
  beforeAll(() => p.setup(), 300_000)
  afterAll(() => p.cleanup())

  test("the base's failing test is inherited; a broken one fails with its name and the panic's message", async () => {
    expect(p.record().tests).toEqual({ "src/lib.rs::tests::adds": "passed", "src/lib.rs::tests::legacy": "failed" })
    const ok = await p.gated("C-ok", await p.task("C-ok", (ws) => ws.write("README.md", "# calc\n")))
    expect(ok.passed, ok.message).toBe(true)
    expect(ok.inheritedTests).toEqual(["src/lib.rs::tests::legacy"])
    const bad = await p.gated("C-bad", await p.task("C-bad", async (ws) => ws.write("src/lib.rs", (await readFile(path.join(p.repo().root, "src/lib.rs"), "utf8")).replace("a + b", "a * b + 1"))))
    expect(bad.passed).toBe(false)
    expect(bad.failedGate).toBe("test")
    expect(bad.message).toMatch(/Failing tests: src\/lib\.rs::tests::adds\n/)
    expect(bad.message).toMatch(/adds: expected 4/)
  }, 300_000)
})
