import { existsSync } from "node:fs"
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { CompilerCache } from "../../src/scheduler/runtime/toolchain/cache.ts"
import { GateError } from "../../src/scheduler/runtime/errors.ts"
import { MergeQueue } from "../../src/scheduler/runtime/integration/merge.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { beforeStallEnds } from "../support/stall.ts"
import { CALC_CPP, CALC_H, createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { taskBranches, firstGates } from "./task-branch.ts"

const ALL: Gates.Requirement[] = ["diff", "build", "test", "analysis"]

// The tests are independent tasks in one repository: they run concurrently (cmake is mostly waiting).
describe.concurrent("evidence gates", () => {
  let repo: CppRepo

  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  const { task } = taskBranches(() => repo)

  function gates(taskId: string, worktree: string, extra: Partial<Gates.RunInput> = {}) {
    return firstGates(repo.root, taskId, worktree, { requires: ALL, ...extra })
  }

  const withFunction = (body: string) => CALC_CPP + "\n" + body + "\n"

  test("a done with no commit on the task branch is refused at the commit gate", async () => {
    const { wt } = await task("no-commit", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b; }"))
    })
    const report = await gates("no-commit", wt.path)
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("commit")
    expect(report.message).toMatch(/no commit ahead of main/)
    expect(report.gates.map((g) => g.gate)).toEqual(["commit"])
  })

  test("uncommitted changes are refused: uncommitted work is not evidence", async () => {
    const { wt } = await task("dirty", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b; }"))
      await ws.commitAll("mul")
      await ws.write("include/calc.h", "#pragma once\nint add(int a, int b);\nint sub(int a, int b);\nint mul(int a, int b);\n")
    })
    const report = await gates("dirty", wt.path)
    expect(report.failedGate).toBe("commit")
    expect(report.message).toContain("uncommitted changes: include/calc.h")
    expect(report.message).toContain("not evidence")
  })

  test("an untracked source file the commit lacks is refused too (the build would use a file the merge would not carry)", async () => {
    const { wt } = await task("untracked", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b; }"))
      await ws.commitAll("mul")
      await ws.write("src/helper.cpp", "int helper() { return 1; }\n")
    })
    const report = await gates("untracked", wt.path)
    expect(report.failedGate).toBe("commit")
    expect(report.message).toContain("src/helper.cpp")
  })

  test("work committed on another branch or a detached HEAD is refused: what is built must be what is merged", async () => {
    const { wt, ws } = await task("wandered", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b; }"))
      await ws.commitAll("mul")
      await ws.git(["switch", "--quiet", "--detach"])
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b * 1; }"))
      await ws.commitAll("more, detached")
    })
    const report = await gates("wandered", wt.path)
    expect(report.failedGate).toBe("commit")
    expect(report.message).toContain("is on a detached HEAD, not on the task branch air/wandered")
    await ws.git(["switch", "--quiet", "-c", "side"])
    expect((await gates("wandered", wt.path)).message).toContain("is on side, not on the task branch")
  })

  test("a commit with an empty diff is refused at the diff gate", async () => {
    const { wt } = await task("empty-diff", async (ws) => {
      await ws.git(["commit", "--quiet", "--allow-empty", "-m", "done (nothing changed)"])
    })
    const report = await gates("empty-diff", wt.path)
    expect(report.failedGate).toBe("diff")
    expect(report.message).toMatch(/diff is empty/)
    expect(report.gates.map((g) => [g.gate, g.passed])).toEqual([
      ["commit", true],
      ["diff", false],
    ])
  })

  test("a syntax error fails the build gate with the compiler's first error in the message", async () => {
    const { wt } = await task("build-fails", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) {\n  return a * b\n}"))
      await ws.commitAll("mul, missing semicolon")
    })
    const report = await gates("build-fails", wt.path)
    expect(report.failedGate).toBe("build")
    expect(report.message).toMatch(/src\/calc\.cpp:12:\d+: error: expected [‘']?;/)
    expect(report.message).not.toContain(wt.path + "/src")
    const build = report.gates.find((g) => g.gate === "build")!
    expect(build.logPath).toBe(path.join(report.evidenceDir, "build.log"))
    const log = await readFile(build.logPath!, "utf8")
    expect(log).toMatch(/\$ cmake --build \.air-build -j \d+\n/)
    expect(log).toMatch(/error: expected [‘']?;/)
  })

  test("a failing test fails the test gate, naming the test and its output", async () => {
    const { wt } = await task("test-fails", async (ws) => {
      await ws.write("src/calc.cpp", CALC_CPP.replace("return a - b;", "return a + b;"))
      await ws.commitAll("sub, wrongly")
    })
    const report = await gates("test-fails", wt.path)
    expect(report.failedGate).toBe("test")
    expect(report.message).toContain("calc_test (Failed)")
    expect(report.message).toContain("FAIL: sub(5, 3): expected 2, got 8")
    expect(await readFile(path.join(report.evidenceDir, "test.log"), "utf8")).toContain("ctest --test-dir .air-build")
    expect(report.gates.map((g) => [g.gate, g.passed])).toEqual([
      ["commit", true],
      ["diff", true],
      ["write-set", true],
      ["secrets", true],
      ["logging", true],
      ["build", true],
      ["log-levels", true],
      ["test", false],
    ])
  })

  test("a cppcheck error in a changed file fails the analysis gate with file:line", async () => {
    const { wt } = await task("cppcheck-error", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int oops() {\n  int a[2] = {0, 0};\n  a[5] = 1;\n  return a[0];\n}"))
      await ws.commitAll("oops")
    })
    const report = await gates("cppcheck-error", wt.path)
    const line = withFunction("int oops() {\n  int a[2] = {0, 0};\n  a[5] = 1;").trimEnd().split("\n").length
    expect(report.failedGate).toBe("analysis")
    expect(report.message).toContain(`src/calc.cpp:${line}: arrayIndexOutOfBounds`)
    expect(report.findings).toContainEqual(
      expect.objectContaining({ file: "src/calc.cpp", line, severity: "error", id: "arrayIndexOutOfBounds" }),
    )
    expect(await readFile(path.join(report.evidenceDir, "cppcheck.log"), "utf8")).toContain("arrayIndexOutOfBounds")
  })

  test("a style-only finding passes, is recorded, and every piece of evidence is written", async () => {
    const { wt } = await task("style-only", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) {\n  int unused = 0;\n  unused = 1;\n  return a * b;\n}"))
      await ws.write("README.md", "calc with mul\n")
      await ws.commitAll("mul")
      // Left behind by the executor's own build and notes: not sources, not in the way.
      await ws.write("build/CMakeCache.txt", "# cache\n")
      await ws.write("build/CMakeFiles/3.25.1/CompilerIdCXX/CMakeCXXCompilerId.cpp", "int main() {}\n")
      await ws.write("notes.txt", "scratch\n")
    })
    const report = await gates("style-only", wt.path)
    expect(report.message).toContain("all gates passed")
    expect(report.passed).toBe(true)
    expect(report.failedGate).toBeUndefined()
    expect(report.gates.map((g) => g.gate)).toEqual(["commit", "diff", "write-set", "secrets", "logging", "build", "log-levels", "test", "analysis", "clang-tidy", "mypy", "pylint", "tsc", "go-vet", "staticcheck", "clippy", "ui-capture", "service-probe", "evidence"])
    expect(report.findings.length).toBeGreaterThan(0)
    expect(report.findings.every((f) => f.severity !== "error")).toBe(true)
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "src/calc.cpp", id: "unreadVariable" }))
    expect(report.changedFiles).toEqual(["README.md", "src/calc.cpp"])
    expect(report.evidence).toEqual({
      diff: path.join(report.evidenceDir, "diff.patch"),
      build: path.join(report.evidenceDir, "build.log"),
      test: path.join(report.evidenceDir, "test.log"),
      analysis: path.join(report.evidenceDir, "cppcheck.log"),
      report: path.join(report.evidenceDir, "report.json"),
    })

    for (const name of ["build.log", "test.log", "cppcheck.log", "diff.patch", "report.json"]) {
      expect(existsSync(path.join(report.evidenceDir, name)), name).toBe(true)
    }
    const onDisk = Gates.GateReport.parse(JSON.parse(await readFile(path.join(report.evidenceDir, "report.json"), "utf8")))
    expect(onDisk).toEqual(report)
    expect(await readFile(path.join(report.evidenceDir, "diff.patch"), "utf8")).toContain("+int mul(int a, int b) {")
    // cppcheck ran on the changed C++ file only, not README.md nor unchanged files.
    const log = await readFile(path.join(report.evidenceDir, "cppcheck.log"), "utf8")
    // …through the build's compile_commands.json (the project's own includes and defines), filtered to the changed unit.
    expect(log).toMatch(/\$ cppcheck .* --project=\S+\/\.air-build\/compile_commands\.json --file-filter=\S+\/src\/calc\.cpp\n/)
    // The gates' build directory and the evidence stay out of git.
    expect((await repo.at(wt.path).git(["status", "--porcelain"])).trim()).toBe("?? build/\n?? notes.txt")
    expect((await repo.git(["status", "--porcelain"])).trim()).toBe("")
  })

  test("a changed header of a C++ project is analysed as C++ (a namespace is not a C syntax error)", async () => {
    const { wt } = await task("cxx-header", async (ws) => {
      await ws.write("include/calc.h", CALC_H + "\nnamespace ext {\nint mul(int a, int b);\n}  // namespace ext\n")
      await ws.commitAll("declare mul in a namespace")
    })
    const report = await gates("cxx-header", wt.path, { requires: ["diff"] })
    expect(report.findings.filter((f) => f.id === "syntaxError")).toEqual([])
    expect(report.gates.find((g) => g.gate === "analysis")?.passed).toBe(true)
    const log = await readFile(path.join(report.evidenceDir, "cppcheck.log"), "utf8")
    expect(log).toMatch(/--language=c\+\+ .*include\/calc\.h/)
  })

  test("cppcheck missing blocks the analysis with an install hint, never a silent pass", async () => {
    const { wt } = await task("no-cppcheck", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b; }"))
      await ws.commitAll("mul")
    })
    // A PATH with only the tools the remaining steps need: no cppcheck.
    const bin = await mkdtemp(path.join(tmpdir(), "air-path-"))
    try {
      await symlink("/bin/sh", path.join(bin, "sh"))
      const report = await gates("no-cppcheck", wt.path, {
        toolchain: { schemaVersion: 1, build: [], test: [] },
        requires: ["diff", "analysis"],
        env: { ...process.env, PATH: bin },
      })
      expect(report.passed).toBe(false)
      expect(report.failedGate).toBe("tool-missing")
      expect(report.message).toContain("sudo apt-get install cppcheck")
      expect(report.gates.at(-1)).toMatchObject({ gate: "analysis", passed: false, missingTool: "cppcheck" })
    } finally {
      await rm(bin, { recursive: true, force: true })
    }
  })

  test("changes without C/C++ files pass the analysis with a note, and a task with no C/C++ change is not analysed", async () => {
    const { wt } = await task("docs-only", async (ws) => {
      await ws.write("docs/usage.md", "use add and sub\n")
      await ws.commitAll("docs")
    })
    const report = await gates("docs-only", wt.path, {
      kind: "docs",
      requires: ["diff"],
      toolchain: { schemaVersion: 1 },
    })
    expect(report.passed).toBe(true)
    expect(report.gates.find((g) => g.gate === "analysis")).toMatchObject({ passed: true, ran: false, notApplicable: true, summary: "not applicable: no C/C++ file changed" })
  })

  test("a verify task needs no commit: it passes on build and test evidence of the integration branch's code, and merges as an empty squash", async () => {
    const { wt } = await task("T-2.rv", async () => {})
    const report = await gates("T-2.rv", wt.path, { kind: "verify", requires: ["build", "test"] })
    expect(report.passed, report.message).toBe(true)
    expect(report.gates.find((g) => g.gate === "commit")).toMatchObject({ ran: false })
    expect(report.gates.find((g) => g.gate === "test")).toMatchObject({ passed: true, ran: true })
    const before = (await repo.git(["rev-parse", "main"])).trim()
    const merged = await MergeQueue.merge({ root: repo.root, taskId: "T-2.rv", integration: "main", title: "Re-verify T-2" })
    expect(merged).toMatchObject({ status: "merged", tag: "air/done/T-2.rv" })
    expect((await repo.git(["diff", "--name-only", before, "main"])).trim()).toBe("")
    expect(await Worktrees.remove(repo.root, "T-2.rv", { integration: "main" })).toEqual({ removed: true })
  })

  test("a test task whose toolchain has no test command fails the evidence gate", async () => {
    const { wt } = await task("needs-tests", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b; }"))
      await ws.commitAll("mul")
    })
    const report = await gates("needs-tests", wt.path, {
      kind: "test",
      requires: ["diff", "build", "test"],
      toolchain: { schemaVersion: 1, build: ["true"], test: [] },
    })
    expect(report.failedGate).toBe("evidence")
    expect(report.message).toContain("no test command configured")
    expect(report.gates.find((g) => g.gate === "test")).toMatchObject({ passed: true, ran: false })
  })

  test("a test task whose CMake project registers no test fails the evidence gate: zero tests is not evidence", async () => {
    const { wt } = await task("no-tests", async (ws) => {
      const cmake = await ws.read("CMakeLists.txt")
      await ws.write("CMakeLists.txt", cmake.replace("add_test(NAME calc_test COMMAND calc_test)\n", ""))
      await ws.commitAll("drop the test registration")
    })
    const report = await gates("no-tests", wt.path, { kind: "test", requires: ["diff", "build", "test"] })
    expect(report.failedGate).toBe("evidence")
    expect(report.gates.find((g) => g.gate === "test")).toMatchObject({ passed: true, ran: false })
    expect(report.message).toContain("found no tests")
  })

  test("a command that outlives the timeout is stopped and fails its gate", async () => {
    const { wt } = await task("slow-build", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b; }"))
      await ws.commitAll("mul")
    })
    // The command sleeps 600 times its 0.3 s bound: a report before the sleep ends means it was stopped, not waited for.
    const report = await beforeStallEnds(gates("slow-build", wt.path, { toolchain: { schemaVersion: 1, build: ["sleep 180"], timeoutMs: 300 } }), {
      ms: 180_000,
      what: "the build command's sleep 180",
    })
    expect(report.failedGate).toBe("build")
    expect(report.message).toContain("did not finish within 0.3 s")
  })

  test("without toolchain.json, CMake is detected; without CMakeLists.txt there is nothing to build, and it says so", async () => {
    const detected = await Toolchain.detect(repo.root, { jobs: 3, env: { PATH: "" } })
    expect(detected.source).toBe("detected")
    expect(detected.rules.build).toEqual([
      "cmake -S . -B .air-build -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
      "cmake --build .air-build -j 3",
    ])
    expect(detected.rules.test).toEqual(["ctest --test-dir .air-build --output-on-failure -j 3"])
    expect(detected.rules.analysis.cppcheck.project).toBe(".air-build/compile_commands.json")
    const withNinja = await Toolchain.detect(repo.root, { jobs: 3, env: { PATH: path.dirname(CompilerCache.onPath("ninja") ?? "/usr/bin/ninja") } })
    expect(withNinja.rules.build[0]).toContain("-G Ninja")
    const none = await Toolchain.detect(path.join(repo.root, "src"))
    expect(none.source).toBe("none")
    expect(none.rules.build).toEqual([])
    expect(none.note).toMatch(/no build or test command/)
  })
  test("toolchain.json in the project root replaces detection; a malformed one is a clear error", async () => {
    // Its own repository: toolchain.json applies to every task of a project.
    const own = await createCppRepo()
    const { wt } = await taskBranches(() => own).task("custom-rules", async (ws) => {
      await ws.write("src/calc.cpp", withFunction("int mul(int a, int b) { return a * b; }"))
      await ws.commitAll("mul")
    })
    const rules = path.join(own.root, Toolchain.RULES_PATH)
    await mkdir(path.dirname(rules), { recursive: true })
    try {
      await own.write(
        Toolchain.RULES_PATH,
        JSON.stringify({ schemaVersion: 1, build: ["echo custom-build-ran"], test: ["exit 3"] }),
      )
      const report = await gates("custom-rules", wt.path, { root: own.root, evidenceDir: path.join(own.root, ".air/local/evidence/custom-rules/attempt-1") })
      expect(report.toolchain.source).toBe("file")
      expect(await readFile(path.join(report.evidenceDir, "build.log"), "utf8")).toContain("custom-build-ran")
      expect(report.failedGate).toBe("test")
      expect(report.message).toContain("`exit 3` exited with 3")

      await own.write(Toolchain.RULES_PATH, JSON.stringify({ schemaVersion: 2, build: "make" }))
      const error = await gates("custom-rules", wt.path, { root: own.root, evidenceDir: path.join(own.root, ".air/local/evidence/custom-rules/attempt-1") }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(GateError)
      expect((error as GateError).tag).toBe("ToolchainInvalid")
      expect((error as GateError).cause).toBeInstanceOf(Toolchain.RulesInvalid)
      expect((error as Error).message).toMatch(/schemaVersion/)
      expect((error as Error).message).toMatch(/build/)
    } finally {
      await own.cleanup()
    }
  })
})
