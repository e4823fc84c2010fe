import { expect, test } from "vitest"
import { parseMypy } from "../../src/scheduler/runtime/gates/analysers/mypy.ts"
import { parsePylint } from "../../src/scheduler/runtime/gates/analysers/pylint.ts"
import { parseTsc } from "../../src/scheduler/runtime/gates/analysers/tsc.ts"

test("mypy: errors are findings, notes are not; a broken pyproject is a configuration problem; exit 2 alone is a crash", () => {
  const out = ['app/a.py:3:5: error: Name "x" is not defined  [name-defined]', "app/a.py:3:5: note: See docs", "app/b.py:9: warning: unused  [unused-ignore]"].join("\n")
  expect(parseMypy(out, 1)).toEqual({
    findings: [
      { file: "app/a.py", line: 3, severity: "error", id: "name-defined", message: 'Name "x" is not defined' },
      { file: "app/b.py", line: 9, severity: "warning", id: "unused-ignore", message: "unused" },
    ],
    unread: [],
  })
  expect(parseMypy("pyproject.toml: [mypy]: Unrecognized option: colour = 1", 0).configProblem).toContain("pyproject.toml")
  expect(parseMypy("mypy: can't read file 'gone.py': No such file or directory", 2).crashed).toContain("can't read file")
  // A syntax error stops mypy (exit 2) but is the file's finding, not a crash.
  const syntax = parseMypy("app/a.py:1:1: error: invalid syntax  [syntax]", 2)
  expect(syntax.crashed).toBeUndefined()
  expect(syntax.findings).toHaveLength(1)
})

test("pylint: categories map to severities; a usage error is a configuration problem; a traceback is a crash", () => {
  const out = ["************* Module a", "a.py:2:11:error:undefined-variable:Undefined variable 'y'", "a.py:1:0:convention:missing-module-docstring:Missing module docstring"].join("\n")
  expect(parsePylint(out, 18)).toEqual({
    findings: [
      { file: "a.py", line: 2, severity: "error", id: "undefined-variable", message: "Undefined variable 'y'" },
      { file: "a.py", line: 1, severity: "style", id: "missing-module-docstring", message: "Missing module docstring" },
    ],
    unread: [],
  })
  expect(parsePylint("usage: pylint [options]\npylint: error: no such option: --bogus", 32).configProblem).toContain("no such option")
  expect(parsePylint("Traceback (most recent call last):\n  File \"astroid\", line 1\nRecursionError", 1).crashed).toMatch(/^Traceback/)
})

test("tsc: located diagnostics are findings, continuation lines belong to them; tsconfig's own errors are a configuration problem", () => {
  const out = ["src/a.ts(4,7): error TS2322: Type 'number' is not assignable to type 'string'.", "  The expected type comes from here."].join("\n")
  expect(parseTsc(out, 2)).toEqual({ findings: [{ file: "src/a.ts", line: 4, severity: "error", id: "TS2322", message: "Type 'number' is not assignable to type 'string'." }], unread: [] })
  expect(parseTsc("tsconfig.json(3,5): error TS5023: Unknown compiler option 'bogus'.", 1).configProblem).toContain("TS5023")
  expect(parseTsc("error TS18003: No inputs were found in config file 'tsconfig.json'.", 2).configProblem).toContain("TS18003")
})
