import { existsSync } from "node:fs"
import { readFile, rm, stat, writeFile } from "node:fs/promises"
import path from "node:path"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { JUnit } from "../../src/scheduler/runtime/results/junit.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { Proc } from "../../src/scheduler/runtime/process.ts"
import { BuildSlot } from "../../src/scheduler/runtime/slots/build-slot.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"

/**
 * Build slots (issue 38 item 1): a slot's build, carried from task to task, gives what a fresh build of the
 * same commit gives, whatever the tasks before it changed or left behind; and it is incremental.
 */

/** A commit of the tiny project: each field picks one version of a file. */
const Variant = fc.record({
  calc: fc.constantFrom("right", "wrong", "broken"),
  base: fc.constantFrom(0, 2),
  extra: fc.boolean(),
  data: fc.constantFrom("5", "6"),
})
type Variant = { calc: "right" | "wrong" | "broken"; base: 0 | 2; extra: boolean; data: "5" | "6" }

/** What the task before may leave in the slot, or do to it. */
const Leftover = fc.constantFrom("none", "untracked-test", "edited-source", "killed", "deleted")
type Leftover = "none" | "untracked-test" | "edited-source" | "killed" | "deleted"

function files(v: Variant): Record<string, string | null> {
  const calc = { right: "a + b + kBase", wrong: "a + b + kBase + 1", broken: "a + b + kBase +" }[v.calc]
  return {
    "include/calc.h": `#pragma once\nconstexpr int kBase = ${v.base};\nint add(int a, int b);\n`,
    "src/calc.cpp": `#include "calc.h"\nint add(int a, int b) { return ${calc}; }\n`,
    "test/calc_test.cpp": `#include "calc.h"\nint main() { return add(2, 3) == 5 + kBase ? 0 : 1; }\n`,
    "test/data_test.cpp": `#include "calc.h"\n#include <cstdio>\nint main(int, char** argv) {\n  int e = -1;\n  std::FILE* f = std::fopen(argv[1], "r");\n  if (!f || std::fscanf(f, "%d", &e) != 1) return 2;\n  return e == add(2, 3) - kBase ? 0 : 1;\n}\n`,
    "test/data/expected.txt": `${v.data}\n`,
    "test/extra_test.cpp": v.extra ? `#include "calc.h"\nint main() { return add(0, 0) == kBase ? 0 : 1; }\n` : null,
    // The tests are globbed, as the project does: an added or removed test reaches the build only through the configure step.
    "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(calc CXX)
set(CMAKE_CXX_STANDARD 17)
add_library(calc src/calc.cpp)
target_include_directories(calc PUBLIC include)
enable_testing()
file(GLOB TESTS CONFIGURE_DEPENDS \${CMAKE_SOURCE_DIR}/test/*_test.cpp)
foreach(source \${TESTS})
  get_filename_component(name \${source} NAME_WE)
  add_executable(\${name} \${source})
  target_link_libraries(\${name} calc)
  add_test(NAME \${name} COMMAND \${name} \${CMAKE_SOURCE_DIR}/test/data/expected.txt)
endforeach()
`,
  }
}

const RULES = Toolchain.Rules.parse({
  schemaVersion: 1,
  build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-junit junit.xml"],
  cache: { tool: "auto" },
})

describe("build slots", () => {
  let repo: CppRepo
  const commits = new Map<string, string>()
  const fresh = new Map<string, Outcome>()
  let print: string

  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: files({ calc: "right", base: 0, extra: false, data: "5" }) })
    await Worktrees.ensureExcluded(repo.root)
    print = await BuildSlot.fingerprint(RULES, process.env)
  }, 60_000)
  afterAll(async () => {
    await repo?.cleanup()
  })

  /** The variant's commit (made once, on its own branch from main). */
  async function commitOf(v: Variant): Promise<string> {
    const name = `v-${v.calc}-${v.base}-${v.extra}-${v.data}`
    const known = commits.get(name)
    if (known) return known
    await repo.git(["checkout", "--quiet", "-B", name, "main"])
    for (const [file, content] of Object.entries(files(v))) {
      if (content === null) await rm(path.join(repo.root, file), { force: true })
      else await repo.write(file, content)
    }
    await repo.git(["add", "-A"])
    // The variant main already is commits nothing new: an empty commit keeps one commit per variant.
    await repo.git(["commit", "--quiet", "--allow-empty", "-m", name])
    const sha = (await repo.git(["rev-parse", "HEAD"])).trim()
    await repo.git(["checkout", "--quiet", "main"])
    commits.set(name, sha)
    return sha
  }

  type Outcome = { built: boolean; tests: JUnit.Results; output: string }

  /** The build commands, then the tests, in `dir` with the gates' environment: what a gate would conclude. */
  async function buildAndTest(dir: string): Promise<Outcome> {
    const env = await Toolchain.commandEnv(RULES, { root: repo.root, worktree: dir }, process.env)
    let output = ""
    for (const command of RULES.build) {
      const r = await Proc.run(command, [], { cwd: dir, env, shell: true, timeoutMs: 300_000 })
      output += r.output
      if (!r.ok) return { built: false, tests: {}, output }
    }
    const junit = path.join(dir, Toolchain.BUILD_DIR, "junit.xml")
    await rm(junit, { force: true })
    const tested = await Proc.run(RULES.test[0]!, [], { cwd: dir, env, shell: true, timeoutMs: 300_000 })
    output += tested.output
    const cases = JUnit.parse(await readFile(junit, "utf8").catch(() => ""))
    return { built: true, tests: cases ? JUnit.results(cases) : {}, output }
  }

  /** A fresh worktree's build of `commit`: the reference. */
  async function freshOutcome(commit: string): Promise<Outcome> {
    const known = fresh.get(commit)
    if (known) return known
    const id = `F-${fresh.size}`
    const wt = await Worktrees.create(repo.root, id, commit)
    const outcome = await buildAndTest(wt.path)
    fresh.set(commit, outcome)
    return outcome
  }

  async function leave(slot: string, leftover: Leftover): Promise<void> {
    if (leftover === "untracked-test") await writeFile(path.join(slot, "test", "stray_test.cpp"), "int main() { return 1; }\n")
    if (leftover === "edited-source") await writeFile(path.join(slot, "src", "calc.cpp"), '#include "calc.h"\nint add(int a, int b) { return 0; }\n')
    if (leftover === "deleted") await rm(slot, { recursive: true, force: true })
  }

  test("over random task sequences, a slot's build and tests equal a fresh build's of the same commit", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(Variant, Leftover), { minLength: 2, maxLength: 4 }), async (tasks) => {
        for (const [variant, leftover] of tasks as [Variant, Leftover][]) {
          const commit = await commitOf(variant)
          const slot = await BuildSlot.take(repo.root, "S-1", commit, print)
          const got = await buildAndTest(slot.path)
          // A killed task never releases its slot, and may leave a half-written build directory.
          if (leftover === "killed") await writeFile(path.join(slot.path, Toolchain.BUILD_DIR, "CMakeCache.txt"), "garbage\n")
          else await BuildSlot.release(repo.root, "S-1")
          await leave(slot.path, leftover)
          const want = await freshOutcome(commit)
          expect({ built: got.built, tests: got.tests }, `${JSON.stringify(variant)} after ${slot.notes.join("; ")}\n${got.output.slice(-1500)}`).toEqual({ built: want.built, tests: want.tests })
        }
      }),
      { numRuns: 4, seed: 38 },
    )
  }, 900_000)

  test("a change only a test reads rebuilds nothing; a changed header rebuilds what includes it; changed rules drop the build directory", async () => {
    const a = await commitOf({ calc: "right", base: 0, extra: true, data: "5" })
    const b = await commitOf({ calc: "right", base: 0, extra: true, data: "6" })
    const c = await commitOf({ calc: "right", base: 2, extra: true, data: "6" })
    await BuildSlot.take(repo.root, "S-2", a, print)
    const first = await buildAndTest(path.join(BuildSlot.dir(await Worktrees.repoRoot(repo.root)), "S-2"))
    expect(first.built).toBe(true)
    await BuildSlot.release(repo.root, "S-2")
    const slot = await BuildSlot.take(repo.root, "S-2", b, print)
    const binary = path.join(slot.path, Toolchain.BUILD_DIR, "calc_test")
    const before = (await stat(binary)).mtimeMs
    const second = await buildAndTest(slot.path)
    expect(second.output).toMatch(/ninja: no work to do/)
    expect((await stat(binary)).mtimeMs).toBe(before)
    expect(second.tests).toEqual({ calc_test: "passed", data_test: "failed", extra_test: "passed" })
    await BuildSlot.release(repo.root, "S-2")
    await BuildSlot.take(repo.root, "S-2", c, print)
    const third = await buildAndTest(slot.path)
    expect(third.output).not.toMatch(/no work to do/)
    expect((await stat(binary)).mtimeMs).not.toBe(before)
    await BuildSlot.release(repo.root, "S-2")
    const other = await BuildSlot.take(repo.root, "S-2", c, await BuildSlot.fingerprint({ ...RULES, build: [...RULES.build, "true"] }, process.env))
    expect(other.notes).toContain("build directory dropped: the build commands, tools or flags changed")
    expect(existsSync(path.join(slot.path, Toolchain.BUILD_DIR))).toBe(false)
  }, 600_000)
})
