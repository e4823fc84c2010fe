import { expect, test } from "vitest"
import { parseMypy } from "../../src/scheduler/runtime/gates/analysers/mypy.ts"
import { parsePylint } from "../../src/scheduler/runtime/gates/analysers/pylint.ts"
import { parseTsc } from "../../src/scheduler/runtime/gates/analysers/tsc.ts"
import { packagesOf, parseGoVet } from "../../src/scheduler/runtime/gates/analysers/go-vet.ts"
import { parseStaticcheck } from "../../src/scheduler/runtime/gates/analysers/staticcheck.ts"
import { parseClippy } from "../../src/scheduler/runtime/gates/analysers/clippy.ts"

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

test("go vet: -json's packages are findings by analyser, at paths from the module's root; type errors are findings; go.mod refused is a configuration problem; a panic is a crash", () => {
  const json = '# example.com/m/calc\n{\n\t"example.com/m/calc": {\n\t\t"printf": [\n\t\t\t{\n\t\t\t\t"posn": "/src/m/calc/calc.go:7:9",\n\t\t\t\t"message": "fmt.Sprintf format %d has arg \\"n\\" of wrong type string"\n\t\t\t}\n\t\t]\n\t}\n}\n# example.com/m\n{}\n'
  expect(parseGoVet(json, 0, "/src/m")).toEqual({
    findings: [{ file: "calc/calc.go", line: 7, severity: "error", id: "printf", message: 'fmt.Sprintf format %d has arg "n" of wrong type string' }],
    unread: [],
    unreadFails: true,
  })
  expect(parseGoVet("# example.com/m/calc\nvet: calc/b.go:2:28: cannot use \"s\" (untyped string constant) as int value in return statement\n", 1, "/src/m").findings).toEqual([
    { file: "calc/b.go", line: 2, severity: "error", id: "typecheck", message: 'cannot use "s" (untyped string constant) as int value in return statement' },
  ])
  expect(parseGoVet("go: errors parsing go.mod:\n/src/m/go.mod:4: unknown directive: bogus\n", 1, "/src/m").configProblem).toContain("errors parsing go.mod")
  expect(parseGoVet("panic: runtime error: index out of range\n\ngoroutine 1 [running]:\n", 2, "/src/m").crashed).toContain("panic:")
  // Printed with a clean exit yet not read: said, so the gate gives no verdict.
  const babble = parseGoVet("all fine, probably\n", 0, "/src/m")
  expect([babble.findings, babble.unread, babble.unreadFails]).toEqual([[], ["all fine, probably"], true])
  expect(packagesOf(["main.go", "calc/calc.go", "calc/calc_test.go"])).toEqual([".", "./calc"])
})

test("clippy: compiler messages at their primary span are findings by lint and level; summaries are not; a manifest refused is a configuration problem; an ICE is a crash", () => {
  const diagnostic = (level: string, code: string | null, message: string, spans: unknown[]) =>
    JSON.stringify({ reason: "compiler-message", package_id: "calc", message: { rendered: "…", level, message, code: code ? { code, explanation: null } : null, spans, children: [] } })
  const at = (line: number) => ({ file_name: "src/lib.rs", line_start: line, line_end: line, column_start: 5, column_end: 9, is_primary: true })
  const output = [
    diagnostic("error", "clippy::eq_op", "equal expressions as operands to `==`", [at(6)]),
    diagnostic("warning", "clippy::needless_return", "unneeded `return` statement", [at(2)]),
    diagnostic("error", null, "aborting due to 1 previous error", []),
    JSON.stringify({ reason: "build-finished", success: false }),
    "error: could not compile `calc` (lib) due to 1 previous error",
  ].join("\n")
  expect(parseClippy(output, 101, "/src/calc")).toEqual({
    findings: [
      { file: "src/lib.rs", line: 6, severity: "error", id: "clippy::eq_op", message: "equal expressions as operands to `==`" },
      { file: "src/lib.rs", line: 2, severity: "warning", id: "clippy::needless_return", message: "unneeded `return` statement" },
    ],
    unread: [],
    unreadFails: true,
  })
  expect(parseClippy("error: failed to parse manifest at `/src/calc/Cargo.toml`\n\nCaused by:\n  could not parse input as TOML\n", 101, "/src/calc").configProblem).toContain("failed to parse manifest")
  expect(parseClippy("thread 'rustc' panicked at 'index out of bounds'\n", 101, "/src/calc").crashed).toContain("panicked")
  expect(parseClippy("{not json\n", 0, "/src/calc")).toEqual({ findings: [], unread: ["{not json"], unreadFails: true })
})

test("staticcheck: SA checks are errors and S/ST/QF style, at paths from the module's root; a compile problem is the file's; one with no place from the go command is a configuration problem", () => {
  const problem = (code: string, file: string, line: number, message: string) =>
    JSON.stringify({ code, severity: "error", location: { file, line, column: 2 }, end: { file: "", line: 0, column: 0 }, message })
  const output = [
    problem("SA5002", "/src/m/calc/calc.go", 15, "this loop will spin, using 100% CPU"),
    problem("S1003", "/src/m/calc/calc.go", 21, 'should use strings.Contains(s, "x") instead'),
    problem("compile", "/src/m/calc/b.go", 2, "x declared but not used"),
  ].join("\n")
  expect(parseStaticcheck(output, 1, "/src/m").findings).toEqual([
    { file: "calc/calc.go", line: 15, severity: "error", id: "SA5002", message: "this loop will spin, using 100% CPU" },
    { file: "calc/calc.go", line: 21, severity: "style", id: "S1003", message: 'should use strings.Contains(s, "x") instead' },
    { file: "calc/b.go", line: 2, severity: "error", id: "typecheck", message: "x declared but not used" },
  ])
  expect(parseStaticcheck(problem("compile", "", 0, "stat /src/m/gone: directory not found"), 1, "/src/m").configProblem).toContain("directory not found")
  expect(parseStaticcheck("Segmentation fault\n", 1, "/src/m")).toEqual({ findings: [], unread: ["Segmentation fault"], unreadFails: true })
})
