import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { diffGate } from "../../src/scheduler/runtime/gates/diff.ts"
import { logLevelsGate } from "../../src/scheduler/runtime/gates/log-levels.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { BuildLevels } from "../../src/scheduler/runtime/house/build-levels.ts"
import { HouseRules } from "../../src/scheduler/runtime/house/rules.ts"
import { CALC_CPP, CMAKELISTS, createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates } from "../runtime/task-branch.ts"

const FIND = "find_package(spdlog REQUIRED)\ntarget_link_libraries(calc PUBLIC spdlog::spdlog)\n"
const BY_CONFIG = "target_compile_definitions(calc PUBLIC $<IF:$<CONFIG:Debug>,SPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_DEBUG,SPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_INFO>)\n"

describe("the active log level, read from a build's compile_commands.json", () => {
  test("the values of the definition over every command, in both shapes; a command without it is unset", () => {
    const db = JSON.stringify([
      { directory: "/b", file: "a.cpp", command: "c++ -DSPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_DEBUG -c a.cpp" },
      { directory: "/b", file: "b.cpp", arguments: ["c++", "-DSPDLOG_ACTIVE_LEVEL=SPDLOG_LEVEL_DEBUG", "-c", "b.cpp"] },
    ])
    expect(BuildLevels.values(db, "SPDLOG_ACTIVE_LEVEL")).toEqual(["SPDLOG_LEVEL_DEBUG"])
    expect(BuildLevels.values(JSON.stringify([{ directory: "/b", file: "c.cpp", command: "c++ -c c.cpp" }]), "SPDLOG_ACTIVE_LEVEL")).toEqual(["(unset)"])
    expect(() => BuildLevels.values(JSON.stringify({ not: "a list" }), "X")).toThrow(/not a compilation database/)
  })
})

describe("the build-type switch, checked once on the integration task with real cmake", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
    await repo.write(HouseRules.RULES_PATH, JSON.stringify({ schemaVersion: 1, logging: { library: "spdlog" } }))
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  async function gatesOf(taskId: string, files: Record<string, string>) {
    const wt = await Worktrees.create(repo.root, taskId, "main")
    const ws = repo.at(wt.path)
    for (const [file, content] of Object.entries(files)) await ws.write(file, content)
    await ws.commitAll(`work of ${taskId}`)
    return firstGates(repo.root, taskId, wt.path, { requires: ["diff"], kind: "build", gates: [diffGate, logLevelsGate], sandbox: "off" })
  }

  test("an integration whose Debug and Release builds compile in the same level fails, saying how to switch it", async () => {
    const report = await gatesOf("V-1", { "CMakeLists.txt": CMAKELISTS + FIND })
    expect(report.failedGate).toBe("log-levels")
    expect(report.message).toContain("a Debug and a Release configure compile in SPDLOG_ACTIVE_LEVEL = (unset) and (unset)")
    expect(report.message).toContain("$<IF:$<CONFIG:Debug>")
  })

  test("an integration that sets the level by configuration passes, with both levels in its summary", async () => {
    const report = await gatesOf("V-2", { "CMakeLists.txt": CMAKELISTS + FIND + BY_CONFIG })
    expect(report.passed).toBe(true)
    expect(report.gates.find((g) => g.gate === "log-levels")).toMatchObject({ ran: true, summary: "SPDLOG_ACTIVE_LEVEL: Debug SPDLOG_LEVEL_DEBUG, Release SPDLOG_LEVEL_INFO" })
  })

  test("once the project uses spdlog, later tasks skip the check", async () => {
    await repo.write("CMakeLists.txt", CMAKELISTS + FIND)
    await repo.commitAll("spdlog, level fixed")
    const report = await gatesOf("V-3", { "src/calc.cpp": `${CALC_CPP}// touched\n` })
    expect(report.passed).toBe(true)
    expect(report.gates.find((g) => g.gate === "log-levels")).toMatchObject({ ran: false, summary: expect.stringContaining("checked once") })
  })
})
