import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { Areas } from "../../src/scheduler/runtime/toolchain/areas"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index"
import { Readiness } from "../../src/scheduler/runtime/readiness"
import { DetectRunners } from "../../src/scheduler/runtime/toolchain/detect-runners"
import { ToolEnv } from "../../src/scheduler/runtime/toolchain/tool-env"

/** Issue 43 item 3: one toolchain area per root of a repository with several languages. */
const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "air-areas-"))
  dirs.push(dir)
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true })
    writeFileSync(join(dir, file), text)
  }
  return dir
}

const rules = Toolchain.Rules.parse({
  schemaVersion: 1,
  areas: [
    { name: "cpp", root: ".", build: ["cmake --build b"], test: ["ctest --test-dir b"] },
    { name: "python", root: "python", build: ["python3 -m compileall -q ."], test: ["python3 -m pytest -q"], analysers: ["mypy"] },
    { name: "gocount", root: "tools/gocount", build: ["go build ./..."], test: ["go test ./..."] },
  ],
})

describe("Areas.scope: a task runs the areas its write-set touches", () => {
  test.each([
    { writeSet: ["python/calc/ops.py"], run: ["python"], skipped: ["cpp", "gocount"] },
    { writeSet: ["python/"], run: ["python"], skipped: ["cpp", "gocount"] },
    { writeSet: ["python/calc/*.py", "tools/gocount/main.go"], run: ["python", "gocount"], skipped: ["cpp"] },
    { writeSet: ["src/calc.cpp"], run: ["cpp"], skipped: ["python", "gocount"] },
    // A directory above an area names its files too; so does a pattern at the top.
    { writeSet: ["tools/"], run: ["cpp", "gocount"], skipped: ["python"] },
    { writeSet: ["*.md"], run: ["cpp", "python", "gocount"], skipped: [] },
    // `pythonic/` is not under `python/`.
    { writeSet: ["pythonic/x.py"], run: ["cpp"], skipped: ["python", "gocount"] },
  ])("$writeSet → $run", ({ writeSet, run, skipped }) => {
    const scoped = Areas.scope(rules, writeSet)
    expect(scoped.run).toEqual(run)
    expect(scoped.skipped).toEqual(skipped)
    expect(scoped.rules.build).toEqual(rules.areas.filter((a) => run.includes(a.name)).flatMap((a) => a.build.map((c) => Areas.command(a, c))))
  })

  test("no write-set, or one in no area: every area (nothing says leaving one out is safe)", () => {
    expect(Areas.scope(rules, undefined).run).toEqual(["cpp", "python", "gocount"])
    const noTop = Toolchain.Rules.parse({ schemaVersion: 1, areas: rules.areas.slice(1) })
    expect(Areas.scope(noTop, ["README.md"])).toMatchObject({ run: ["python", "gocount"], skipped: [], note: expect.stringMatching(/in none of them/) })
  })

  test("the rules' build and test are every area's commands, each from its root: what the final check and merge build run", () => {
    expect(rules.build).toEqual(["cmake --build b", "cd python && python3 -m compileall -q .", "cd tools/gocount && go build ./..."])
    expect(rules.test).toEqual(["ctest --test-dir b", "cd python && python3 -m pytest -q", "cd tools/gocount && go test ./..."])
    // Parsing again changes nothing (the runtime parses rules it was given).
    expect(Toolchain.Rules.parse(rules).build).toEqual(rules.build)
  })

  test("an area lists the analysers that read its files; outside every area all do", () => {
    expect(Areas.analyses(rules.areas, "mypy", "python/calc/ops.py")).toBe(true)
    expect(Areas.analyses(rules.areas, "pylint", "python/calc/ops.py")).toBe(false)
    expect(Areas.analyses(rules.areas, "pylint", "tools/gen.py")).toBe(true)
  })
})

describe("toolchain.json areas: refused with the nearest key, never half read", () => {
  const parse = (json: unknown) => () => Toolchain.parse(JSON.stringify(json))
  test.each([
    [{ schemaVersion: 1, areas: [{ name: "py", root: "python", tests: ["pytest"] }] }, /areas\[0\]\.tests: unknown key; did you mean test\?/],
    [{ schemaVersion: 1, aeras: [] }, /aeras: unknown key; did you mean areas\?/],
    [{ schemaVersion: 1, areas: [{ name: "py", root: "../python" }] }, /areas\[0\]\.root: inside the worktree/],
    [{ schemaVersion: 1, areas: [{ name: "py", root: "py thon" }] }, /areas\[0\]\.root: letters, digits/],
    [{ schemaVersion: 1, areas: [{ name: "a", root: "x" }, { name: "a", root: "y" }] }, /areas: two areas have the same name/],
    [{ schemaVersion: 1, build: ["make"], areas: [{ name: "a", root: "x" }] }, /move these commands into an area/],
  ])("%j", (json, error) => {
    expect(parse(json)).toThrow(Toolchain.RulesInvalid)
    expect(parse(json)).toThrow(error)
  })

  test("written by init without the derived build and test; read back the same", () => {
    const file = Toolchain.fileOf(rules)
    expect(file).not.toHaveProperty("build")
    expect(Toolchain.parse(JSON.stringify(file))).toEqual(rules)
  })
})

describe("detection writes one area per root", () => {
  test("CMake at the top, pyproject.toml under python/, package.json under web/, a go.mod and a Cargo.toml below tools/", async () => {
    const dir = tree({
      "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(calc CXX)\n",
      "python/pyproject.toml": "[project]\nname = \"calc\"\n",
      "web/package.json": JSON.stringify({ name: "web", devDependencies: { vitest: "1" } }),
      "tools/gocount/go.mod": "module example.com/gocount\n\ngo 1.21\n",
      "tools/wc/Cargo.toml": "[package]\nname = \"wc\"\nversion = \"0.1.0\"\n",
      "node_modules/x/package.json": "{}",
      ".hidden/go.mod": "module hidden\n",
    })
    const { rules: detected, note } = await Toolchain.detect(dir, { jobs: 2, env: { PATH: process.env.PATH } })
    expect(detected.areas.map((a) => [a.name, a.root, a.detected])).toEqual([
      ["cpp", ".", "CMakeLists.txt"],
      ["python", "python", "python/pyproject.toml"],
      ["gocount", "tools/gocount", "tools/gocount/go.mod"],
      ["wc", "tools/wc", "tools/wc/Cargo.toml"],
      ["web", "web", "web/package.json (vitest)"],
    ])
    const area = (name: string) => detected.areas.find((a) => a.name === name)!
    expect(area("python")).toMatchObject({ build: [DetectRunners.COMPILE_PYTHON], test: ["python3 -m pytest -q"], analysers: ["mypy", "pylint"] })
    expect(area("web")).toMatchObject({ build: [], test: ["npx vitest run"], analysers: ["tsc"] })
    expect(area("gocount")).toMatchObject({ build: ["go build ./..."], test: ["go test ./..."], analysers: ["go-vet", "staticcheck"] })
    expect(area("wc")).toMatchObject({ build: ["cargo build"], test: ["cargo test"], analysers: ["clippy"] })
    expect(area("cpp").build[0]).toMatch(/^cmake -S \. -B \.air-build/)
    expect(area("cpp").analysers).toBeUndefined()
    expect(detected.test).toContain("cd python && python3 -m pytest -q")
    expect(note).toMatch(/^5 areas detected: cpp \(\.: CMakeLists\.txt\)/)
  })

  test("a repository with one root keeps the rules it had (no areas)", async () => {
    const dir = tree({ "CMakeLists.txt": "project(calc CXX)\n", "docs/index.md": "# docs\n" })
    const { rules: detected } = await Toolchain.detect(dir, { jobs: 2 })
    expect(detected.areas).toEqual([])
    expect(detected.detected?.system).toBe("cmake")
  })
})

describe("doctor reports each area and its tools", () => {
  test("installed tools pass; a missing one fails with how to install it", () => {
    const checks = Readiness.areaChecks(
      [
        { name: "python", root: "python", build: [], test: ["python3 -m pytest -q"], analysers: ["mypy", "pylint"], detected: "python/pyproject.toml" },
        { name: "rs", root: "rs", build: ["no-such-cargo-xyz build"], test: [] },
      ],
      { PATH: process.env.PATH },
    )
    expect(checks[0]).toMatchObject({ name: "area python", ok: true, detail: expect.stringMatching(/^python \(python\/pyproject\.toml\): build: \(none\); test: python3 -m pytest -q; analysers: mypy, pylint; tools python3, all installed$/) })
    expect(checks[1]).toMatchObject({ name: "area rs", ok: false, detail: expect.stringMatching(/not installed: no-such-cargo-xyz/) })
  })
})

describe("an area's Go commands run with Go's caches outside HOME (the gates' sandbox keeps HOME read-only)", () => {
  test("a go command in the build or test gets GOCACHE and offline settings, a person's own values win; others get none", () => {
    const go = Toolchain.Rules.parse({ schemaVersion: 1, areas: [{ name: "gocount", root: "tools/gocount", build: ["go build ./..."], test: ["go test ./..."] }] })
    expect(ToolEnv.forCommands([...go.build, ...go.test], {})).toMatchObject({ GOCACHE: expect.stringMatching(/aircoding-go/), GOPROXY: "off", GOTOOLCHAIN: "local" })
    expect(ToolEnv.forCommands(go.build, { GOCACHE: "/mine" })).not.toHaveProperty("GOCACHE")
    expect(ToolEnv.forCommands(["cmake --build .air-build", "cargo test", "echo go home"], {})).toEqual({})
  })
})
