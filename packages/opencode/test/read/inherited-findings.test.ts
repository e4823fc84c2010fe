import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { gateFacts, gateFailureText } from "../../src/read/gate-words"
import { RunData } from "../../src/scheduler/runtime/store/run-data"

const finding = (line: number, over: Partial<NonNullable<RunData.GateReportFile["findings"]>[number]> = {}) => ({
  file: "src/calc.cpp",
  line,
  severity: "error",
  id: "arrayIndexOutOfBounds",
  message: "out of bounds",
  tool: "cppcheck",
  ...over,
})

const report = (failedGate: string, findings: NonNullable<RunData.GateReportFile["findings"]>): RunData.GateReportFile => ({
  taskId: "T-1",
  attempt: 1,
  passed: false,
  failedGate,
  message: "failed",
  gates: [],
  findings,
})

describe("inherited findings in the read model", () => {
  const root = mkdtempSync(join(tmpdir(), "air-inherited-"))
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  test("a failed analysis counts only the task's own findings and says how many were inherited (en, zh-CN)", () => {
    const r = report("analysis", [finding(9, { inherited: true }), finding(12, { inherited: true }), finding(15), finding(3, { tool: "clang-tidy", severity: "warning", id: "modernize-use-nullptr" })])
    const facts = gateFacts("analysis", r)
    expect(facts.findings).toEqual({ count: 1, errors: 1, files: ["src/calc.cpp"], inherited: 2 })
    expect(gateFailureText("en", facts)).toBe("1 finding(s), 1 error(s), in src/calc.cpp; 2 inherited from the base")
    expect(gateFailureText("zh-CN", facts)).toContain("另有 2 条继承自基线")
  })

  test("a failed clang-tidy gate speaks of clang-tidy's findings only", () => {
    const r = report("clang-tidy", [finding(9), finding(3, { tool: "clang-tidy", severity: "warning", id: "modernize-use-nullptr" }), finding(7, { tool: "clang-tidy", severity: "warning", inherited: true })])
    expect(gateFacts("clang-tidy", r).findings).toEqual({ count: 1, errors: 0, files: ["src/calc.cpp"], inherited: 1 })
  })

  test("each gate run's inherited count is read from its report (the dashboard shows it)", () => {
    const dir = join(root, ".air", "local", "evidence", "T-1")
    mkdirSync(join(dir, "attempt-1"), { recursive: true })
    mkdirSync(join(dir, "attempt-2"), { recursive: true })
    writeFileSync(join(dir, "attempt-1", "report.json"), JSON.stringify(report("analysis", [finding(9, { inherited: true }), finding(15)])))
    const tidyLine = { gate: "clang-tidy", passed: true, ran: true, ms: 5, summary: "no finding", logPath: join(dir, "attempt-2", "clang-tidy.log") }
    writeFileSync(join(dir, "attempt-2", "report.json"), JSON.stringify({ ...report("analysis", [finding(9, { inherited: true })]), passed: true, failedGate: undefined, gates: [tidyLine] }))
    writeFileSync(join(dir, "attempt-2", "clang-tidy.log"), "$ clang-tidy --quiet src/calc.cpp\n")
    const [first, second] = RunData.attempts(root, "T-1")
    expect(first!.inherited).toBe(1)
    expect(second!.inherited).toBe(1)
    // Each log is the one its gate's line in the report names.
    expect(second!.logs).toEqual([{ gate: "clang-tidy", key: "clang-tidy", text: "$ clang-tidy --quiet src/calc.cpp\n" }])
    expect(first!.logs).toEqual([])
  })
})
