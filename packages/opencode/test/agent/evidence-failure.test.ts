import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { Evidence, Guard, Sessions } from "../../src/agent"

/**
 * When the failure being repaired is known (the task's last failed gate report), only a command that
 * reproduces it is the debugger's evidence: the failing gate command (normalised), or a build/test/analysis
 * run naming a file or test the failure names — not any run of a known program.
 */
const base = realpathSync(mkdtempSync(join(tmpdir(), "air-evidence-failure-")))
const project = join(base, "project")
const worktree = join(project, ".air", "local", "worktrees", "T7")
const evidenceDir = join(project, ".air", "local", "evidence", "T7")
mkdirSync(join(worktree, "src"), { recursive: true })
afterAll(() => rmSync(base, { recursive: true, force: true }))

function report(attempt: number, passed: boolean, gate: string, log: string, message: string): void {
  const dir = join(evidenceDir, `attempt-${attempt}`)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, `${gate}.log`), log)
  const gates = [{ gate, passed, ran: true, ms: 1, logPath: join(dir, `${gate}.log`), summary: "" }]
  writeFileSync(join(dir, "report.json"), JSON.stringify({ taskId: "T7", attempt, kind: "feature", passed, ...(passed ? {} : { failedGate: gate }), message, gates, changedFiles: [], findings: [], requires: [], evidenceDir: dir }))
}

// Attempt 1 failed its build; attempt 2 (the newest) failed its tests: the newest failure is the one repaired.
report(1, false, "build", `$ cmake --build ${worktree}/.air-build -j 4\n# cwd: ${worktree}\nsrc/old.cpp:1: error\n# exit 1\n`, "build failed in src/old.cpp")
report(
  2,
  false,
  "test",
  `$ ctest --test-dir .air-build --output-on-failure -j 2\n# cwd: ${worktree}\nThe following tests FAILED:\n\t  1 - calc_test (Failed)\n# exit 8\n`,
  "task T7: test failed: calc_test; tests/test_calc.cpp:14: CHECK(calc::neg(3) == -3) failed",
)

const failure = Evidence.failureOf(evidenceDir)!

describe("the failure being repaired", () => {
  it("is read from the newest failed report: the failed gate's commands and the files and tests it names", () => {
    expect(failure.commands).toEqual(["ctest --test-dir .air-build --output-on-failure -j 2"])
    expect(failure.names).toEqual(expect.arrayContaining(["calc_test", "tests/test_calc.cpp"]))
    expect(failure.names).not.toContain("src/old.cpp")
  })

  it("a command reproduces it when it runs the failing command (parallelism, extra options and absolute paths aside) or names what failed", () => {
    const yes = [
      "ctest --test-dir .air-build --output-on-failure",
      `ctest --test-dir ${worktree}/.air-build --output-on-failure -j8 -R calc`,
      "cmake --build .air-build && ctest --test-dir .air-build --output-on-failure -j 2",
      "ctest --test-dir build -R calc_test",
      "./.air-build/tests/calc_test",
      "g++ -std=c++17 -Iinclude -c tests/test_calc.cpp -o /tmp/t.o",
    ]
    const no = [
      "cmake --build .air-build",
      "ctest --test-dir elsewhere --output-on-failure",
      "make docs",
      "cmake --version",
      "/usr/bin/test -e tests/test_calc.cpp",
      "cat tests/test_calc.cpp",
      "ctest --test-dir .air-build --output-on-failure; echo fixed > src/calc.cpp",
      "ctest -N -R calc_test",
    ]
    for (const c of yes) expect([c, Evidence.fromBash(c, [], worktree, failure)?.kind]).toEqual([c, expect.stringMatching(/test|build/)])
    for (const c of no) expect([c, Evidence.fromBash(c, [], worktree, failure)]).toEqual([c, undefined])
    // Without a known failure, the older rule: any non-trivial run of a known program.
    expect(Evidence.fromBash("cmake --build .air-build", [], worktree)?.kind).toBe("build")
  })

  it("the JUnit report file the test gate asks CTest for is not a word the debugger must repeat", () => {
    const gate = { commands: [`ctest --test-dir .air-build --output-on-failure --output-junit ${worktree}/.air-build/0-ctest.xml`], names: ["calc"] }
    expect(Evidence.fromBash("ctest --test-dir .air-build --output-on-failure", [], worktree, gate)?.kind).toBe("test")
    expect(Evidence.fromBash("ctest --test-dir elsewhere --output-on-failure", [], worktree, gate)).toBeUndefined()
  })

  it("no failed report (none yet, or the newest passed): nothing to compare", () => {
    expect(Evidence.failureOf(join(base, "nowhere"))).toBeUndefined()
    const other = join(base, "passed")
    mkdirSync(join(other, "attempt-1"), { recursive: true })
    writeFileSync(join(other, "attempt-1", "report.json"), JSON.stringify({ passed: true }))
    expect(Evidence.failureOf(other)).toBeUndefined()
  })
})

describe("the guard with the task's failure on disk", () => {
  beforeEach(() => Sessions.clear())
  const edit = { filePath: join(worktree, "src", "calc.cpp"), oldString: "a", newString: "b" }

  it("a build of something else is no evidence: the edit of the next turn is still refused; the failing test run is", async () => {
    Sessions.record("d1", { agent: "debugger", worktree, directory: worktree, taskId: "T7" })
    Sessions.nextTurn("d1")
    const unrelated = { command: "cmake --build .air-build", description: "build" }
    await Guard.before({ tool: "bash", sessionID: "d1", callID: "c1" }, { args: unrelated })
    await Guard.after({ tool: "bash", sessionID: "d1", callID: "c1" }, { output: "ok", metadata: { exit: 0 } })
    Sessions.nextTurn("d1")
    const refused = Guard.decide("d1", "edit", { ...edit })
    expect(refused.allow ? "" : refused.reason).toBe("evidence")

    const reproduce = { command: "ctest --test-dir .air-build --output-on-failure", description: "reproduce" }
    await Guard.before({ tool: "bash", sessionID: "d1", callID: "c2" }, { args: reproduce })
    await Guard.after({ tool: "bash", sessionID: "d1", callID: "c2" }, { output: "1 - calc_test (Failed)", metadata: { exit: 8 } })
    expect(Sessions.get("d1")!.evidence.map((e) => e.detail)).toEqual(["ctest --test-dir .air-build --output-on-failure"])
    // Same turn: still refused; next turn: allowed.
    expect(Guard.decide("d1", "edit", { ...edit }).allow).toBe(false)
    Sessions.nextTurn("d1")
    expect(Guard.decide("d1", "edit", { ...edit }).allow).toBe(true)
  })
})
