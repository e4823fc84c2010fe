import { describe, expect, it } from "vitest"
import { Strict } from "../../src/scheduler/core/strict"
import { PlanDelta } from "../../src/scheduler/core/delta.schema"
import { ReviewReport, WorkerResult } from "../../src/scheduler/core/report.schema"
import { Settings } from "../../src/scheduler/runtime/settings"
import { TaskGraph } from "../../src/scheduler/core/task.schema"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index"

describe("Strict.nearest", () => {
  const taskKeys = Object.keys(TaskGraph.shape.tasks.element.shape)
  it.each([
    ["depends_on", "deps"],
    ["dependencies", "deps"],
    ["write_set", "writeSet"],
    ["done_when", "doneWhen"],
    ["validations", "validation"],
    ["adr_refs", "adrRefs"],
  ])("%s → %s", (typo, meant) => {
    expect(Strict.nearest(typo, taskKeys)).toBe(meant)
  })
  it("stauts → status among the commands; nothing for a word far from all", () => {
    const commands = ["run", "status", "events", "dashboard", "doctor", "demo"]
    expect(Strict.nearest("stauts", commands)).toBe("status")
    expect(Strict.nearest("dashbaord", commands)).toBe("dashboard")
    expect(Strict.nearest("zzzzzz", commands)).toBeUndefined()
  })
})

describe("Strict.visible", () => {
  it.each([
    ["a BOM", "\uFEFFT-1", "\\uFEFFT-1"],
    ["a zero-width space", "T\u200B-1", "T\\u200B-1"],
    ["a zero-width non-joiner and joiner", "a\u200C\u200Db", "a\\u200C\\u200Db"],
    ["a left-to-right mark", "x\u200E", "x\\u200E"],
    ["a right-to-left override", "\u202Eabc", "\\u202Eabc"],
    ["a soft hyphen", "re\u00ADad", "re\\u00ADad"],
    ["a bell and an escape", "a\u0007b\u001B[31m", "a\\u0007b\\u001B[31m"],
    ["a carriage return", "T-1\r", "T-1\\u000D"],
    ["a DEL and a C1 control", "\u007F\u0085", "\\u007F\\u0085"],
    ["the line separator", "a\u2028b", "a\\u2028b"],
  ])("%s is written as its escape", (_what, raw, shown) => {
    expect(Strict.visible(raw)).toBe(shown)
  })

  it.each([
    ["plain ASCII", "task T-1: depends on T-9"],
    ["line feeds and tabs, which lay out a message", "- a\n\t- b"],
    ["Chinese", "任务 T-1：写入集"],
    ["accents and an emoji", "café ☕"],
  ])("%s is left as it is", (_what, text) => {
    expect(Strict.visible(text)).toBe(text)
  })
})

describe("strict schemas say the nearest key", () => {
  const cases: [string, { safeParse(x: unknown): { success: boolean; error?: unknown } }, unknown, string, string][] = [
    ["task graph, task key", TaskGraph, { schemaVersion: 1, tasks: [{ id: "T-1", title: "t", kind: "code", doneWhen: "d", depends_on: [] }] }, "tasks[0].depends_on", "deps"],
    ["task graph, top level", TaskGraph, { schemaVersion: 1, task: [], tasks: [] }, "task", "tasks"],
    ["write-set entry", TaskGraph, { schemaVersion: 1, tasks: [{ id: "T-1", title: "t", kind: "code", doneWhen: "d", writeSet: [{ path: "a", action: "create", regoin: "f" }] }] }, "tasks[0].writeSet[0].regoin", "region"],
    ["delta", PlanDelta, { schemaVersion: 1, removes: [] }, "removes", "remove"],
    ["delta patch", PlanDelta, { schemaVersion: 1, modify: [{ id: "T-1", patch: { dep: [] } }] }, "modify[0].patch.dep", "deps"],
    ["worker report", WorkerResult, { taskId: "T-1", role: "executor", summary: "s", sumary: "x" }, "sumary", "summary"],
    ["review", ReviewReport, { taskId: "T-1", verdict: "pass", rows: [{ designRef: "r", code: "c", status: "match", notes: "" }] }, "rows[0].notes", "note"],
    ["config.json", Settings.Schema, { concurency: 2 }, "concurency", "concurrency"],
    ["toolchain.json", Toolchain.Rules, { schemaVersion: 1, tests: [] }, "tests", "test"],
    ["toolchain.json cppcheck", Toolchain.Rules, { schemaVersion: 1, analysis: { cppcheck: { arg: [] } } }, "analysis.cppcheck.arg", "args"],
  ]
  it.each(cases)("%s", (_name, schema, input, path, meant) => {
    const parsed = schema.safeParse(input)
    expect(parsed.success).toBe(false)
    const problems = Strict.problems(schema as never, parsed.error as never)
    expect(problems).toContainEqual(expect.objectContaining({ path, message: `unknown key; did you mean ${meant}?`, suggestion: meant }))
  })

  it("one line for a person, counting what it leaves out", () => {
    const input = { schemaVersion: 1, tasks: Array.from({ length: 30 }, (_, i) => ({ id: `T-${i}`, title: "t", kind: "code", doneWhen: "d", depends_on: [] })) }
    const parsed = TaskGraph.safeParse(input)
    expect(parsed.success).toBe(false)
    const line = Strict.oneLine(TaskGraph, parsed.error!, 3)
    expect(line).toContain("tasks[0].depends_on: unknown key; did you mean deps?")
    expect(line).toMatch(/and 27 more$/)
    expect(line).not.toContain("\n")
  })
})

describe("Strict.decode", () => {
  it("drops a byte-order mark", () => {
    expect(Strict.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), "config.json")).toBe("{}")
  })
  it("keeps valid multi-byte text", () => {
    expect(Strict.decode(new TextEncoder().encode('{"language":"zh-CN","t":"中文 ✓ 😀"}'), "f")).toContain("中文 ✓ 😀")
  })
  it.each([
    ["a lone continuation byte", [0x7b, 0x22, 0x80, 0x22, 0x7d], 2],
    ["Latin-1 é", [0x7b, 0x22, 0x61, 0xe9, 0x22, 0x7d], 3],
    ["a truncated sequence at the end", [0x61, 0x62, 0xe4, 0xb8], 2],
    ["an overlong slash", [0x61, 0xc0, 0xaf], 1],
    ["a UTF-16 surrogate", [0x61, 0xed, 0xa0, 0x80], 1],
    ["after a BOM", [0xef, 0xbb, 0xbf, 0x61, 0xff], 4],
  ])("refuses %s, naming the file and byte offset", (_name, bytes, offset) => {
    expect(() => Strict.decode(new Uint8Array(bytes), ".air/shared/config.json")).toThrow(`.air/shared/config.json: not valid UTF-8 at byte ${offset}`)
  })
})

describe("coordinator tool arguments", () => {
  it("air_plan hands a misspelt key on to validateGraph, which names the nearest key; air_review's rows are strict", async () => {
    const { CoordinatorTools } = await import("../../src/tool/coordinator")
    const { validateGraph } = await import("../../src/scheduler/core/validate")
    const { z } = await import("zod")
    const tools = CoordinatorTools.build()
    const plan = z.object(tools.air_plan!.args).parse({ tasks: [{ id: "T-1", title: "t", kind: "code", doneWhen: "d", writeSet: [{ path: "a.cpp", action: "modify" }], depends_on: [] }] })
    const checked = validateGraph({ schemaVersion: 1, tasks: plan.tasks })
    expect(checked.ok).toBe(false)
    if (!checked.ok) expect(checked.errors[0]!.message).toContain("tasks[0].depends_on: unknown key; did you mean deps?")
    const review = z.object(tools.air_review!.args).safeParse({ verdict: "pass", rows: [{ designRef: "r", code: "c", status: "match", notes: "x" }] })
    expect(review.success).toBe(false)
  })
})
