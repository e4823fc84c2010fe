import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Submodules } from "../../src/scheduler/runtime/git/submodules.ts"
import { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { CALC_CPP, CMAKELISTS, createCppRepo, TEST_IDENTITY, type CppRepo } from "../runtime/cpp-repo.ts"

const run = promisify(execFile)

const MATHLIB_CMAKE = `add_library(mathlib mathlib.cpp)
target_include_directories(mathlib PUBLIC .)
`
const MATHLIB_H = `#pragma once
int triple(int x);
`
const MATHLIB_CPP = `#include "mathlib.h"
int triple(int x) { return 3 * x; }
`
/** calc needs the submodule's code: its CMakeLists adds it and calc.cpp calls into it. */
const APP_CMAKE = CMAKELISTS.replace("add_library(calc src/calc.cpp)", "add_subdirectory(ext/mathlib)\nadd_library(calc src/calc.cpp)") +
  "target_link_libraries(calc mathlib)\n"
const APP_CPP = `#include "mathlib.h"\n` + CALC_CPP + `\nint thrice(int a) { return triple(a); }\n`

describe("submodules in task worktrees", () => {
  let app: CppRepo
  let temp: string

  beforeAll(async () => {
    temp = await mkdtemp(path.join(tmpdir(), "air-sub-"))
    const lib = await createCppRepo({ empty: true, files: { "CMakeLists.txt": MATHLIB_CMAKE, "mathlib.h": MATHLIB_H, "mathlib.cpp": MATHLIB_CPP } })
    app = await createCppRepo({ files: { "CMakeLists.txt": APP_CMAKE, "src/calc.cpp": APP_CPP } })
    await app.git(["-c", "protocol.file.allow=always", "submodule", "add", "--quiet", lib.root, "ext/mathlib"])
    await app.commitAll("mathlib as a submodule")
    // The URL in .gitmodules is dead from now on: a worktree can only get the submodule from the user's checkout.
    await lib.cleanup()
  })
  afterAll(async () => {
    await app?.cleanup()
    await rm(temp, { recursive: true, force: true })
  })

  test("a task worktree has the submodule at its recorded commit, offline, and the build that needs it passes", async () => {
    const wt = await Worktrees.create(app.root, "sub-build", "main")
    expect(wt.submodules).toBeUndefined()
    expect(existsSync(path.join(wt.path, "ext/mathlib/mathlib.cpp"))).toBe(true)
    const recorded = (await app.git(["rev-parse", "HEAD:ext/mathlib"])).trim()
    expect((await app.at(path.join(wt.path, "ext/mathlib")).git(["rev-parse", "HEAD"])).trim()).toBe(recorded)
    // The user's configuration (shared by every worktree) still names the original URL: nothing was written there.
    expect(await app.git(["config", "--get-regexp", "^submodule\\."])).not.toContain(".git/modules")

    const ws = app.at(wt.path)
    await ws.write("src/calc.cpp", APP_CPP + "// a one-line task\n")
    await ws.commitAll("comment")
    const report = await Gates.run({
      root: app.root,
      worktree: wt.path,
      taskId: "sub-build",
      base: "main",
      kind: "code",
      attempt: 1,
      evidenceDir: path.join(app.root, ".air/local/evidence/sub-build/attempt-1"),
      requires: ["diff", "build", "test"],
    })
    expect(report.message).toContain("all gates passed")
    expect(report.gates.find((g) => g.gate === "build")?.ran).toBe(true)
    // The worktree goes once merged, submodule and all.
    await app.git(["merge", "--quiet", "--ff-only", "air/sub-build"])
    expect((await Worktrees.remove(app.root, "sub-build", { integration: "main" })).removed).toBe(true)
    expect(existsSync(wt.path)).toBe(false)
  })

  test("a submodule the user never initialised is reported with the command that fixes it", async () => {
    const clone = path.join(temp, "fresh-clone")
    await run("git", ["clone", "--quiet", app.root, clone])
    for (const [key, value] of [["user.name", TEST_IDENTITY.name], ["user.email", TEST_IDENTITY.email]] as const) {
      await run("git", ["-C", clone, "config", key, value])
    }
    const problems = await Submodules.problems(clone)
    expect(problems).toHaveLength(1)
    expect(problems[0]!.path).toBe("ext/mathlib")
    expect(problems[0]!.fix).toContain("submodule update --init")
    const wt = await Worktrees.create(clone, "uninit", "main")
    expect(wt.submodules?.[0]).toMatch(/ext\/mathlib left empty.*submodule update --init/)
    // Once initialised (here from the app repository, as the user would from their remote), nothing is missing.
    await run("git", ["-C", clone, "-c", "protocol.file.allow=always", "-c", `submodule.ext/mathlib.url=${app.root}/ext/mathlib`, "submodule", "update", "--init", "--quiet"])
    expect(await Submodules.problems(clone)).toEqual([])
  })
})
