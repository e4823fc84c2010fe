import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { aircoding } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { commitStep, passingReviewer, planningArchitect, runScenario, submittingMain, type RunResult } from "../support/runs"
import { CALC_CPP, CALC_H, CALC_TEST_CPP, CMAKELISTS } from "../runtime/cpp-repo"

/**
 * Issue 43 items 3 and 6: a repository of several languages, one toolchain area per root. A CMake library at the
 * top, a Python package with a pytest test under python/, a Go module with a go test under tools/gocount/, a
 * TypeScript package under web/ (tsc only). `aircoding init` writes the areas; then one run: T-1 changes only Python and brings in a type error, so its gates build and
 * test the python area alone (no cmake in its build log) and fail on mypy with the file and line; the Debugger
 * fixes it. T-2 changes the C++ library and builds the cpp area alone. T-1's merge builds and tests every area;
 * the final check runs them too, or reuses that very result.
 */
const requirement = "Add mul to the Python package and note the C++ sources."
const tasks = [
  { id: "T-1", title: "Add mul", kind: "code", writeSet: [{ path: "python/calcpy/ops.py", action: "modify" }], doneWhen: "calcpy.ops.mul multiplies and its tests pass (pytest)" },
  { id: "T-2", title: "Note calc.cpp", kind: "code", writeSet: [{ path: "src/calc.cpp", action: "modify" }], doneWhen: "calc.cpp says what it holds and its tests pass (ctest)" },
]
const OPS = "def add(a: int, b: int) -> int:\n    return a + b\n"
const MUL_WRONG = "\n\ndef mul(a: int, b: int) -> int:\n    return str(a * b)\n"
/** The mypy gate's own command in the python area (the Debugger's reproduction must run the failing gate's command). */
const MYPY = "cd python && mypy --no-color-output --no-error-summary --show-column-numbers --show-error-codes --no-pretty --follow-imports=silent --cache-dir=/dev/null -- calcpy/ops.py"
const files: Record<string, string> = {
  "CMakeLists.txt": CMAKELISTS,
  "include/calc.h": CALC_H,
  "src/calc.cpp": CALC_CPP,
  "test/calc_test.cpp": CALC_TEST_CPP,
  "python/pyproject.toml": '[project]\nname = "calcpy"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n',
  "python/calcpy/__init__.py": "",
  "python/calcpy/ops.py": OPS,
  "python/tests/test_ops.py": "from calcpy.ops import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n",
  "web/package.json": JSON.stringify({ name: "web", private: true }, null, 2) + "\n",
  "web/tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ["src"] }) + "\n",
  "web/src/index.ts": "export const twice = (n: number): number => n * 2\n",
  "tools/gocount/go.mod": "module example.com/gocount\n\ngo 1.19\n",
  "tools/gocount/count.go": "package gocount\n\n// Words counts the words of s.\nfunc Words(s string) int {\n\tn, in := 0, false\n\tfor _, r := range s {\n\t\tif r == ' ' {\n\t\t\tin = false\n\t\t} else if !in {\n\t\t\tin, n = true, n+1\n\t\t}\n\t}\n\treturn n\n}\n",
  "tools/gocount/count_test.go": "package gocount\n\nimport \"testing\"\n\nfunc TestWords(t *testing.T) {\n\tif got := Words(\"a bc  d\"); got != 3 {\n\t\tt.Fatalf(\"Words = %d, want 3\", got)\n\t}\n}\n",
  ".gitignore": "__pycache__/\n.mypy_cache/\n.pytest_cache/\n",
}
const scenario = {
  name: "areas",
  scripts: [
    submittingMain(requirement),
    planningArchitect("Two tasks, one per language.", tasks),
    {
      agent: "executor",
      match: "^Task T-1:",
      steps: [
        { tool: "bash", args: { command: `printf '${MUL_WRONG.replaceAll("\n", "\\n")}' >> python/calcpy/ops.py`, description: "add mul" } },
        commitStep("add mul"),
        { tool: "air_report", args: { summary: "Added mul." } },
        { text: "Reported." },
      ],
    },
    {
      agent: "debugger",
      match: "^Task T-1:",
      steps: [
        { tool: "bash", args: { command: MYPY, description: "reproduce the mypy finding" } },
        { tool: "edit", args: { filePath: "python/calcpy/ops.py", oldString: "return str(a * b)", newString: "return a * b" } },
        { tool: "bash", args: { command: MYPY, description: "verify: mypy passes" } },
        commitStep("mul returns an int"),
        {
          tool: "air_report",
          args: {
            summary: "mul returned a str; it returns the int product.",
            debug: {
              symptom: "mypy: python/calcpy/ops.py:6: Incompatible return value type",
              reproduction: { command: MYPY, output: "calcpy/ops.py:6:12: error: Incompatible return value type (got \"str\", expected \"int\")  [return-value]" },
              rootCause: { file: "python/calcpy/ops.py", line: 6, explanation: "mul converts the product to str" },
              fix: "return the product itself",
              verification: { command: MYPY, output: "(no output: no finding)" },
              pattern: "none",
            },
          },
        },
        { text: "Fixed." },
      ],
    },
    {
      agent: "executor",
      match: "^Task T-2:",
      steps: [
        { tool: "edit", args: { filePath: "src/calc.cpp", oldString: '#include "calc.h"', newString: '// calc.cpp: add and sub.\n#include "calc.h"' } },
        commitStep("note calc.cpp"),
        { tool: "air_report", args: { summary: "Noted calc.cpp." } },
        { text: "Reported." },
      ],
    },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let init: { code: number; stdout: string; stderr: string }
let r: RunResult
let rules: any

const git = (args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8", env: sandbox.env })
const report = (task: string, attempt: number) => JSON.parse(readFileSync(join(project, `.air/local/evidence/${task}/attempt-${attempt}/report.json`), "utf8"))
const buildLog = (task: string, attempt: number) => readFileSync(join(project, `.air/local/evidence/${task}/attempt-${attempt}/build.log`), "utf8")

beforeAll(async () => {
  sandbox = makeSandbox("air-areas-")
  project = sandbox.project("poly")
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(project, file)), { recursive: true })
    writeFileSync(join(project, file), text)
  }
  git(["add", "-A"])
  git(["commit", "-qm", "polyglot sample"])
  init = await aircoding(["init", project, "--no-baseline"], { cwd: project, env: sandbox.env, timeoutMs: 120_000 })
  rules = JSON.parse(readFileSync(join(project, ".air/shared/rules/toolchain.json"), "utf8"))
  // init's house rules ask for a logging library this sample does not use: a plan would have to integrate it first.
  rmSync(join(project, ".air/shared/rules/house.json"), { force: true })
  git(["add", "-A"])
  git(["commit", "-qm", "aircoding init"])
  r = await runScenario(sandbox, project, scenario, { input: requirement, timeoutMs: 600_000 })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("a repository of several languages: one toolchain area per root", () => {
  test("aircoding init writes the cpp, python and web areas, each with its own commands and analysers", () => {
    expect(init.code, init.stderr.slice(-2000)).toBe(0)
    expect(init.stdout).toMatch(/area python \(python, from python\/pyproject\.toml\): build python3 -m compileall/)
    expect(rules.build).toBeUndefined()
    expect(rules.areas.map((a: any) => [a.name, a.root, a.analysers ?? null])).toEqual([
      ["cpp", ".", null],
      ["python", "python", ["mypy", "pylint"]],
      ["gocount", "tools/gocount", ["go-vet", "staticcheck"]],
      ["web", "web", ["tsc"]],
    ])
    expect(rules.areas[0].build[0]).toMatch(/^cmake -S \. -B \.air-build/)
    expect(rules.areas[1].test).toEqual(["python3 -m pytest -q"])
  })

  test("the run ends with both tasks merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"], ["T-2", "merged"]])
    expect(r.events.filter((e) => e.type === "gates.errored" || e.type === "runtime.fault")).toEqual([])
  })

  test("the Python-only task builds and tests the python area alone: no C++ build in its evidence", () => {
    const first = report("T-1", 1)
    expect(first.areas).toEqual({ run: ["python"], skipped: ["cpp", "gocount", "web"] })
    expect(first.toolchain.note).toMatch(/the areas the write-set touches: python; not run: cpp, gocount, web/)
    const log = buildLog("T-1", 1)
    expect(log).toMatch(/cd python && python3 -m compileall/)
    expect(log).not.toMatch(/cmake/)
    expect(first.gates.find((g: any) => g.gate === "test")).toMatchObject({ passed: true, ran: true, summary: expect.stringMatching(/pytest: 1 test\(s\), 1 passed, 0 failed/) })
  })

  test("its new type error fails on the mypy gate with the file and line; the Debugger's fix passes", () => {
    const first = report("T-1", 1)
    expect(first).toMatchObject({ passed: false, failedGate: "mypy" })
    expect(first.message).toMatch(/python\/calcpy\/ops\.py:6: error: return-value: Incompatible return value type/)
    const failed = r.events.find((e) => e.type === "gates.failed" && e.taskId === "T-1")
    expect(failed.gate).toBe("mypy")
    const second = report("T-1", 2)
    expect(second.passed).toBe(true)
    expect(second.gates.find((g: any) => g.gate === "mypy")).toMatchObject({ passed: true, ran: true })
  })

  test("the C++ task builds the cpp area alone", () => {
    const cpp = report("T-2", 1)
    expect(cpp).toMatchObject({ passed: true, areas: { run: ["cpp"], skipped: ["python", "gocount", "web"] } })
    expect(buildLog("T-2", 1)).toMatch(/cmake --build \.air-build/)
    expect(buildLog("T-2", 1)).not.toMatch(/compileall/)
  })

  test("the merge build and the final check run every area", () => {
    // T-1 lands on top of T-2: its candidate is a tree no gate built, so the merge builds and tests it, every area.
    const merged = (name: string) => readFileSync(join(project, `.air/local/evidence/T-1/merge-1/${name}`), "utf8")
    expect(merged("build.log")).toMatch(/cmake --build \.air-build/)
    expect(merged("build.log")).toMatch(/cd python && python3 -m compileall/)
    expect(merged("test.log")).toMatch(/ctest --test-dir \.air-build/)
    expect(merged("test.log")).toMatch(/cd python && python3 -m pytest -q/)
    expect(merged("build.log")).toMatch(/cd tools\/gocount && go build \.\/\.\.\./)
    expect(merged("test.log")).toMatch(/cd tools\/gocount && go test (-json )?\.\/\.\.\./)
    // The final check runs the same commands, or reuses that very result (the same key: every area's commands).
    expect(r.summary.final.passed).toBe(true)
    const final = JSON.parse(readFileSync(join(project, ".air/local/evidence/_final/result.json"), "utf8"))
    const commands: string[] = final.commands.map((c: any) => c.command)
    if (final.reused) expect(final.reused.commit).toBe(git(["rev-parse", "air/done/T-1^{commit}"]).trim())
    else expect(commands.some((c) => /^cd python && python3 -m pytest/.test(c)) && commands.some((c) => /^ctest /.test(c))).toBe(true)
  })
})
