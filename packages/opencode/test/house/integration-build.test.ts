import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { buildGate } from "../../src/scheduler/runtime/gates/build.ts"
import { diffGate } from "../../src/scheduler/runtime/gates/diff.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { CMAKELISTS, createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates } from "../runtime/task-branch.ts"

/**
 * The integration task's build, with real cmake: a library the machine has (Debian's libspdlog-dev, installed by
 * ./start.sh) is found offline; one the build does not find fails the build gate with CMake's find_package error,
 * never a silent pass (issue 40 item 5).
 */
describe("the integration task's build gate", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  async function integrate(taskId: string, pkg: string, target: string) {
    const wt = await Worktrees.create(repo.root, taskId, "main")
    const ws = repo.at(wt.path)
    await ws.write("CMakeLists.txt", `${CMAKELISTS}find_package(${pkg} REQUIRED)\ntarget_link_libraries(calc PUBLIC ${target})\n`)
    await ws.commitAll(`integrate ${pkg}`)
    return firstGates(repo.root, taskId, wt.path, { requires: ["diff", "build"], kind: "build", gates: [diffGate, buildGate], sandbox: "off" })
  }

  test("spdlog is found with find_package, offline, and the build passes", async () => {
    const report = await integrate("I-1", "spdlog", "spdlog::spdlog")
    expect(report.message).toContain("all gates passed")
  })

  test("a library the build does not find fails the build gate with the find_package error", async () => {
    const report = await integrate("I-2", "airnosuchlog", "airnosuchlog::airnosuchlog")
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("build")
    expect(report.message).toContain("CMake Error at CMakeLists.txt:13 (find_package)")
    expect(report.message).toContain('"airnosuchlog", but CMake did not find one')
  })
})
