import { describe, expect, it } from "vitest"
import { z } from "zod"
import { checklistFindings, FINDING_NEEDS_PLACE, ReviewReport, reviewPasses, WorkerResult } from "../../src/scheduler/core/report.schema"
import { CoordinatorTools } from "../../src/tool/coordinator"

const clean = {
  lifetimes: { status: "checked", note: "no reference escapes" },
  rawPointers: { status: "not-applicable" },
  concurrency: { status: "not-applicable" },
  exceptions: { status: "not-applicable" },
  integerOverflow: { status: "checked" },
  undefinedBehaviour: { status: "checked" },
}
const row = { designRef: "T-1: done when", code: "src/calc.cpp:mul", status: "match", note: "" }
const reviewArgs = z.object(CoordinatorTools.build().air_review!.args)

describe("the reviewer's C++ checklist", () => {
  it("air_review requires every risk to be answered", () => {
    expect(reviewArgs.safeParse({ verdict: "pass", rows: [row], checklist: clean }).success).toBe(true)
    const missing = reviewArgs.safeParse({ verdict: "pass", rows: [row] })
    expect(missing.success).toBe(false)
    const { concurrency: _skip, ...partial } = clean
    const oneMissing = reviewArgs.safeParse({ verdict: "pass", rows: [row], checklist: partial })
    expect(oneMissing.success).toBe(false)
    if (!oneMissing.success) expect(oneMissing.error.issues[0]!.path).toEqual(["checklist", "concurrency"])
  })

  it("refuses a finding without file and line, with a message that tells the reviewer what to send", () => {
    for (const finding of [{ status: "finding", note: "dangling reference" }, { status: "finding", file: "src/calc.cpp", note: "dangling reference" }]) {
      const result = reviewArgs.safeParse({ verdict: "fail", rows: [row], checklist: { ...clean, lifetimes: finding } })
      expect(result.success).toBe(false)
      if (!result.success) {
        expect(result.error.issues[0]!.message).toBe(FINDING_NEEDS_PLACE)
        expect(result.error.issues[0]!.path.slice(0, 2)).toEqual(["checklist", "lifetimes"])
      }
    }
    expect(FINDING_NEEDS_PLACE).toMatch(/must name the file and the line/)
  })

  it("refuses an unknown risk and an unknown status (strict)", () => {
    expect(reviewArgs.safeParse({ verdict: "pass", rows: [row], checklist: { ...clean, memory: { status: "checked" } } }).success).toBe(false)
    expect(reviewArgs.safeParse({ verdict: "pass", rows: [row], checklist: { ...clean, lifetimes: { status: "ok" } } }).success).toBe(false)
  })

  it("a finding with its place fails a pass verdict; a clean checklist does not", () => {
    const withFinding = ReviewReport.parse({ taskId: "T-1", verdict: "pass", rows: [row], checklist: { ...clean, integerOverflow: { status: "finding", file: "src/calc.cpp", line: 7, note: "a * b overflows int" } } })
    expect(checklistFindings(withFinding)).toEqual(["integer overflow: src/calc.cpp:7 — a * b overflows int"])
    expect(reviewPasses(withFinding)).toBe(false)
    expect(reviewPasses(ReviewReport.parse({ taskId: "T-1", verdict: "pass", rows: [row], checklist: clean }))).toBe(true)
  })

  it("block-release is a verdict of its own, and never a pass", () => {
    const report = ReviewReport.parse({ taskId: "T-1", verdict: "block-release", rows: [row], checklist: clean })
    expect(reviewPasses(report)).toBe(false)
    expect(reviewArgs.safeParse({ verdict: "block-release", rows: [row], checklist: clean }).success).toBe(true)
  })

  it("a review logged before the checklist existed still reads", () => {
    expect(ReviewReport.safeParse({ taskId: "T-1", verdict: "pass", rows: [row], findings: [] }).success).toBe(true)
  })
})

describe("a worker's plan issue", () => {
  it("air_report takes a plan issue of a known kind with its detail", () => {
    const args = z.object(CoordinatorTools.build().air_report!.args)
    expect(args.safeParse({ summary: "stopped", planIssue: { kind: "missing-dependency", detail: "needs T-0's parser" } }).success).toBe(true)
    expect(args.safeParse({ summary: "stopped", planIssue: { kind: "vibes", detail: "x" } }).success).toBe(false)
    expect(args.safeParse({ summary: "stopped", planIssue: { kind: "interface", detail: "" } }).success).toBe(false)
    expect(WorkerResult.safeParse({ taskId: "T-1", role: "executor", summary: "", planIssue: { kind: "write-set", detail: "src/x.cpp too", extra: 1 } }).success).toBe(false)
  })
})
