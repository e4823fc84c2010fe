import { mkdtemp, readFile, rm, writeFile, mkdir } from "node:fs/promises"
import { firstGates } from "../runtime/task-branch.ts"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { CompilerCache } from "../../src/scheduler/runtime/toolchain/cache.ts"
import { CppcheckArgs } from "../../src/scheduler/runtime/toolchain/cppcheck.ts"
import { Detect } from "../../src/scheduler/runtime/toolchain/detect.ts"
import { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { CALC_CPP, createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"

const ALL: Gates.Requirement[] = ["diff", "build", "test", "analysis"]

/** The project's presets: its own build directory, build type and a define its code relies on. */
const PRESETS = JSON.stringify(
  {
    version: 3,
    configurePresets: [
      { name: "base", hidden: true, binaryDir: "${sourceDir}/build/${presetName}" },
      { name: "dev", inherits: "base", cacheVariables: { CMAKE_BUILD_TYPE: "Debug", CMAKE_CXX_FLAGS: "-DCALC_CAPACITY=8" } },
    ],
    buildPresets: [{ name: "dev", configurePreset: "dev" }],
    testPresets: [{ name: "dev", configurePreset: "dev", output: { outputOnFailure: true } }],
  },
  null,
  2,
)
/** Without CALC_CAPACITY from the configuration, cppcheck sees buffer[1] read at index 3: an error that is not real. */
const CONFIGURED_CPP =
  CALC_CPP + `\n#if CALC_CAPACITY >= 8\nstatic int buffer[CALC_CAPACITY];\n#else\nstatic int buffer[1];\n#endif\nint peek() { return buffer[3]; }\n`

function gates(repo: CppRepo, taskId: string, worktree: string, requires: Gates.Requirement[], extra: Partial<Gates.RunInput> = {}) {
  return firstGates(repo.root, taskId, worktree, { requires, ...extra })
}

describe("the project's own configuration", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({ files: { "CMakePresets.json": PRESETS, "src/calc.cpp": CONFIGURED_CPP, ".gitignore": "build/\n" } })
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("CMakePresets.json is used for configure, build and test; cppcheck reads its defines through compile_commands.json", async () => {
    const detected = await Toolchain.detect(repo.root, { jobs: 2 })
    expect(detected.rules.detected).toMatchObject({ system: "cmake-presets", preset: "dev", buildDir: "build/dev" })
    expect(detected.rules.analysis.cppcheck.project).toBe("build/dev/compile_commands.json")

    const wt = await Worktrees.create(repo.root, "preset-task", "main")
    const ws = repo.at(wt.path)
    await ws.write("src/calc.cpp", CONFIGURED_CPP + "// one line\n")
    await ws.commitAll("one line")
    const report = await gates(repo, "preset-task", wt.path, ALL)
    expect(report.message).toContain("all gates passed")
    const build = await readFile(path.join(report.evidenceDir, "build.log"), "utf8")
    expect(build).toContain("$ cmake --preset dev")
    expect(build).toContain("$ cmake --build --preset dev -j ")
    expect(await readFile(path.join(report.evidenceDir, "test.log"), "utf8")).toContain("$ ctest --preset dev")
    expect(report.findings.filter((f) => f.severity === "error")).toEqual([])
    expect(await readFile(path.join(report.evidenceDir, "cppcheck.log"), "utf8")).toContain("--project=")

    // The same analysis without the configuration reports the error a correct configuration does not.
    const rules = (await Toolchain.detect(wt.path)).rules
    const { project: _ignored, ...withoutProject } = rules.analysis.cppcheck
    const blind = await gates(repo, "preset-task", wt.path, ALL, {
      evidenceDir: path.join(repo.root, ".air/local/evidence/preset-task/attempt-2"),
      toolchain: { ...rules, analysis: { cppcheck: withoutProject } },
    })
    expect(blind.findings.map((f) => f.id)).toContain("arrayIndexOutOfBounds")
    // …which the base has too (the task did not write it): recorded as inherited, so the task still passes.
    expect(blind.failedGate, blind.message).toBeUndefined()
    expect(blind.findings.find((f) => f.id === "arrayIndexOutOfBounds")?.inherited).toBe(true)
  })
})

describe("a compiler cache shared by the worktrees", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("the second worktree of the same sources hits ccache; each build's hit rate is evidence", async () => {
    const caches: CompilerCache.Stats[] = []
    for (const taskId of ["cache-first", "cache-second"]) {
      const wt = await Worktrees.create(repo.root, taskId, "main")
      const ws = repo.at(wt.path)
      await ws.write("NOTES.md", `notes of ${taskId}\n`)
      await ws.commitAll("notes")
      const report = await gates(repo, taskId, wt.path, ["diff", "build"])
      expect(report.message).toContain("all gates passed")
      const stats = JSON.parse(await readFile(path.join(report.evidenceDir, "cache.json"), "utf8")) as CompilerCache.Stats
      caches.push(stats)
      expect(report.gates.find((g) => g.gate === "build")?.summary).toMatch(/ccache \d+\/\d+ hits/)
    }
    expect(caches[0]!.misses).toBeGreaterThan(0)
    expect(caches[1]!.hits).toBeGreaterThan(0)
    expect(caches[1]!.misses).toBe(0)
    // One cache per project, under the project root.
    expect((await readdirSafe(path.join(repo.root, ".air/local/ccache"))).length).toBeGreaterThan(0)
  })
})

describe("detection of other build systems and of the user's options", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "air-detect-"))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  test("Meson and plain Makefile projects get build and test commands, with the machine's parallelism", async () => {
    const meson = path.join(dir, "meson")
    await mkdir(meson, { recursive: true })
    await writeFile(path.join(meson, "meson.build"), "project('m', 'cpp')\n")
    const m = await Toolchain.detect(meson, { jobs: 4 })
    expect(m.rules.build).toEqual(["test -f .air-build/build.ninja || meson setup .air-build", "meson compile -C .air-build -j 4"])
    expect(m.rules.test[0]).toContain("meson test -C .air-build --num-processes 4")

    const make = path.join(dir, "make")
    await mkdir(make, { recursive: true })
    await writeFile(path.join(make, "Makefile"), "all:\n\tg++ -c a.cpp\ncheck: all\n\t./run-tests\n")
    const k = await Toolchain.detect(make, { jobs: 3 })
    expect(k.rules.build).toEqual(["make -j 3"])
    expect(k.rules.test).toEqual(["make check"])
    expect(Detect.defaultJobs({ AIRCODING_JOBS: "7" })).toBe(7)
  })

  test("the configure options of the user's own build directory are reused, probed paths are not", async () => {
    const project = path.join(dir, "cmake")
    await mkdir(path.join(project, "mybuild"), { recursive: true })
    await writeFile(path.join(project, "CMakeLists.txt"), "project(x CXX)\n")
    await writeFile(
      path.join(project, "mybuild", "CMakeCache.txt"),
      [
        "CMAKE_CXX_STANDARD:STRING=17",
        "CMAKE_BUILD_TYPE:STRING=RelWithDebInfo",
        "CMAKE_CXX_COMPILER:FILEPATH=/usr/bin/c++",
        "WITH_TESTS:BOOL=ON",
        "Boost_INCLUDE_DIR:PATH=/usr/include",
        "ZLIB_LIBRARY:FILEPATH=/usr/lib/libz.so",
        "x_BINARY_DIR:STATIC=/somewhere",
      ].join("\n"),
    )
    const found = await Toolchain.detect(project, { jobs: 2, fromBuild: "mybuild", env: { PATH: "" } })
    expect(found.rules.build[0]).toBe(
      "cmake -S . -B .air-build -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CXX_STANDARD=17 -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWITH_TESTS=ON",
    )
  })

  test("a changed header is analysed with the includes and defines of compile_commands.json", async () => {
    const worktree = path.join(dir, "db")
    await mkdir(path.join(worktree, "build"), { recursive: true })
    await writeFile(
      path.join(worktree, "build", "compile_commands.json"),
      JSON.stringify([
        { directory: path.join(worktree, "build"), command: `c++ -I${worktree}/include -I../third -DMODE=2 -o a.o -c ${worktree}/src/a.cpp`, file: `${worktree}/src/a.cpp` },
        { directory: path.join(worktree, "build"), arguments: ["c++", "-I", `${worktree}/include`, "-c", "../src/b.cpp"], file: "../src/b.cpp" },
      ]),
    )
    const lines = await CppcheckArgs.build({ args: ["--std=c++17"], project: "build/compile_commands.json" }, ["src/a.cpp", "include/a.h"], {
      worktree,
      base: ["--base"],
      cxx: true,
      includes: ["-I", "include"],
    })
    expect(lines).toEqual([
      ["--base", `--project=${worktree}/build/compile_commands.json`, `--file-filter=${worktree}/src/a.cpp`, "--std=c++17"],
      ["--base", "--language=c++", "-Iinclude", "-Ithird", "-DMODE=2", "--std=c++17", "include/a.h"],
    ])
    // Not built yet (no database): the old way.
    const none = await CppcheckArgs.build({ args: [], project: "nowhere/compile_commands.json" }, ["src/a.cpp"], {
      worktree,
      base: ["--base"],
      cxx: true,
      includes: ["-I", "include"],
    })
    expect(none).toEqual([["--base", "--language=c++", "-I", "include", "src/a.cpp"]])
  })
})

async function readdirSafe(dir: string): Promise<string[]> {
  const { readdir } = await import("node:fs/promises")
  return readdir(dir).catch(() => [])
}
