import { describe, expect, test } from "vitest"
import { validateGraph } from "../../src/scheduler/core/validate.ts"

const missing = { integrationFirst: { library: "spdlog", cmakePackage: "spdlog" } }

const integrate = { id: "T-1", title: "Integrate spdlog", kind: "build", phase: 1, writeSet: [{ path: "CMakeLists.txt", action: "modify" }], doneWhen: "spdlog is found and linked" }
const parser = { id: "T-2", title: "Parser", kind: "code", phase: 1, deps: ["T-1"], writeSet: [{ path: "src/parser.cpp", action: "create" }], doneWhen: "parses" }
const cli = { id: "T-3", title: "CLI", kind: "code", phase: 2, deps: ["T-2"], writeSet: [{ path: "src/main.cpp", action: "modify" }], doneWhen: "runs" }
const docs = { id: "T-4", title: "Docs", kind: "docs", phase: 1, writeSet: [{ path: "README.md", action: "modify" }], doneWhen: "documented" }

const graph = (...tasks: object[]) => ({ schemaVersion: 1, tasks })

function errorsOf(input: unknown, options = missing) {
  const checked = validateGraph(input, options)
  return checked.ok ? [] : checked.errors
}

describe("the plan rule: a library the rules name and the project lacks is integrated first", () => {
  test("a plan that starts with the integration task and has every code task depend on it (directly or not) is accepted", () => {
    expect(errorsOf(graph(integrate, parser, cli, docs))).toEqual([])
  })

  test("a plan without the integration task is refused, saying why and how to add it", () => {
    const errors = errorsOf(graph({ ...parser, deps: [] }, cli))
    expect(errors).toHaveLength(1)
    expect(errors[0]!.path).toBe("tasks")
    expect(errors[0]!.message).toContain("name spdlog as the logging library and the project does not use it yet")
    expect(errors[0]!.message).toContain(".air/shared/rules/house.json")
    expect(errors[0]!.fix).toContain('kind "build" in phase 1 titled "Integrate spdlog"')
    expect(errors[0]!.fix).toContain("find_package(spdlog) and the link to it, offline: no FetchContent")
  })

  test("a task that names the library but writes no CMake file does not integrate it", () => {
    const errors = errorsOf(graph({ ...integrate, writeSet: [{ path: "src/log.cpp", action: "create" }] }, parser))
    expect(errors.map((e) => e.path)).toEqual(["tasks"])
  })

  test("a code task that does not depend on the integration task is refused, naming it", () => {
    const errors = errorsOf(graph(integrate, parser, { ...cli, deps: [] }, docs))
    expect(errors).toEqual([expect.objectContaining({ path: "tasks[2].deps", taskId: "T-3", message: "task T-3 writes code but does not depend on T-1, the task that integrates spdlog", fix: 'add "T-1" to the deps of T-3' })])
  })

  test("the integration in a later phase is refused: it comes first", () => {
    const errors = errorsOf(graph({ ...integrate, phase: 2 }, { ...parser, phase: 2 }))
    expect(errors).toEqual([expect.objectContaining({ path: "tasks[0].phase", taskId: "T-1" })])
  })

  test("without the fact (the project uses the library, or no rule) the same plans are accepted", () => {
    expect(errorsOf(graph({ ...parser, deps: [] }, cli), {} as typeof missing)).toEqual([])
  })

  test("a 10,000-task chain is judged without overflowing the stack", () => {
    const chain = Array.from({ length: 10_000 }, (_, i) => ({ id: `C-${i}`, title: `step ${i}`, kind: "code", writeSet: [{ path: `src/s${i}.cpp`, action: "create" }], deps: [i === 0 ? "T-1" : `C-${i - 1}`], doneWhen: "done" }))
    expect(errorsOf(graph(integrate, ...chain))).toEqual([])
  })
})
