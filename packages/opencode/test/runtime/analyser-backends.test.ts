import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { gateFacts, gateFailureText, gateLabel } from "../../src/read/gate-words.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { firstGates, taskBranches } from "./task-branch.ts"

/** Legacy Python on the integration branch: one name mypy and pylint both call undefined, that nobody touched. */
const LEGACY_PY = `"""Calculations."""


def add(a: int, b: int) -> int:
    """Adds."""
    return a + b


def legacy() -> int:
    """Old code."""
    return undefined_name
`

/** Legacy TypeScript with one type error nobody touched. */
const LEGACY_TS = `export function add(a: number, b: number): number {
  return a + b
}

export const legacy: number = "not a number"
`

const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "esnext", moduleResolution: "bundler" }, include: ["src"] })

/** This repository's own TypeScript: the test's project uses it as a project uses its node_modules/.bin/tsc. */
const TSC = path.resolve(__dirname, "../../../../node_modules/.bin/tsc")

const NO_CPPCHECK = { cppcheck: { enabled: false } }

describe.concurrent("the Python analysers (real mypy and pylint)", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { "pyproject.toml": "[tool.mypy]\n", "app/calc.py": LEGACY_PY } })
  })
  afterAll(async () => {
    await repo?.cleanup()
  })
  const { task } = taskBranches(() => repo, { commit: true })
  const gates = (taskId: string, worktree: string, backends: Record<string, { enabled?: boolean; binary?: string }> = {}) =>
    firstGates(repo.root, taskId, worktree, { requires: ["diff"], toolchain: { schemaVersion: 1, analysis: { ...NO_CPPCHECK, backends } } as Gates.RunInput["toolchain"] })

  test("mypy fails a finding the task introduced with file:line and message; the inherited one is recorded, not blamed", async () => {
    const { wt } = await task("py-new", (ws) => ws.write("app/calc.py", LEGACY_PY + '\n\ndef fresh() -> int:\n    """New."""\n    return "x"\n'))
    const report = await gates("py-new", wt.path)
    expect(report.failedGate).toBe("mypy")
    expect(report.message).toContain('app/calc.py:16: error: return-value: Incompatible return value type (got "str", expected "int")')
    expect(report.message).not.toContain("app/calc.py:11:")
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "app/calc.py", line: 11, tool: "mypy", id: "name-defined", inherited: true }))
    // The report names the analyser, in every language.
    const facts = gateFacts("mypy", report)
    expect(gateLabel("en", "mypy")).toBe("mypy")
    expect(facts.findings).toEqual({ count: 1, errors: 1, files: ["app/calc.py"], inherited: 1 })
    expect(gateFailureText("en", facts)).toBe("1 finding(s), 1 error(s), in app/calc.py; 1 inherited from the base")
  })

  test("pylint fails its own new error; conventions are recorded as style, not failing", async () => {
    const { wt } = await task("py-lint", (ws) => ws.write("app/calc.py", LEGACY_PY + "\n\ndef fresh() -> int:\n    return also_undefined  # type: ignore\n"))
    const report = await gates("py-lint", wt.path)
    expect(report.failedGate, report.message).toBe("pylint")
    expect(report.gates.find((g) => g.gate === "mypy")?.passed).toBe(true)
    expect(report.message).toContain("app/calc.py:15: error: undefined-variable: Undefined variable 'also_undefined'")
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "app/calc.py", line: 11, tool: "pylint", id: "undefined-variable", inherited: true }))
    expect(report.findings).toContainEqual(expect.objectContaining({ line: 14, tool: "pylint", id: "missing-function-docstring", severity: "style" }))
  })

  test("inherited findings alone pass, lines inserted above them; the pass is recorded under the tool's own key and reused", async () => {
    const { wt } = await task("py-old", (ws) => ws.write("app/calc.py", "# a comment\n" + LEGACY_PY.replace('"""Old code."""', '"""Old code, still."""\n    # untouched')))
    const report = await gates("py-old", wt.path)
    expect(report.passed, report.message).toBe(true)
    for (const tool of ["mypy", "pylint"]) {
      const gate = report.gates.find((g) => g.gate === tool)
      expect(gate?.ran, tool).toBe(true)
      expect(gate?.summary).toMatch(new RegExp(`^${tool} on 1 file\\(s\\): no new errors; recorded .*; \\d+ inherited`))
    }
    const again = await gates("py-old", wt.path)
    expect(again.passed, again.message).toBe(true)
    expect(again.gates.find((g) => g.gate === "mypy")?.summary).toMatch(/^reused: same analysed files, mypy and config as /)
    expect(again.gates.find((g) => g.gate === "pylint")?.summary).toMatch(/^reused: same analysed files, pylint and config as /)
    expect(again.findings).toContainEqual(expect.objectContaining({ tool: "mypy", line: 13, inherited: true }))
    const entries = await storedEntries(repo.root)
    expect(entries.filter((e) => e.kind === "analysis").map((e) => e.tool)).toEqual(expect.arrayContaining(["mypy", "pylint"]))
  })

  test("mypy required but not installed is a tool missing; merely present, it is recorded as not run, said so", async () => {
    const { wt } = await task("py-missing", (ws) => ws.write("app/calc.py", LEGACY_PY + "\n# more\n"))
    const binary = "/nonexistent/mypy"
    const optional = await gates("py-missing", wt.path, { mypy: { binary } })
    expect(optional.passed, optional.message).toBe(true)
    expect(optional.gates.find((g) => g.gate === "mypy")).toEqual(expect.objectContaining({ ran: false, summary: expect.stringContaining("mypy is not installed (tried `/nonexistent/mypy`): not run") }))
    expect(optional.message).toMatch(/not run: .*mypy/)
    const required = await gates("py-missing", wt.path, { mypy: { binary, enabled: true } })
    expect(required.failedGate).toBe("tool-missing")
    expect(required.gates.find((g) => g.gate === "mypy")?.missingTool).toBe("mypy")
    expect(required.message).toContain("analysis.backends.mypy.enabled")
  })
})

describe("the TypeScript analyser (real tsc)", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { "web/tsconfig.json": TSCONFIG, "web/src/calc.ts": LEGACY_TS, "tools/run.py": '"""A tool."""\n' } })
  })
  afterAll(async () => {
    await repo?.cleanup()
  })
  const { task } = taskBranches(() => repo, { commit: true })
  const gates = (taskId: string, worktree: string) =>
    firstGates(repo.root, taskId, worktree, { requires: ["diff"], toolchain: { schemaVersion: 1, analysis: { ...NO_CPPCHECK, backends: { tsc: { binary: TSC } } } } as Gates.RunInput["toolchain"] })

  test("a new type error fails from the project's tsconfig; the inherited one does not; the Python gates do not apply", async () => {
    const { wt } = await task("ts-new", (ws) => ws.write("web/src/calc.ts", LEGACY_TS + '\nexport const fresh: string = 42\n'))
    const report = await gates("ts-new", wt.path)
    expect(report.failedGate, report.message).toBe("tsc")
    expect(report.message).toContain("web/src/calc.ts:7: error: TS2322: Type 'number' is not assignable to type 'string'.")
    expect(report.message).not.toContain("web/src/calc.ts:5:")
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "web/src/calc.ts", line: 5, tool: "tsc", id: "TS2322", inherited: true }))
    expect(report.gates.find((g) => g.gate === "mypy")).toEqual(expect.objectContaining({ ran: false, summary: "not applicable: no Python file changed" }))
    expect(gateFailureText("zh-CN", gateFacts("tsc", report))).toContain("web/src/calc.ts")
  })
})

/** The local results store's entries (kind, tool), wherever under `.air` the store keeps them. */
async function storedEntries(root: string): Promise<{ kind?: string; tool?: string }[]> {
  const out: { kind?: string; tool?: string }[] = []
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) await walk(full)
      else if (entry.name.endsWith(".json")) {
        const text = await readFile(full, "utf8").catch(() => "")
        if (text.includes('"kind":"analysis"') || text.includes('"kind": "analysis"')) out.push(JSON.parse(text) as { kind?: string; tool?: string })
      }
    }
  }
  await walk(path.join(root, ".air"))
  return out
}
