import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { parseClangTidy } from "../../src/scheduler/runtime/gates/clang-tidy.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { taskBranches, firstGates } from "./task-branch.ts"

/** The project's checks: only modernize-use-nullptr, so each finding is one we expect. */
const CLANG_TIDY = "Checks: '-*,modernize-use-nullptr'\n"

/** Legacy code on the integration branch with a finding nobody touched. */
const LEGACY = `#include "calc.h"

int add(int a, int b) {
  return a + b;
}

int* legacy() {
  int* p = 0;
  return p;
}

int sub(int a, int b) {
  return a - b;
}
`

describe.concurrent("the clang-tidy gate (real clang-tidy)", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({ files: { "src/calc.cpp": LEGACY, ".clang-tidy": CLANG_TIDY } })
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  const { task } = taskBranches(() => repo, { commit: true })

  /** "detected": the CMake build runs and writes compile_commands.json. */
  function gates(taskId: string, worktree: string, toolchain: Gates.RunInput["toolchain"] | "detected" = { schemaVersion: 1, analysis: { cppcheck: { enabled: false } } }) {
    return firstGates(repo.root, taskId, worktree, { requires: ["diff"], ...(toolchain === "detected" ? {} : { toolchain }) })
  }

  test("a finding in the task's new code fails; the inherited one is recorded, not blamed", async () => {
    const { wt } = await task("new-null", (ws) => ws.write("src/calc.cpp", LEGACY + "\nint* fresh() {\n  int* q = 0;\n  return q;\n}\n"))
    const report = await gates("new-null", wt.path)
    expect(report.failedGate).toBe("clang-tidy")
    expect(report.message).toContain("src/calc.cpp:17: warning: modernize-use-nullptr")
    expect(report.message).not.toContain("src/calc.cpp:8:")
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "src/calc.cpp", line: 8, id: "modernize-use-nullptr", tool: "clang-tidy", inherited: true }))
    expect(report.findings.find((f) => f.line === 17)?.inherited).toBeUndefined()
  })

  test("an inherited finding alone passes, even with lines inserted above it", async () => {
    const { wt } = await task("touch", (ws) => ws.write("src/calc.cpp", "// a comment\n" + LEGACY.replace("int* legacy() {\n", "int* legacy() {\n  // still legacy\n")))
    const report = await gates("touch", wt.path)
    expect(report.failedGate, report.message).toBeUndefined()
    const tidy = report.gates.find((g) => g.gate === "clang-tidy")
    expect(tidy?.ran).toBe(true)
    expect(tidy?.summary).toMatch(/no new findings; recorded 1 warning; 1 inherited/)
    expect(report.findings).toContainEqual(expect.objectContaining({ line: 10, id: "modernize-use-nullptr", inherited: true }))
  })

  test("through the build's compile_commands.json (-p), the base through its copy", async () => {
    const { wt } = await task("database", (ws) => ws.write("src/calc.cpp", LEGACY + "\nint* fresh() {\n  return 0;\n}\n"))
    const report = await gates("database", wt.path, "detected")
    expect(report.failedGate).toBe("clang-tidy")
    expect(report.message).toContain("src/calc.cpp:17: warning: modernize-use-nullptr")
    expect(report.findings).toContainEqual(expect.objectContaining({ line: 8, inherited: true, tool: "clang-tidy" }))
    const log = report.gates.find((g) => g.gate === "clang-tidy")?.logPath
    expect(log).toBeDefined()
    expect(await readFile(log!, "utf8")).toMatch(/\$ clang-tidy --quiet -p \S+\/\.air-build src\/calc\.cpp/)
    const cache = path.join(repo.root, ".air", "local", "evidence", "_baseline", (await repo.git(["rev-parse", "main"])).trim(), "analysis")
    const baseLogs = (await readdir(cache)).filter((f) => f.startsWith("clang-tidy-") && f.endsWith(".log"))
    const texts = await Promise.all(baseLogs.map((f) => readFile(path.join(cache, f), "utf8")))
    expect(texts.join("\n")).toMatch(/\$ clang-tidy --quiet -p \S+\/base-databases\/database src\/calc\.cpp/)
  })

  test("clang-tidy required but not installed is a tool missing; merely configured, it is recorded as not run", async () => {
    const { wt } = await task("missing", (ws) => ws.write("src/calc.cpp", LEGACY + "\n// more\n"))
    const binary = "/nonexistent/clang-tidy"
    const optional = await gates("missing", wt.path, { schemaVersion: 1, analysis: { cppcheck: { enabled: false }, clangTidy: { binary } } })
    expect(optional.passed, optional.message).toBe(true)
    expect(optional.message).toMatch(/not run: .*clang-tidy \(clang-tidy is not installed/)
    const required = await gates("missing", wt.path, { schemaVersion: 1, analysis: { cppcheck: { enabled: false }, clangTidy: { binary, enabled: true } } })
    expect(required.failedGate).toBe("tool-missing")
    expect(required.gates.find((g) => g.gate === "clang-tidy")?.missingTool).toBe("clang-tidy")
  })
})

describe("without a .clang-tidy", () => {
  test("the gate does not run", async () => {
    const repo = await createCppRepo({ files: { "src/calc.cpp": LEGACY } })
    try {
      const { wt } = await taskBranches(() => repo, { commit: true }).task("plain", (ws) => ws.write("src/calc.cpp", LEGACY + "\nint* fresh() {\n  return 0;\n}\n"))
      const report = await Gates.run({
        root: repo.root,
        worktree: wt.path,
        taskId: "plain",
        base: "main",
        kind: "code",
        attempt: 1,
        evidenceDir: path.join(repo.root, ".air", "local", "evidence", "plain", "attempt-1"),
        requires: ["diff"],
        toolchain: { schemaVersion: 1, analysis: { cppcheck: { enabled: false } } },
      })
      expect(report.passed, report.message).toBe(true)
      expect(report.gates.find((g) => g.gate === "clang-tidy")).toEqual(expect.objectContaining({ ran: false, summary: "no .clang-tidy in the project" }))
      expect(report.findings).toEqual([])
    } finally {
      await repo.cleanup()
    }
  })
})

test("clang-tidy's diagnostics are parsed; notes and excerpts are not findings; -warnings-as-errors keeps the check", () => {
  const output = [
    "/w/src/a.cpp:3:12: warning: use nullptr [modernize-use-nullptr]",
    "  int* p = 0;",
    "           ^",
    "/w/src/a.cpp:4:1: note: expanded from here",
    "/w/src/a.cpp:9:5: error: use nullptr [modernize-use-nullptr,-warnings-as-errors]",
    "2 warnings generated.",
  ].join("\n")
  expect(parseClangTidy(output)).toEqual([
    { file: "/w/src/a.cpp", line: 3, severity: "warning", id: "modernize-use-nullptr", message: "use nullptr" },
    { file: "/w/src/a.cpp", line: 9, severity: "error", id: "modernize-use-nullptr", message: "use nullptr" },
  ])
})
