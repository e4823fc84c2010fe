import { existsSync } from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { CMAKELISTS, createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { taskBranches, firstGates } from "../runtime/task-branch.ts"

/**
 * The gates run the task's own CMakeLists.txt and tests inside the sandbox, enforce the write-set, and
 * stop (for a person) when no sandbox can start — unless the user allowed running without it.
 */
describe.skipIf(!Sandbox.check().ok)("gates in the sandbox", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    Sandbox.setCheck(undefined)
    await repo?.cleanup()
  })

  const { task } = taskBranches(() => repo)
  const run = (taskId: string, worktree: string, extra: Partial<Gates.RunInput> = {}) =>
    firstGates(repo.root, taskId, worktree, {
      requires: ["diff", "build"],
      toolchain: { schemaVersion: 1, build: ["cmake -S . -B .air-build", "cmake --build .air-build"], analysis: { cppcheck: { enabled: false } } },
      ...extra,
    })

  test("a CMakeLists.txt that writes outside its tree fails the build, and nothing outside changed", async () => {
    const planted = path.join(repo.root, "planted.txt")
    const { wt } = await task("plant", async (ws) => {
      await ws.write("CMakeLists.txt", CMAKELISTS + `\nfile(WRITE "${planted}" "x")\n`)
      await ws.commitAll("plant a file outside the tree")
    })
    const report = await run("plant", wt.path)
    expect(report.failedGate).toBe("build")
    expect(report.message).toMatch(/planted\.txt|Read-only|failed to open/i)
    expect(existsSync(planted)).toBe(false)
  })

  test("a diff outside the write-set fails the write-set gate with the list", async () => {
    const { wt } = await task("wide", async (ws) => {
      await ws.write("src/extra.cpp", "int extra() { return 1; }\n")
      await ws.git(["rm", "-q", "include/calc.h"])
      await ws.commitAll("more than asked")
    })
    const report = await run("wide", wt.path, { writeSet: [{ path: "src/calc.cpp", action: "modify" }] })
    expect(report.failedGate).toBe("write-set")
    expect(report.message).toContain("src/extra.cpp: not in the write-set")
    expect(report.message).toContain("include/calc.h: deleted")
    expect(report.failedRoute).toBe("executor")
  })

  test("no sandbox: the run stops for a person, or runs as before when the user allowed it", async () => {
    const { wt } = await task("nosbx", async (ws) => {
      await ws.write("src/calc.cpp", (await ws.read("src/calc.cpp")) + "\n// touched\n")
      await ws.commitAll("touch")
    })
    Sandbox.setCheck({ ok: false, message: "bubblewrap (bwrap) is not installed" })
    try {
      const stopped = await run("nosbx", wt.path)
      expect(stopped.failedGate).toBe("tool-missing")
      expect(stopped.message).toMatch(/sandbox.*bubblewrap.*sandboxFallback/s)
      expect(stopped.gates).toEqual([])
      const allowed = await run("nosbx", wt.path, { sandbox: "fallback", requires: ["diff"] })
      expect(allowed.passed).toBe(true)
    } finally {
      Sandbox.setCheck(undefined)
    }
  })
})
