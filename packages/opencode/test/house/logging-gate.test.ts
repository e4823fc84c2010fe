import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { diffGate } from "../../src/scheduler/runtime/gates/diff.ts"
import { routeOf } from "../../src/scheduler/runtime/gates/index.ts"
import { loggingGate } from "../../src/scheduler/runtime/gates/logging.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { HouseRules } from "../../src/scheduler/runtime/house/rules.ts"
import { LibraryUse } from "../../src/scheduler/runtime/house/library-use.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates } from "../runtime/task-branch.ts"

const LEGACY = `#include <iostream>

void banner() {
  std::cout << "calc 1.0" << std::endl;
}

int twice(int x) {
  return 2 * x;
}
`

const SPDLOG_RULES = JSON.stringify({ schemaVersion: 1, logging: { library: "spdlog" } })

describe("the logging gate on real git repositories: only the lines a task adds are judged", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({ files: { "src/legacy.cpp": LEGACY } })
    await repo.write(HouseRules.RULES_PATH, SPDLOG_RULES)
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  async function gatesOf(taskId: string, files: Record<string, string>) {
    const wt = await Worktrees.create(repo.root, taskId, "main")
    const ws = repo.at(wt.path)
    for (const [file, content] of Object.entries(files)) await ws.write(file, content)
    await ws.commitAll(`work of ${taskId}`)
    return firstGates(repo.root, taskId, wt.path, { requires: ["diff"], gates: [diffGate, loggingGate], sandbox: "off" })
  }

  test("an added std::cout in src/ fails with file:line and the call, back to the worker, with the library's calls to use", async () => {
    const report = await gatesOf("L-1", { "src/calc.cpp": `#include "calc.h"\n#include <iostream>\n\nint add(int a, int b) {\n  std::cout << "adding" << std::endl;\n  return a + b;\n}\n` })
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("logging")
    expect(routeOf("logging")).toBe("executor")
    expect(report.message).toContain('src/calc.cpp:5: std::cout: std::cout << "adding" << std::endl;')
    expect(report.message).toContain("spdlog::info")
    expect(report.message).toContain("#include <spdlog/spdlog.h>")
    expect(await readFile(path.join(report.evidenceDir, "logging.log"), "utf8")).toContain("src/calc.cpp:5: std::cout")
  })

  test("an inherited std::cout passes: the task changed the file, not that line", async () => {
    const report = await gatesOf("L-2", { "src/legacy.cpp": LEGACY.replace("return 2 * x;", "return x + x;") })
    expect(report.passed).toBe(true)
    expect(report.gates.find((g) => g.gate === "logging")).toMatchObject({ passed: true, ran: true })
  })

  test("a test file that prints passes: tests are exempt by default", async () => {
    const report = await gatesOf("L-3", { "test/extra_test.cpp": `#include <cstdio>\nint main() { std::printf("ok\\n"); return 0; }\n` })
    expect(report.passed).toBe(true)
  })

  test("a project with glog gets glog's rule: its LOG(INFO) passes, printf fails with glog's calls named", async () => {
    await repo.write(HouseRules.RULES_PATH, JSON.stringify({ schemaVersion: 1, logging: { library: "glog" } }))
    try {
      const ok = await gatesOf("L-4", { "src/calc.cpp": `#include <glog/logging.h>\nint add(int a, int b) {\n  LOG(INFO) << "add";\n  return a + b;\n}\n` })
      expect(ok.passed).toBe(true)
      const bad = await gatesOf("L-5", { "src/calc.cpp": `#include <cstdio>\nint add(int a, int b) {\n  printf("add\\n");\n  return a + b;\n}\n` })
      expect(bad.message).toContain("src/calc.cpp:3: printf")
      expect(bad.message).toContain("LOG(INFO)")
    } finally {
      await repo.write(HouseRules.RULES_PATH, SPDLOG_RULES)
    }
  })

  test("an invalid expression in the rules gives no verdict: the gates stop with the reason, nothing passes", async () => {
    await repo.write(HouseRules.RULES_PATH, JSON.stringify({ schemaVersion: 1, logging: { library: "spdlog", forbidden: [{ call: "cout", pattern: "cout(" }] } }))
    try {
      await expect(gatesOf("L-6", { "src/calc.cpp": "int add(int a, int b) { return a + b; }\n" })).rejects.toThrow(/logging\.forbidden\[0\]\.pattern: not a valid regular expression/)
    } finally {
      await repo.write(HouseRules.RULES_PATH, SPDLOG_RULES)
    }
  })
})

describe("whether the project uses its library yet: read from the integration branch's tree", () => {
  test("a project without spdlog misses it; once a commit finds it with find_package, it does not", async () => {
    const repo = await createCppRepo()
    try {
      const rules = HouseRules.parse(SPDLOG_RULES)
      expect(await LibraryUse.missing(repo.root, "main", rules)).toEqual({ library: "spdlog", cmakePackage: "spdlog", allowNetwork: false })
      expect(await LibraryUse.missing(repo.root, "main", HouseRules.parse(JSON.stringify({ schemaVersion: 1, logging: { library: "spdlog", integrationFirst: false } })))).toBeUndefined()
      expect(await LibraryUse.missing(repo.root, "main", undefined)).toBeUndefined()
      await repo.write("CMakeLists.txt", `${await repo.read("CMakeLists.txt")}find_package(spdlog REQUIRED)\ntarget_link_libraries(calc PUBLIC spdlog::spdlog)\n`)
      await repo.commitAll("integrate spdlog")
      expect(await LibraryUse.missing(repo.root, "main", rules)).toBeUndefined()
      await expect(LibraryUse.missing(repo.root, "no-such-branch", rules)).rejects.toThrow(/git grep for spdlog in no-such-branch failed/)
    } finally {
      await repo.cleanup()
    }
  })
})
