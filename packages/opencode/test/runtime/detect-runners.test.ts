import { spawnSync } from "node:child_process"
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { DetectRunners } from "../../src/scheduler/runtime/toolchain/detect-runners.ts"
import { TestRunners } from "../../src/scheduler/runtime/gates/runners/index.ts"

/** Detection of the test runners a project's files declare, when there is no CMake, Meson or Make build. */
describe("test runners detected from the project's files", () => {
  const dirs: string[] = []
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
  })
  async function project(files: Record<string, string>) {
    const dir = await mkdtemp(path.join(tmpdir(), "air-detect-runners-"))
    dirs.push(dir)
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true })
      await writeFile(path.join(dir, file), text)
    }
    return dir
  }

  test("pyproject's pytest table, package.json's vitest, go.mod, Cargo.toml: one test command each, each its runner's", async () => {
    const dir = await project({
      "pyproject.toml": '[project]\nname = "calc"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
      "package.json": JSON.stringify({ devDependencies: { vitest: "^4" } }),
      "go.mod": "module example.com/calc\n",
      "Cargo.toml": '[package]\nname = "calc"\n',
    })
    const resolved = await Toolchain.detect(dir)
    expect(resolved.source).toBe("detected")
    expect(resolved.rules.test).toEqual(["python3 -m pytest -q", "npx vitest run", "go test ./...", "cargo test"])
    expect(resolved.rules.build).toEqual([DetectRunners.COMPILE_PYTHON, "go build ./...", "cargo build"])
    expect(resolved.rules.detected).toEqual({ system: "runners", runners: ["pytest", "vitest", "go", "cargo"] })
    expect(resolved.rules.test.map((c) => TestRunners.of(c)?.framework)).toEqual(["pytest", "vitest", "go", "cargo"])
    expect(resolved.note).toMatch(/pytest: pyproject\.toml, vitest: package\.json \(vitest\), go: go\.mod, cargo: Cargo\.toml/)
  })

  test("jest from package.json; pytest.ini; a CMake project keeps CTest alone", async () => {
    expect((await Toolchain.detect(await project({ "package.json": JSON.stringify({ devDependencies: { jest: "^29" } }) }))).rules.test).toEqual(["npx jest"])
    expect((await Toolchain.detect(await project({ "pytest.ini": "[pytest]\n" }))).rules.test).toEqual(["python3 -m pytest -q"])
    const cmake = await Toolchain.detect(await project({ "CMakeLists.txt": "project(x)\n", "pytest.ini": "[pytest]\n" }))
    expect(cmake.rules.test).toHaveLength(1)
    expect(cmake.rules.test[0]).toMatch(/^ctest /)
  })

  test("a package.json that does not parse is said; a pyproject without a pytest table is no pytest", async () => {
    const resolved = await Toolchain.detect(await project({ "package.json": "{ not json", "pyproject.toml": '[project]\nname = "x"\n' }))
    expect(resolved.source).toBe("none")
    expect(resolved.note).toMatch(/package\.json does not parse/)
  })

  test("the Python build command compiles the modules and fails on a syntax error", async () => {
    const good = await project({ "calc.py": "x = 1\n", ".hidden/broken.py": "def (:\n" })
    expect(spawnSync("sh", ["-c", DetectRunners.COMPILE_PYTHON], { cwd: good }).status).toBe(0)
    const bad = await project({ "calc.py": "def (:\n" })
    expect(spawnSync("sh", ["-c", DetectRunners.COMPILE_PYTHON], { cwd: bad }).status).not.toBe(0)
  })
})
