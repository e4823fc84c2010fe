import { existsSync } from "node:fs"
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { GateError } from "../../src/scheduler/runtime/errors.ts"
import { classifyFault } from "../../src/scheduler/runtime/fault.ts"
import type { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { Proc } from "../../src/scheduler/runtime/process.ts"
import { BuildSlot } from "../../src/scheduler/runtime/slots/build-slot.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { firstGates, taskBranches } from "../runtime/task-branch.ts"

/**
 * Bad input to the build slots (issue 38 item 7): a slot's checkout broken by hand, a build directory configured by
 * hand with another compiler, a disk that fills during the slot's build. The gates still give the task's verdict,
 * or one clear fault. Real git, cmake, ninja, g++, ctest, the sandbox, and a real small filesystem (tmpfs).
 */
const lib = (n: number) => `int value() { return ${n}; }\n`
const files: Record<string, string> = {
  "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(slotfaults CXX)
add_library(lib src/lib.cpp)
enable_testing()
add_executable(lib_test test/lib_test.cpp)
target_link_libraries(lib_test lib)
add_test(NAME lib_test COMMAND lib_test)
`,
  "src/lib.cpp": lib(1),
  "test/lib_test.cpp": "int value();\nint main() { return value() > 0 ? 0 : 1; }\n",
}
const RULES: Toolchain.RulesInput = {
  schemaVersion: 1,
  build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-on-failure"],
  analysis: { cppcheck: { enabled: false } },
}

function suite(extraFiles: Record<string, string>) {
  const state: { repo?: CppRepo } = {}
  const repo = () => state.repo!
  const branches = taskBranches(repo, { commit: true })
  const gates = (taskId: string, worktree: string, extra: Partial<Gates.RunInput> = {}) =>
    firstGates(repo().root, taskId, worktree, { requires: ["diff", "build", "test"], toolchain: RULES, buildIn: "slot", ...extra })
  /** A task whose change to the library passes (n > 0) or breaks its build ("broken"). */
  const run = async (taskId: string, change: number | "broken", extra: Partial<Gates.RunInput> = {}) => {
    const t = await branches.task(taskId, (ws) => ws.write("src/lib.cpp", change === "broken" ? "int value() { return ; \n" : lib(change)))
    return gates(taskId, t.wt.path, extra)
  }
  const slotPath = () => path.join(BuildSlot.dir(repo().root), "slot-1")
  beforeAll(async () => {
    state.repo = await createCppRepo({ empty: true, files: { ...files, ...extraFiles } })
  }, 60_000)
  return { state, repo, run, slotPath }
}

const gitIn = (dir: string, args: string[]) => Proc.run("git", args, { cwd: dir, env: process.env, timeoutMs: 60_000 })

describe("a slot's checkout broken by hand", () => {
  const { state, repo, run, slotPath } = suite({})
  afterAll(async () => {
    await state.repo?.cleanup()
  })
  const gitDir = async () => (await readFile(path.join(slotPath(), ".git"), "utf8")).replace(/^gitdir:\s*/, "").trim()

  /** Each breakage, then the next task's gates: passing work passes, broken work fails its build. */
  const breakages: [string, () => Promise<void>, RegExp][] = [
    ["the directory gone", () => rm(slotPath(), { recursive: true, force: true }), /^$|made again/],
    ["its .git file removed", () => rm(path.join(slotPath(), ".git"), { force: true }), /checkout was missing or broken: made again/],
    ["its .git file garbage", () => writeFile(path.join(slotPath(), ".git"), "gitdir: /nowhere/at/all\n"), /checkout was missing or broken: made again/],
    ["a stale index.lock", async () => writeFile(path.join(await gitDir(), "index.lock"), ""), /stale index\.lock .* removed/],
    [
      "a half-finished rebase",
      async () => {
        // A conflicting rebase started by hand in the slot, left in the middle.
        await writeFile(path.join(slotPath(), "src/lib.cpp"), lib(70))
        await gitIn(slotPath(), ["commit", "--quiet", "-am", "by hand"])
        const r = await gitIn(slotPath(), ["rebase", "conflicting"])
        expect(r.ok, "the rebase by hand stops at its conflict").toBe(false)
        expect(existsSync(path.join(await gitDir(), "rebase-merge")) || existsSync(path.join(await gitDir(), "rebase-apply"))).toBe(true)
      },
      /half-finished rebase .* abandoned/,
    ],
    [
      "a half-finished merge",
      async () => {
        await writeFile(path.join(slotPath(), "src/lib.cpp"), lib(71))
        await gitIn(slotPath(), ["commit", "--quiet", "-am", "by hand"])
        expect((await gitIn(slotPath(), ["merge", "conflicting"])).ok).toBe(false)
        expect(existsSync(path.join(await gitDir(), "MERGE_HEAD"))).toBe(true)
      },
      /unfinished merge .* abandoned/,
    ],
  ]

  test("after each breakage the next task's gates give its verdict: passing work passes, broken work fails its build", async () => {
    // A branch whose lib.cpp conflicts with the slot's edits by hand.
    const r = repo()
    await r.git(["checkout", "--quiet", "-b", "conflicting"])
    await r.write("src/lib.cpp", lib(99))
    await r.git(["commit", "--quiet", "-am", "conflicting"])
    await r.git(["checkout", "--quiet", "main"])

    const first = await run("FIRST", 2)
    expect(first.passed, first.message).toBe(true)
    let n = 0
    for (const [name, breakIt, note] of breakages) {
      await breakIt()
      const broken = n % 2 === 1
      const report = await run(`T-${n}`, broken ? "broken" : 10 + n)
      n++
      const notes = report.buildTree?.notes.join("\n") ?? ""
      expect(report.buildTree?.slot, name).toBe("slot-1")
      if (broken) expect({ name, failedGate: report.failedGate }, report.message).toEqual({ name, failedGate: "build" })
      else expect({ name, passed: report.passed }, report.message).toEqual({ name, passed: true })
      expect(notes, name).toMatch(note)
      // The slot holds the task's tree exactly, with nothing left of the breakage.
      expect(await readFile(path.join(slotPath(), "src/lib.cpp"), "utf8"), name).toBe(broken ? "int value() { return ; \n" : lib(10 + n - 1))
      const status = await gitIn(slotPath(), ["status", "--porcelain"])
      expect(status.output.trim(), name).toBe("")
      const dir = await gitDir()
      for (const marker of ["index.lock", "rebase-merge", "rebase-apply", "MERGE_HEAD"]) expect(existsSync(path.join(dir, marker)), `${name}: ${marker}`).toBe(false)
    }
  }, 600_000)
})

describe("a build directory from another compiler or other options", () => {
  const { state, run, slotPath } = suite({})
  let tmp = ""
  afterAll(async () => {
    await state.repo?.cleanup()
    if (tmp) await rm(tmp, { recursive: true, force: true })
  })
  const cache = async () => readFile(path.join(slotPath(), Toolchain.BUILD_DIR, "CMakeCache.txt"), "utf8")

  test("a CMakeCache.txt configured by hand with another compiler is dropped and configured again, not reused", async () => {
    const first = await run("A", 2)
    expect(first.passed, first.message).toBe(true)
    expect(await cache()).toMatch(/^CMAKE_CXX_COMPILER:\w+=\/usr\/bin\/c\+\+$/m)

    // Another compiler: a wrapper of g++ that CMake takes for a compiler of its own, configured by hand in the slot.
    tmp = path.join(state.repo!.root, "..", `other-cxx-${process.pid}`)
    await mkdir(tmp, { recursive: true })
    const other = path.join(tmp, "other-c++")
    await writeFile(other, '#!/bin/sh\nexec g++ "$@"\n')
    await chmod(other, 0o755)
    const configured = await Proc.run("cmake", ["-S", ".", "-B", Toolchain.BUILD_DIR, `-DCMAKE_CXX_COMPILER=${other}`], { cwd: slotPath(), env: process.env, timeoutMs: 120_000 })
    expect(configured.ok, configured.output).toBe(true)
    expect(await cache()).toMatch(new RegExp(`^CMAKE_CXX_COMPILER:\\w+=${other.replace(/[.+]/g, "\\$&")}$`, "m"))

    const second = await run("B", 3)
    expect(second.passed, second.message).toBe(true)
    expect(second.buildTree?.notes.join("\n")).toMatch(/build directory dropped: its CMakeCache\.txt was changed since the slot's last build \(.*CMAKE_CXX_COMPILER=\/tmp\//)
    expect(await cache()).not.toContain(other)
    expect(await cache()).toMatch(/^CMAKE_CXX_COMPILER:\w+=\/usr\/bin\/c\+\+$/m)

    // Then the compiler the slot's cache names is removed: the build directory is dropped again.
    await Proc.run("cmake", ["-S", ".", "-B", Toolchain.BUILD_DIR, `-DCMAKE_CXX_COMPILER=${other}`], { cwd: slotPath(), env: process.env, timeoutMs: 120_000 })
    await BuildSlot.release(state.repo!.root, "slot-1")
    await rm(other)
    const third = await run("C", 4)
    expect(third.passed, third.message).toBe(true)
    expect(third.buildTree?.notes.join("\n")).toMatch(/build directory dropped: its CMakeCache\.txt names a compiler that is gone/)
  }, 300_000)

  test("changed configure options in the toolchain's rules drop the build directory", async () => {
    const options: Toolchain.RulesInput = { ...RULES, build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Release", "cmake --build .air-build"] }
    const report = await run("D", 5, { toolchain: options })
    expect(report.passed, report.message).toBe(true)
    expect(report.buildTree?.notes.join("\n")).toMatch(/build directory dropped: the build commands, tools or flags changed/)
    expect(await cache()).toMatch(/^CMAKE_BUILD_TYPE:\w+=Release$/m)
  }, 300_000)
})

describe("a disk that fills during a slot's build", () => {
  // Two megabytes of initialised data: the object and the binary each need that much in the build directory.
  const { state, run, slotPath } = suite({ "src/big.cpp": "char big[2 << 20] = {1};\n", "CMakeLists.txt": files["CMakeLists.txt"]!.replace("src/lib.cpp", "src/lib.cpp src/big.cpp") })
  const mounted: string[] = []
  const mount = async (dir: string, size: string) => {
    await mkdir(dir, { recursive: true })
    const r = await Proc.run("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { cwd: "/", env: process.env, timeoutMs: 30_000 })
    if (r.ok) mounted.push(dir)
    return r
  }
  const umount = async () => {
    for (const dir of mounted.splice(0).reverse()) await Proc.run("umount", [dir], { cwd: "/", env: process.env, timeoutMs: 30_000 })
  }
  afterAll(async () => {
    await umount()
    await state.repo?.cleanup()
  })

  test("the slot is reset and the task retried once (passing when the space was the slot's own); filled again, one clear fault", async (ctx) => {
    const first = await run("A", 2)
    expect(first.passed, first.message).toBe(true)
    const build = path.join(slotPath(), Toolchain.BUILD_DIR)

    // An 8 MiB filesystem under the slot's build directory, 6 MiB of it taken by a file a test left there.
    const probe = await mount(build, "8m")
    if (!probe.ok) return ctx.skip(`mounting a tmpfs is not permitted here: ${probe.output.trim()}`)
    await writeFile(path.join(build, "left-by-a-test.bin"), Buffer.alloc(6 << 20, 1))
    const retried = await run("B", 3)
    expect(retried.passed, retried.message).toBe(true)
    expect(retried.buildTree?.notes.join("\n")).toMatch(/build directory dropped: the disk filled during the build/)
    expect(existsSync(path.join(build, "left-by-a-test.bin"))).toBe(false)

    // A 1 MiB filesystem: the configure fits, the object does not, whatever is dropped.
    await umount()
    const small = await mount(build, "1m")
    expect(small.ok, small.output).toBe(true)
    const error = await run("C", 4).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(GateError)
    expect((error as GateError).tag).toBe("DiskFull")
    const fault = classifyFault(error)
    expect(fault.tag).toBe("disk-full")
    expect(fault.message).toMatch(/the disk filled while the gates built in .*slot-1 \(".*No space left on device.*"\); the build directory was dropped and the gates ran again once, and the disk filled again/)
    expect(fault.message).toMatch(/free space on that disk/)
  }, 600_000)
})
