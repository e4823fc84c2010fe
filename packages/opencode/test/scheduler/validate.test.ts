import { describe, expect, it } from "vitest"
import { validateDelta, validateGraph } from "../../src/scheduler/core/validate"
import { graphOf, task } from "./fixtures"

function errorsOf(input: unknown) {
  const result = validateGraph(input)
  if (result.ok) throw new Error("expected errors")
  return result.errors
}

describe("validateGraph", () => {
  it("accepts a sound graph and fills defaults", () => {
    const result = validateGraph({ schemaVersion: 1, tasks: [{ id: "T-1", title: "Add parser", kind: "code", writeSet: [{ path: "src/p.cpp", action: "create" }], doneWhen: "parses" }] })
    expect(result.ok).toBe(true)
    if (result.ok) expect(result.graph.tasks[0]).toMatchObject({ phase: 1, deps: [], keep: [], validation: [], adrRefs: [] })
  })

  it("names a missing field with its JSON path and task id", () => {
    const [error] = errorsOf({ schemaVersion: 1, tasks: [{ id: "T-1", title: "x", kind: "code", writeSet: [] }] })
    expect(error).toMatchObject({ path: "tasks[0].doneWhen", taskId: "T-1" })
    expect(error!.message).toContain('"doneWhen" is missing')
    expect(error!.fix).toContain("add")
  })

  it("lists the allowed values for a wrong kind", () => {
    const [error] = errorsOf({ schemaVersion: 1, tasks: [{ ...task("T-1"), kind: "coding" }] })
    expect(error!.path).toBe("tasks[0].kind")
    expect(error!.fix).toContain('"code"')
  })

  it("refuses a file without schemaVersion", () => {
    expect(errorsOf({ tasks: [] })[0]!.path).toBe("schemaVersion")
  })

  it("refuses an empty doneWhen", () => {
    const errors = errorsOf(graphOf(task("T-1", { doneWhen: "  " })))
    expect(errors[0]).toMatchObject({ path: "tasks[0].doneWhen", taskId: "T-1" })
  })

  it("refuses duplicate ids, naming both places", () => {
    const errors = errorsOf(graphOf(task("T-1"), task("T-1")))
    expect(errors[0]!.message).toBe("task id T-1 is used twice: tasks[0] and tasks[1]")
    expect(errors[0]!.path).toBe("tasks[1].id")
  })

  it.each([
    ["../x", 'contains ".."'],
    ["a/b", "slash"],
    ["a\\b", "slash"],
    ["bad\u0007id", "control character"],
    ["-lead", "must start with a letter or digit"],
    ["x".repeat(65), "longer than 64"],
    ["", "empty"],
  ])("refuses the id %j (%s)", (id, why) => {
    const errors = errorsOf(graphOf(task(id as string)))
    expect(errors.some((e) => e.path === "tasks[0].id" && e.message.includes(why))).toBe(true)
  })

  it("says which dependency does not exist and lists the known ids", () => {
    const errors = errorsOf(graphOf(task("T-1"), task("T-2"), task("T-7", { deps: ["T-9"] })))
    expect(errors[0]).toMatchObject({ path: "tasks[2].deps[0]", taskId: "T-7" })
    expect(errors[0]!.message).toBe("task T-7: depends on T-9, which does not exist; known ids: T-1, T-2, T-7")
  })

  it("suggests the id that was probably meant", () => {
    const errors = errorsOf(graphOf(task("T-1"), task("T-2", { deps: ["t1"] })))
    expect(errors[0]!.fix).toContain("did you mean T-1?")
  })

  it("prints a cycle", () => {
    const errors = errorsOf(graphOf(task("T-1", { deps: ["T-3"] }), task("T-2"), task("T-3", { deps: ["T-1"] })))
    expect(errors).toHaveLength(1)
    expect(errors[0]!.message).toContain("T-1 → T-3 → T-1")
    expect(errors[0]!.path).toBe("tasks[0].deps[0]")
  })

  it("finds a cycle in a 10,000-task chain without overflowing the stack", () => {
    const tasks = Array.from({ length: 10_000 }, (_, i) => task(`T-${i}`, { deps: [`T-${(i + 1) % 10_000}`] }))
    const errors = errorsOf(graphOf(...tasks))
    expect(errors[0]!.message).toMatch(/dependency cycle: T-0 → T-1 → .* → T-9999 → T-0/)
  })

  it("refuses a self-dependency and a dependency on a later phase", () => {
    expect(errorsOf(graphOf(task("T-1", { deps: ["T-1"] })))[0]!.message).toContain("depends on itself")
    const later = errorsOf(graphOf(task("T-1", { deps: ["T-2"] }), task("T-2", { phase: 2 })))
    expect(later[0]!.message).toContain("(phase 2)")
  })

  it("normalises write-set paths without touching the input", () => {
    const input = graphOf(task("T-1", { writeSet: [{ path: "./src\\a/./b.cpp", action: "modify" }], files: ["src/x/../y.h"] }))
    const copy = structuredClone(input)
    const result = validateGraph(input)
    expect(result.ok && result.graph.tasks[0]!.writeSet[0]!.path).toBe("src/a/b.cpp")
    expect(result.ok && result.graph.tasks[0]!.files).toEqual(["src/y.h"])
    expect(input).toEqual(copy)
  })

  it.each([
    ["/etc/passwd", "absolute"],
    ["C:\\x", "absolute"],
    ["../outside.cpp", "leaves the repository"],
    ["src/../../x", "leaves the repository"],
    ["", "empty"],
    [".", "repository root"],
  ])("refuses the write-set path %j", (path, why) => {
    const errors = errorsOf(graphOf(task("T-1", { writeSet: [{ path, action: "modify" }] })))
    expect(errors[0]!.path).toBe("tasks[0].writeSet[0].path")
    expect(errors[0]!.message).toContain(why)
  })

  it("refuses a pattern where a write-set must name files", () => {
    const errors = errorsOf(graphOf(task("T-1", { writeSet: [{ path: "src/*.cpp", action: "modify" }] })))
    expect(errors[0]).toMatchObject({ path: "tasks[0].writeSet[0].path", taskId: "T-1" })
    expect(errors[0]!.message).toContain("is a pattern")
  })

  it("refuses a code task with an empty write-set, but not a verify task", () => {
    expect(errorsOf(graphOf(task("T-1", { writeSet: [] })))[0]!.path).toBe("tasks[0].writeSet")
    expect(validateGraph(graphOf(task("T-1", { kind: "verify", writeSet: [] }))).ok).toBe(true)
  })

  it.each(["Clean up the parser", "优化解析器", "Update the docs", "Refactor lexer", "tidy the build", "Optimize search", "清理代码"])(
    "refuses the ambiguous %j without explicit actions and a keep-constraint",
    (title) => {
      const errors = errorsOf(graphOf(task("T-1", { title })))
      expect(errors[0]!.path).toBe("tasks[0].title")
      expect(errors[0]!.fix).toContain("keep")
    },
  )

  it("accepts an ambiguous verb once every file has an action and something is kept", () => {
    expect(validateGraph(graphOf(task("T-1", { title: "Clean up the parser", keep: ["parse() signature"] }))).ok).toBe(true)
  })

  it.each(["Refactor the lexer into two files", "重构词法分析器"])("a refactor task may say %j: its kind keeps behaviour and tests", (title) => {
    expect(validateGraph(graphOf(task("T-1", { kind: "refactor", title }))).ok).toBe(true)
  })

  it("a refactor task is still refused for another vague verb", () => {
    expect(errorsOf(graphOf(task("T-1", { kind: "refactor", title: "Refactor and optimise the lexer" })))[0]!.message).toContain('"optimise"')
  })

  it("does not mistake ordinary words for ambiguous verbs", () => {
    expect(validateGraph(graphOf(task("T-1", { title: "Add an updater flag; clean build passes", doneWhen: "uptime shown" }))).ok).toBe(true)
  })

  it("checks doneWhen for ambiguous verbs too", () => {
    expect(errorsOf(graphOf(task("T-1", { doneWhen: "code is cleaned up" })))[0]!.path).toBe("tasks[0].doneWhen")
  })

  // Its speed is a figure of `bun run bench` (validate_10k_ms), not a timed test.
  it("validates 10,000 tasks (a binary tree of dependencies)", () => {
    const tasks = Array.from({ length: 10_000 }, (_, i) => task(`T-${i}`, { deps: i > 0 ? [`T-${Math.floor(i / 2)}`] : [] }))
    expect(validateGraph(graphOf(...tasks)).ok).toBe(true)
  })
})

describe("validateDelta", () => {
  const base = graphOf(task("T-1"), task("T-2", { deps: ["T-1"] }), task("T-3", { adrRefs: ["ADR-1"] }))
  const delta = (fields: object) => ({ schemaVersion: 1, ...fields })

  it("accepts adding, modifying and removing", () => {
    const result = validateDelta(base, delta({ add: [task("T-4", { deps: ["T-1"] })], modify: [{ id: "T-2", patch: { title: "Add T-2 better" } }], remove: ["T-3"] }))
    expect(result.ok).toBe(true)
    if (result.ok) expect(result.result.impacts.map((i) => `${i.id}:${i.change}`)).toEqual(["T-2:modified", "T-3:removed", "T-4:added"])
  })

  it("refuses removing an unknown task, listing the known ones", () => {
    const result = validateDelta(base, delta({ remove: ["T-9"] }))
    expect(!result.ok && result.errors[0]).toMatchObject({ path: "remove[0]", taskId: "T-9" })
    expect(!result.ok && result.errors[0]!.message).toContain("known ids: T-1, T-2, T-3")
  })

  it("refuses removing a task another live task depends on", () => {
    const result = validateDelta(base, delta({ remove: ["T-1"] }))
    expect(!result.ok && result.errors[0]).toMatchObject({ path: "(graph) tasks[1].deps[0]", taskId: "T-2" })
  })

  it("refuses reusing an id, even of an invalidated task", () => {
    const result = validateDelta(base, delta({ add: [task("T-1")] }))
    expect(!result.ok && result.errors[0]!.path).toBe("add[0].id")
  })

  it("refuses a patch that creates a cycle, pointing into the delta", () => {
    const result = validateDelta(base, delta({ modify: [{ id: "T-1", patch: { deps: ["T-2"] } }] }))
    expect(!result.ok && result.errors[0]!.message).toContain("T-1 → T-2 → T-1")
    expect(!result.ok && result.errors[0]!.path).toBe("modify[0].patch.deps[0]")
  })

  it("refuses a patch with an unknown field", () => {
    const result = validateDelta(base, delta({ modify: [{ id: "T-1", patch: { id: "X" } }] }))
    expect(!result.ok && result.errors[0]!.fix).toContain('remove "id"')
  })

  it("invalidates tasks citing a superseded ADR", () => {
    const result = validateDelta(base, delta({ supersedesAdrs: ["ADR-1"] }))
    expect(result.ok && result.result.impacts).toEqual([expect.objectContaining({ id: "T-3", change: "superseded", becomes: "invalidated" })])
  })

  it("normalises paths in added tasks and patches", () => {
    const result = validateDelta(base, delta({ add: [task("T-4", { writeSet: [{ path: "./a.cpp", action: "create" }] })], modify: [{ id: "T-1", patch: { writeSet: [{ path: "x//y.cpp", action: "modify" }] } }] }))
    expect(result.ok && result.delta.add[0]!.writeSet[0]!.path).toBe("a.cpp")
    expect(result.ok && result.delta.modify[0]!.patch.writeSet![0]!.path).toBe("x/y.cpp")
  })
})

describe("bad input refused at the door", () => {
  it("a misspelt key in a task is refused with the nearest known key, never silently dropped", () => {
    const errors = errorsOf({ schemaVersion: 1, tasks: [task("T-1"), { ...task("T-2"), depends_on: ["T-1"] }] })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ path: "tasks[1].depends_on", taskId: "T-2" })
    expect(errors[0]!.message).toContain("tasks[1].depends_on: unknown key; did you mean deps?")
    expect(errors[0]!.fix).toBe('rename "depends_on" to "deps"')
  })

  it("an unknown top-level key is refused", () => {
    const errors = errorsOf({ ...graphOf(task("T-1")), taks: [] })
    expect(errors[0]!.message).toContain("taks: unknown key; did you mean tasks?")
  })

  it("a delta with a misspelt patch key is refused", () => {
    const result = validateDelta(graphOf(task("T-1"), task("T-2")), { schemaVersion: 1, modify: [{ id: "T-2", patch: { depends_on: ["T-1"] } }] })
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.errors[0]!.message).toContain("did you mean deps?")
  })

  it("100k tasks with 100k misspelt deps: answered, with the first 20 problems and a count of the rest", () => {
    const n = 100_000
    const tasks = Array.from({ length: n }, (_, i) => ({ ...task(`T-${i}`), deps: i === 0 ? [] : [`X-${i - 1}`] }))
    const errors = errorsOf({ schemaVersion: 1, tasks })
    expect(errors).toHaveLength(21)
    expect(errors[0]!.path).toBe("tasks[1].deps[0]")
    expect(errors[20]).toMatchObject({ path: "(more)", message: `${n - 1 - 20} more problem(s) of the same kinds not listed` })
    const text = JSON.stringify(errors)
    expect(text.length).toBeLessThan(20_000)
  })

  it("100k tasks with a misspelt key each: the zod path is bounded too", () => {
    const tasks = Array.from({ length: 100_000 }, (_, i) => ({ ...task(`T-${i}`), depends_on: [] }))
    const errors = errorsOf({ schemaVersion: 1, tasks })
    expect(errors).toHaveLength(21)
    expect(errors[20]!.message).toContain("99980 more")
  })

  // Invisible characters in what was sent are shown escaped in every refusal, never passed through raw.
  it.each([
    ["a BOM before the id", "\uFEFFT-1", "\\uFEFF"],
    ["a zero-width space inside the id", "T\u200B-1", "\\u200B"],
    ["a zero-width joiner", "T-1\u200D", "\\u200D"],
    ["a right-to-left override", "\u202ET-1", "\\u202E"],
    ["a word joiner", "T-\u20601", "\\u2060"],
  ])("%s is shown escaped in the refusal", (_what, id, escaped) => {
    const errors = errorsOf(graphOf(task(id)))
    const text = errors.map((e) => `${e.path} ${e.taskId ?? ""} ${e.message} ${e.fix}`).join("\n")
    expect(text).toContain(escaped)
    expect(text).not.toMatch(/[\u200B-\u200F\u202A-\u202E\u2060\uFEFF]/)
  })

  it("a control character in a dependency is shown escaped, not raw", () => {
    const errors = errorsOf(graphOf(task("T-1", { deps: ["T-\u00072"] })))
    expect(errors.map((e) => e.message).join("\n")).toContain("\\u0007")
    expect(errors.map((e) => e.message).join("\n")).not.toContain("\u0007")
  })

  it("a huge id is cut in the message", () => {
    const errors = errorsOf(graphOf(task("T-1", { deps: ["x".repeat(1_000_000)] })))
    expect(errors[0]!.message.length).toBeLessThan(500)
  })
})

describe("validateDelta at scale", () => {
  it("a delta removing 100k unknown ids from a 100k graph: answered, bounded", () => {
    const n = 100_000
    const graph = { schemaVersion: 1 as const, tasks: Array.from({ length: n }, (_, i) => task(`T-${i}`)) }
    const result = validateDelta(graph, { schemaVersion: 1, remove: Array.from({ length: n }, (_, i) => `t${i}x`) })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.errors).toHaveLength(21)
    expect(result.errors[0]!.message).toContain("which is not in the graph; known ids: T-0, T-1")
    expect(result.errors[20]!.message).toContain(`${n - 20} more`)
  })
})
