import { existsSync } from "node:fs"
import { readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { GateError } from "../../src/scheduler/runtime/errors.ts"
import type { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { BuildSlot } from "../../src/scheduler/runtime/slots/build-slot.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { firstGates, taskBranches } from "./task-branch.ts"

/**
 * The runtime's gates build in build slots (issue 38 item 1, invariant 17): the build directory is kept from task
 * to task, so a task compiles what differs from the slot's last tree, not the whole project; the work gates
 * (commit, diff) still read the task's own worktree. Real git, cmake, ninja, g++, ctest and the sandbox.
 */
const MODULES = 6
const module = (i: number, body = `return ${i};`) => `int m${i}() { ${body} }\n`
const files: Record<string, string> = {
  "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(mods CXX)
set(CMAKE_CXX_STANDARD 17)
add_library(mods ${Array.from({ length: MODULES }, (_, i) => `src/m${i}.cpp`).join(" ")})
enable_testing()
add_executable(mods_test test/mods_test.cpp)
target_link_libraries(mods_test mods)
add_test(NAME mods_test COMMAND mods_test)
`,
  "test/mods_test.cpp": `${Array.from({ length: MODULES }, (_, i) => `int m${i}();`).join("\n")}\nint main() { return m0() == 0 && m1() == 1 ? 0 : 1; }\n`,
  ...Object.fromEntries(Array.from({ length: MODULES }, (_, i) => [`src/m${i}.cpp`, module(i)])),
}
const RULES: Toolchain.RulesInput = {
  schemaVersion: 1,
  build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-on-failure"],
  analysis: { cppcheck: { enabled: false } },
}

describe("the gates build in slots kept between tasks", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files })
  })
  afterAll(async () => {
    await repo?.cleanup()
  })
  const { task } = taskBranches(() => repo, { commit: true })
  const gates = (taskId: string, worktree: string, extra: Partial<Gates.RunInput> = {}) =>
    firstGates(repo.root, taskId, worktree, { requires: ["diff", "build", "test"], toolchain: RULES, buildIn: "slot", ...extra })
  /** The objects the build compiled, from its log (ninja's "Building CXX object" lines). */
  const compiled = async (report: Gates.GateReport) => {
    const log = await readFile(path.join(report.evidenceDir, "build.log"), "utf8")
    return [...log.matchAll(/Building CXX object (\S+)/g)].map((m) => m[1]!.replace(/^.*\//, ""))
  }

  test("the second task compiles only the files that differ from the slot's last tree; a fresh worktree build compiles all", async () => {
    const a = await task("A", (ws) => ws.write("src/m2.cpp", module(2, "return 2 + 0;")))
    const first = await gates("A", a.wt.path)
    expect(first.passed, first.message).toBe(true)
    expect(first.buildTree?.slot).toBe("slot-1")
    expect(await compiled(first)).toHaveLength(MODULES + 1)

    const b = await task("B", (ws) => ws.write("src/m3.cpp", module(3, "return 3 + 0;")))
    const second = await gates("B", b.wt.path)
    expect(second.passed, second.message).toBe(true)
    expect(second.buildTree?.slot).toBe("slot-1")
    // From A's tip to B's: m2 back to main's, m3 B's own.
    expect((await compiled(second)).sort()).toEqual(["m2.cpp.o", "m3.cpp.o"])
    // The commit and diff gates read B's worktree and branch, not the slot.
    expect(second.changedFiles).toEqual(["src/m3.cpp"])

    const fresh = await task("B-fresh", (ws) => ws.write("src/m3.cpp", module(3, "return 3 + 0;")))
    const whole = await gates("B-fresh", fresh.wt.path, { buildIn: "worktree" })
    expect(whole.passed, whole.message).toBe(true)
    expect(whole.buildTree).toBeUndefined()
    expect(await compiled(whole)).toHaveLength(MODULES + 1)
  })

  test("a failing task's slot serves the next task with nothing left of it: its broken source restored, a stray file removed", async () => {
    const bad = await task("BAD", (ws) => ws.write("src/m4.cpp", "int m4() { return ; \n"))
    const failed = await gates("BAD", bad.wt.path)
    expect(failed.failedGate).toBe("build")
    const slot = path.join(BuildSlot.dir(repo.root), failed.buildTree!.slot)
    await writeFile(path.join(slot, "stray.txt"), "left by a test\n")

    const good = await task("GOOD", (ws) => ws.write("src/m5.cpp", module(5, "return 5 + 0;")))
    const passed = await gates("GOOD", good.wt.path)
    expect(passed.passed, passed.message).toBe(true)
    expect(passed.buildTree?.slot).toBe(failed.buildTree!.slot)
    expect(passed.buildTree?.notes.join("\n")).toMatch(/files left by the last use removed: 1/)
    expect(existsSync(path.join(slot, "stray.txt"))).toBe(false)
    expect(await readFile(path.join(slot, "src/m4.cpp"), "utf8")).toBe(module(4))
    expect(passed.gates.find((g) => g.gate === "test")?.passed).toBe(true)
  })

  test("gates at once take different slots; toolchain.json's cache.slots false keeps them in the worktree", async () => {
    const [x, y] = await Promise.all([task("X", (ws) => ws.write("src/m0.cpp", module(0, "return 0 * 1;"))), task("Y", (ws) => ws.write("src/m1.cpp", module(1, "return 1 * 1;")))])
    const [rx, ry] = await Promise.all([gates("X", x.wt.path), gates("Y", y.wt.path)])
    expect(rx.passed && ry.passed, `${rx.message}\n${ry.message}`).toBe(true)
    expect(new Set([rx.buildTree?.slot, ry.buildTree?.slot]).size).toBe(2)

    const off = await task("OFF", (ws) => ws.write("src/m2.cpp", module(2, "return 2 * 1;")))
    const report = await gates("OFF", off.wt.path, { toolchain: { ...RULES, cache: { slots: false } } })
    expect(report.passed, report.message).toBe(true)
    expect(report.buildTree).toBeUndefined()
  })

  test("gates stopped mid-build leave the slot marked busy, so its next use drops the build directory they may have half-written", async () => {
    const t = await task("STOP", (ws) => ws.write("src/m3.cpp", module(3, "return 3 * 1;")))
    const held: Toolchain.RulesInput = { ...RULES, build: [...(RULES.build as string[]), "touch .air-build/started; sleep 120"] }
    const abort = new AbortController()
    let settled = false
    const run = gates("STOP", t.wt.path, { toolchain: held, signal: abort.signal }).then(
      (report) => report,
      (error: unknown) => error,
    ).finally(() => (settled = true))
    // Stopped once its build is under way (the slot's build directory has the mark), whenever that is.
    const started = () => Array.from({ length: 4 }, (_, i) => path.join(BuildSlot.dir(repo.root), `slot-${i + 1}`, ".air-build", "started")).some(existsSync)
    while (!started() && !settled) await new Promise((r) => setTimeout(r, 100))
    abort.abort()
    const error = await run
    expect(error).toBeInstanceOf(GateError)
    expect((error as GateError).tag).toBe("Aborted")

    const next = await task("AFTER", (ws) => ws.write("src/m4.cpp", module(4, "return 4 * 1;")))
    const report = await gates("AFTER", next.wt.path)
    expect(report.passed, report.message).toBe(true)
    expect(report.buildTree?.notes.join("\n")).toMatch(/build directory dropped: its last build never ended/)
    expect(await compiled(report)).toHaveLength(MODULES + 1)
  })
})
