import { describe, expect, test } from "vitest"
import { validateDelta, validateGraph } from "../../src/scheduler/core/validate.ts"
import { moduleOf, saysTestsPass, type BoundaryRules } from "../../src/scheduler/core/boundary-tests.ts"
import { HouseRules } from "../../src/scheduler/runtime/house/rules.ts"

/** The house rules' boundary tests as validateGraph applies them: a table of plans, each accepted or refused naming the module. */
const house = (over: Partial<HouseRules.File["boundaries"] & object> = {}): BoundaryRules => {
  const loaded = HouseRules.parse(JSON.stringify({ schemaVersion: 1, boundaries: over }))
  return { ...loaded.boundaries!, existingDirs: new Set(["src", "include", "include/calc", "tests"]) }
}

const ok = "ctest passes and its tests pass"
const code = (id: string, writeSet: object[], extra: object = {}) => ({ id, title: id, kind: "code", writeSet, doneWhen: ok, ...extra })
const testTask = (id: string, deps: string[]) => ({ id, title: id, kind: "test", deps, writeSet: [{ path: `tests/test_${id}.cpp`, action: "create" }], doneWhen: "the new tests pass" })
const graph = (...tasks: object[]) => ({ schemaVersion: 1, tasks })

function errorsOf(input: unknown, rules: BoundaryRules = house()) {
  const checked = validateGraph(input, { boundaries: rules })
  return checked.ok ? [] : checked.errors
}

describe("boundary tests under the house rules", () => {
  const table: [string, object, string[]][] = [
    ["a change inside an existing module", graph(code("T-1", [{ path: "src/calc.cpp", action: "modify" }])), []],
    ["a new source directory without tests", graph(code("T-1", [{ path: "src/net/socket.cpp", action: "create" }])), ["T-1 adds the module src/net"]],
    ["a new source directory with a test task depending on it", graph(code("T-1", [{ path: "src/net/socket.cpp", action: "create" }]), testTask("T-2", ["T-1"])), []],
    ["a new source directory with its own test file", graph(code("T-1", [{ path: "src/net/socket.cpp", action: "create" }, { path: "tests/test_socket.cpp", action: "create" }])), []],
    ["a test task that depends on another task does not count", graph(code("T-1", [{ path: "src/net/socket.cpp", action: "create" }]), code("T-3", [{ path: "src/calc.cpp", action: "modify" }]), testTask("T-2", ["T-3"])), ["T-1 adds the module src/net"]],
    ["a new library target (a CMakeLists.txt below the root)", graph(code("T-1", [{ path: "libs/store/CMakeLists.txt", action: "create" }, { path: "CMakeLists.txt", action: "modify" }])), ["T-1 adds the module libs/store"]],
    ["a changed public header", graph(code("T-1", [{ path: "include/calc/calc.h", action: "modify" }])), ["T-1 changes a public interface (include/calc/calc.h) but no test task depends on it and it writes no test file, so nothing checks the module calc"]],
    ["a private header is not an interface", graph(code("T-1", [{ path: "src/detail.h", action: "modify" }])), []],
    ["a code task whose doneWhen leaves its tests out", graph(code("T-1", [{ path: "src/calc.cpp", action: "modify" }], { doneWhen: "mul works" })), ['T-1 writes code but its doneWhen ("mul works") does not include its tests passing']],
    ["a ui task is a code task too", graph({ ...code("T-1", [{ path: "src/calc.cpp", action: "modify" }], { doneWhen: "the window shows" }), kind: "ui", ui: { command: "build/app" } }), ["T-1 writes code but its doneWhen"]],
    ["a docs task has no tests to pass", graph({ id: "D-1", title: "d", kind: "docs", writeSet: [{ path: "README.md", action: "modify" }], doneWhen: "documented" }), []],
  ]
  test.each(table)("%s", (_name, input, expected) => {
    const errors = errorsOf(input)
    expect(errors.length, JSON.stringify(errors)).toBe(expected.length)
    expected.forEach((text, i) => expect(errors[i]!.message).toContain(text))
  })

  test("the refusal says what to add", () => {
    const [error] = errorsOf(graph(code("T-1", [{ path: "src/net/socket.cpp", action: "create" }])))
    expect(error).toMatchObject({ path: "tasks[0].writeSet", taskId: "T-1" })
    expect(error!.fix).toContain('add a task of kind "test" with "T-1" in its deps that tests src/net')
  })

  test("the interface globs come from the rules: src/**/api/*.h is the interface, include/ no longer is", () => {
    const rules = house({ publicInterface: ["src/**/api/*.h"] })
    expect(errorsOf(graph(code("T-1", [{ path: "src/net/api/socket.h", action: "modify" }])), rules)[0]!.message).toContain("changes a public interface (src/net/api/socket.h)")
    expect(errorsOf(graph(code("T-1", [{ path: "include/calc/calc.h", action: "modify" }])), rules)).toEqual([])
  })

  test("each rule turns off on its own", () => {
    expect(errorsOf(graph(code("T-1", [{ path: "src/net/socket.cpp", action: "create" }])), house({ modules: false }))).toEqual([])
    expect(errorsOf(graph(code("T-1", [{ path: "src/calc.cpp", action: "modify" }], { doneWhen: "mul works" })), house({ doneWhenTests: false }))).toEqual([])
    expect(HouseRules.parse(JSON.stringify({ schemaVersion: 1, boundaries: { enabled: false } })).boundaries).toBeUndefined()
  })

  test("without house rules only the built-in header rule holds (no module or doneWhen judgement)", () => {
    expect(validateGraph(graph(code("T-1", [{ path: "src/net/socket.cpp", action: "create" }], { doneWhen: "works" }))).ok).toBe(true)
  })

  test("a delta is judged on what it adds, naming the module", () => {
    const base = validateGraph(graph(code("T-1", [{ path: "src/calc.cpp", action: "modify" }])), { boundaries: house() })
    if (!base.ok) throw new Error(JSON.stringify(base.errors))
    const refused = validateDelta(base.graph, { schemaVersion: 1, add: [code("T-2", [{ path: "src/store/db.cpp", action: "create" }])] }, undefined, { boundaries: house() })
    expect(refused.ok ? [] : refused.errors.map((e) => e.message)).toEqual([expect.stringContaining("T-2 adds the module src/store")])
  })

  test("a misspelt key is refused with the nearest known one; a broken glob is refused", () => {
    expect(() => HouseRules.parse(JSON.stringify({ schemaVersion: 1, boundaries: { publicInterfaces: ["x/**"] } }))).toThrow(/publicInterface/)
    expect(() => HouseRules.parse(JSON.stringify({ schemaVersion: 1, bondaries: {} }))).toThrow(/boundaries/)
  })

  test("modules and 'tests pass' as read from paths and words", () => {
    expect(moduleOf("libs/net/src/socket.cpp")).toBe("libs/net")
    expect(moduleOf("libs/net/include/net/socket.h")).toBe("libs/net")
    expect(moduleOf("include/calc/calc.h")).toBe("calc")
    expect(moduleOf("src/parser/x.cpp")).toBe("src/parser")
    for (const yes of ["ctest passes test_parser", "mul works and its tests pass", "the unit tests are green", "测试通过"]) expect(saysTestsPass(yes), yes).toBe(true)
    for (const no of ["mul works", "the test is written", "passes review"]) expect(saysTestsPass(no), no).toBe(false)
  })
})
