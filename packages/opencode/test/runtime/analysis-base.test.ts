import { existsSync } from "node:fs"
import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { taskBranches, firstGates } from "./task-branch.ts"

/** A file on the integration branch with a cppcheck error nobody touched (legacy code). */
const LEGACY = `#include "calc.h"

int add(int a, int b) {
  return a + b;
}

int legacy() {
  int a[2] = {0, 0};
  a[5] = 1;
  return a[0];
}

int sub(int a, int b) {
  return a - b;
}
`

describe.concurrent("analysis judged against the task's base", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({ files: { "src/calc.cpp": LEGACY } })
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  const { task } = taskBranches(() => repo, { commit: true })

  function gates(taskId: string, worktree: string, failOn: "error" | "warning" | "detected" = "error") {
    return firstGates(repo.root, taskId, worktree, {
      requires: ["diff", "analysis"],
      // "detected": the CMake build, and cppcheck through its compile_commands.json (the base through a copy of it).
      ...(failOn === "detected" ? {} : { toolchain: { schemaVersion: 1, analysis: { failOn } } }),
    })
  }

  const legacyFinding = { file: "src/calc.cpp", id: "arrayIndexOutOfBounds", severity: "error", inherited: true }

  test("a pre-existing error in a touched file passes; the finding is recorded inherited and cached per commit", async () => {
    const { wt } = await task("touch", (ws) => ws.write("src/calc.cpp", LEGACY.replace("  return a - b;", "  // subtract\n  return a - b;")))
    const report = await gates("touch", wt.path)
    expect(report.failedGate, report.message).toBeUndefined()
    expect(report.findings).toContainEqual(expect.objectContaining({ ...legacyFinding, line: 9, tool: "cppcheck" }))
    expect(report.gates.find((g) => g.gate === "analysis")?.summary).toMatch(/1 inherited/)
    const cache = path.join(repo.root, ".air", "local", "evidence", "_baseline", (await repo.git(["rev-parse", "main"])).trim(), "analysis")
    expect((await readdir(cache)).some((f) => f.startsWith("cppcheck-"))).toBe(true)
  })

  test("a new error of the same id a few lines away fails, naming only the new one", async () => {
    const { wt } = await task("fresh", (ws) =>
      ws.write("src/calc.cpp", LEGACY.replace("  return a[0];\n}", "  return a[0];\n}\n\nint fresh() {\n  int b[2] = {0, 0};\n  b[7] = 1;\n  return b[0];\n}")),
    )
    const report = await gates("fresh", wt.path)
    expect(report.failedGate).toBe("analysis")
    expect(report.message).toContain("src/calc.cpp:15: arrayIndexOutOfBounds")
    expect(report.message).not.toContain("src/calc.cpp:9:")
    expect(report.message).toMatch(/1 finding\(s\) the files already had at the base are recorded as inherited/)
    expect(report.findings).toContainEqual(expect.objectContaining({ ...legacyFinding, line: 9 }))
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "src/calc.cpp", line: 15, id: "arrayIndexOutOfBounds" }))
    expect(report.findings.find((f) => f.line === 15)?.inherited).toBeUndefined()
  })

  test("lines inserted right above the inherited finding keep it inherited", async () => {
    const { wt } = await task("above", (ws) =>
      ws.write("src/calc.cpp", "// header comment\n#include <cstdio>\n" + LEGACY.replace("  a[5] = 1;", "  int unused = 0;\n  (void)unused;\n  a[5] = 1;")),
    )
    const report = await gates("above", wt.path)
    expect(report.failedGate, report.message).toBeUndefined()
    expect(report.findings).toContainEqual(expect.objectContaining({ ...legacyFinding, line: 13 }))
  })

  test("moving the function that holds it keeps it inherited", async () => {
    const legacyFn = LEGACY.slice(LEGACY.indexOf("int legacy()"), LEGACY.indexOf("int sub("))
    const moved = LEGACY.replace(legacyFn, "") + "\n// moved to the end\n" + legacyFn.replace(/^  /gm, "    ")
    const { wt } = await task("moved", (ws) => ws.write("src/calc.cpp", moved))
    const report = await gates("moved", wt.path)
    expect(report.failedGate, report.message).toBeUndefined()
    const line = moved.split("\n").findIndex((l) => l.includes("a[5] = 1;")) + 1
    expect(line).toBeGreaterThan(9)
    expect(report.findings).toContainEqual(expect.objectContaining({ ...legacyFinding, line }))
  })

  test("a renamed file keeps its inherited finding inherited (compared with the file it was at the base)", async () => {
    const { wt } = await task("renamed", async (ws) => {
      await ws.git(["mv", "src/calc.cpp", "src/arith.cpp"])
      await ws.write("src/arith.cpp", LEGACY.replace("  return a - b;", "  // subtract\n  return a - b;"))
    })
    const report = await gates("renamed", wt.path)
    expect(report.failedGate, report.message).toBeUndefined()
    expect(report.findings).toContainEqual(expect.objectContaining({ ...legacyFinding, file: "src/arith.cpp", line: 9 }))
  })

  test("failOn warning: a new warning fails; by default it is recorded and passes", async () => {
    const withWarning = LEGACY + "\nclass Counter {\n public:\n  Counter() {}\n  int get() const { return n; }\n private:\n  int n;\n};\n"
    const { wt } = await task("warn", (ws) => ws.write("src/calc.cpp", withWarning))
    const strict = await gates("warn", wt.path, "warning")
    expect(strict.failedGate).toBe("analysis")
    expect(strict.message).toContain("uninitMemberVar")
    expect(strict.message).toContain("new error(s) or warning(s)")
    const lenient = await gates("warn", wt.path)
    expect(lenient.failedGate, lenient.message).toBeUndefined()
    expect(lenient.findings).toContainEqual(expect.objectContaining({ id: "uninitMemberVar", severity: "warning" }))
  })

  test("with the build's compile_commands.json, the base is analysed through the same database", async () => {
    const { wt } = await task("database", (ws) => ws.write("src/calc.cpp", "// touched\n" + LEGACY))
    const report = await gates("database", wt.path, "detected")
    expect(report.failedGate, report.message).toBeUndefined()
    expect(report.findings).toContainEqual(expect.objectContaining({ ...legacyFinding, line: 10 }))
    expect(report.gates.find((g) => g.gate === "analysis")?.summary).toMatch(/1 inherited/)
    // The base ran through the task's database, its paths moved to the base tree, and its log is kept.
    const cache = path.join(repo.root, ".air", "local", "evidence", "_baseline", (await repo.git(["rev-parse", "main"])).trim(), "analysis")
    const logs = (await readdir(cache)).filter((f) => f.endsWith(".log"))
    const texts = await Promise.all(logs.map((f) => readFile(path.join(cache, f), "utf8")))
    expect(texts.join("\n")).toMatch(/--project=\S+\/base-databases\/database\/compile_commands\.json --file-filter=\S+\/base-tree\/src\/calc\.cpp/)
  })

  test("a new file's findings are all new (no base to inherit from)", async () => {
    const { wt } = await task("added", (ws) => ws.write("src/extra.cpp", "int extra() {\n  int a[2] = {0, 0};\n  a[5] = 1;\n  return a[0];\n}\n"))
    const report = await gates("added", wt.path)
    expect(report.failedGate).toBe("analysis")
    expect(report.message).toContain("src/extra.cpp:3: arrayIndexOutOfBounds")
    expect(existsSync(path.join(repo.root, ".air", "local", "base-tree"))).toBe(true)
  })
})
