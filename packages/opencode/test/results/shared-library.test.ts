import { writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type { Exec } from "../../src/scheduler/runtime/gates/gate.ts"
import { processExec } from "../../src/scheduler/runtime/gates/pipeline.ts"
import { Proc } from "../../src/scheduler/runtime/process.ts"
import { Selection } from "../../src/scheduler/runtime/results/selection.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"

/**
 * A test's print names the shared libraries it loads (read with one `ldd` over every test binary): a change inside
 * the project's shared library leaves the test executables' bytes as they were, yet changes the print of every test
 * that loads it, so none is reused; a change to one test's source changes that test's print alone. ldd runs only
 * for programs whose bytes it has not read (in this process), and again for all when the build gains a shared object.
 */
const RULES = Toolchain.Rules.parse({
  schemaVersion: 1,
  build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build"],
})
const lib = (body: string) => `int value() { return ${body}; }\n`
const testOf = (n: number) => `int value();\nint main() { return value() == 1 ? 0 : ${n}; }\n`

describe("test prints and shared libraries", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({
      empty: true,
      files: {
        "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(shared CXX)
add_library(value SHARED src/value.cpp)
enable_testing()
foreach(n 1 2 3)
  add_executable(t\${n} test/t\${n}.cpp)
  target_link_libraries(t\${n} value)
  add_test(NAME t\${n} COMMAND t\${n})
endforeach()
add_executable(static_t test/t1.cpp src/value.cpp)
target_link_options(static_t PRIVATE -static)
add_test(NAME static_t COMMAND static_t)
`,
        "src/value.cpp": lib("1"),
        "test/t1.cpp": testOf(1),
        "test/t2.cpp": testOf(2),
        "test/t3.cpp": testOf(3),
      },
    })
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  /** The programs each real `ldd` call was given. */
  const lddCalls: string[][] = []
  const exec: Exec = async (command, args, options) => {
    if (command === "ldd") lddCalls.push(args.map((a) => path.basename(a)).sort())
    return processExec(command, args, options)
  }
  const build = async () => {
    for (const command of RULES.build) {
      const r = await Proc.run(command, [], { cwd: repo.root, env: process.env, shell: true, timeoutMs: 120_000 })
      expect(r.ok, r.output).toBe(true)
    }
    const prints = await Selection.prints(exec, repo.root, RULES, process.env)
    return Object.fromEntries((prints ?? []).map((p) => [p.name, p.print]))
  }

  test("a change in the library changes every dynamic test's print; a test's own change only its print", async () => {
    const first = await build()
    expect(Object.keys(first).sort()).toEqual(["static_t", "t1", "t2", "t3"])
    const exe = path.join(repo.root, ".air-build", "t1")
    const before = await Proc.run("sha256sum", [exe], { cwd: repo.root, env: process.env, timeoutMs: 10_000 })

    await repo.write("src/value.cpp", lib("0 + 1"))
    const second = await build()
    const after = await Proc.run("sha256sum", [exe], { cwd: repo.root, env: process.env, timeoutMs: 10_000 })
    // The executable did not change; what it loads did.
    expect(after.stdout).toBe(before.stdout)
    for (const t of ["t1", "t2", "t3"]) expect(second[t], t).not.toBe(first[t])
    // The static test holds the library's code itself: its own bytes changed.
    expect(second.static_t).not.toBe(first.static_t)

    await repo.write("test/t2.cpp", testOf(2) + "// reworded\nint unused() { return 2; }\n")
    const third = await build()
    expect(third.t2).not.toBe(second.t2)
    expect([third.t1, third.t3]).toEqual([second.t1, second.t3])
  })

  test("ldd reads only the programs whose bytes it has not read; a new shared object in the build asks again", async () => {
    const first = await build()
    lddCalls.length = 0
    // Nothing rebuilt: every program's bytes were read before, no ldd runs and the prints are the same.
    expect(await build()).toEqual(first)
    expect(lddCalls).toEqual([])

    // One test's source changed: only its program is new to ldd.
    await repo.write("test/t3.cpp", testOf(3) + "int unused3() { return 3; }\n")
    const changed = await build()
    expect(lddCalls).toEqual([["t3"]])
    expect(changed.t3).not.toBe(first.t3)
    expect([changed.t1, changed.t2, changed.static_t]).toEqual([first.t1, first.t2, first.static_t])

    // A shared object appearing in the build may be found first by the loader: every program is read again.
    lddCalls.length = 0
    await writeFile(path.join(repo.root, ".air-build", "libshadow.so"), "")
    await build()
    expect(lddCalls).toEqual([["static_t", "t1", "t2", "t3"]])
  })
})
