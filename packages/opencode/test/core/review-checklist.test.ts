import { describe, expect, it } from "vitest"
import { z } from "zod"
import { CHECKLIST_ROWS, checklistFindings, FINDING_NEEDS_PLACE, ReviewReport, reviewPasses, WorkerResult } from "../../src/scheduler/core/report.schema"
import { transition } from "../../src/scheduler/core/machine"
import { CoordinatorTools } from "../../src/tool/coordinator"
import { Vocabulary } from "../../src/agent/vocabulary"
import { Prompt } from "../../src/agent/prompt"
import { apply, ev, graphOf, started, statusOf, steps, task, type EventInput } from "../scheduler/fixtures"

const clean = {
  lifetimes: { status: "checked", note: "no reference escapes" },
  rawPointers: { status: "not-applicable" },
  concurrency: { status: "not-applicable" },
  exceptions: { status: "not-applicable" },
  integerOverflow: { status: "checked" },
  undefinedBehaviour: { status: "checked" },
  loggingKeyPaths: { status: "not-applicable" },
  loggingFormat: { status: "not-applicable" },
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

describe("the reviewer's logging rows (issue 40)", () => {
  const { loggingKeyPaths: _paths, loggingFormat: _format, ...cppOnly } = clean

  it("air_review refuses a checklist without them, naming each; with them it is taken", () => {
    const refused = reviewArgs.safeParse({ verdict: "pass", rows: [row], checklist: cppOnly })
    expect(refused.success).toBe(false)
    if (!refused.success) expect(refused.error.issues.map((issue) => issue.path.join("."))).toEqual(["checklist.loggingKeyPaths", "checklist.loggingFormat"])
    expect(reviewArgs.safeParse({ verdict: "pass", rows: [row], checklist: clean }).success).toBe(true)
  })

  it("a project without a logging rule answers them not-applicable; a finding on one fails the review like a C++ risk", () => {
    expect(clean.loggingKeyPaths.status).toBe("not-applicable")
    const finding = { ...clean, loggingFormat: { status: "finding", file: "src/net.cpp", line: 4, note: "prints with printf beside spdlog" } }
    expect(reviewArgs.safeParse({ verdict: "fail", rows: [row], checklist: finding }).success).toBe(true)
    const report = ReviewReport.parse({ taskId: "T-1", verdict: "pass", rows: [row], checklist: finding })
    expect(checklistFindings(report)).toEqual(["one logging library and format: src/net.cpp:4 — prints with printf beside spdlog"])
    expect(reviewPasses(report)).toBe(false)
  })

  it("a review logged before the logging rows existed still reads, and passes as it did", () => {
    const old = ReviewReport.safeParse({ taskId: "T-1", verdict: "pass", rows: [row], findings: [], checklist: cppOnly })
    expect(old.success).toBe(true)
    if (old.success) expect(reviewPasses(old.data)).toBe(true)
  })

  it("the reviewer's prompt and air_review's description list the rows from the schema, never by hand", () => {
    const rows = Vocabulary.checklistRows()
    for (const key of CHECKLIST_ROWS) expect(rows).toContain(`\`${key}\``)
    expect(Prompt.load("reviewer", "en")).toContain(rows)
    expect(CoordinatorTools.build().air_review!.description).toContain(rows)
    const drifted = Prompt.raw("reviewer").replace("{{checklist_rows}}", "`lifetimes`, `rawPointers`, `concurrency`")
    expect(Prompt.problems("reviewer", drifted)).toEqual(['the checklist\'s rows are listed by hand ("lifetimes, rawPointers, concurrency"): say {{checklist_rows}}'])
  })
})

describe("a ui task's review answers every section of the UI design skill", () => {
  const sections = ["Layout", "Typography", "Keyboard access"]
  const ui = graphOf(task("T-1", { kind: "ui", ui: { command: "build/app" } }), task("T-2"))
  const reviewing = () => apply(started(ui).state, steps.dispatched("T-1"), steps.reported("T-1"), { type: "gates.passed", taskId: "T-1", evidence: { diff: "d" }, requires: ["diff"] }).state
  const review = (refs: string[], uiSkillSections: string[] | null = sections): EventInput => ({
    type: "review.reported",
    taskId: "T-1",
    report: ReviewReport.parse({ taskId: "T-1", verdict: "pass", rows: [row, ...refs.map((designRef) => ({ ...row, designRef }))], checklist: clean }),
    ...(uiSkillSections ? { uiSkillSections } : {}),
  })

  it("refuses a review without a row for each section, naming those it lacks", () => {
    const result = transition(reviewing(), ev(review(["UI skill: Layout"])))
    expect("refused" in result && result.refused).toMatch(/ui task: its review needs one row per section of the UI design skill, and has none for "UI skill: Typography", "UI skill: Keyboard access"/)
  })

  it("takes one with every section (case and spacing aside), and the task merges", () => {
    const state = apply(reviewing(), review(["UI skill: Layout", "ui skill:  typography", "UI skill: Keyboard access"])).state
    expect(statusOf(state, "T-1")).toBe("merging")
  })

  it("a code task's review, and a review logged before the rule (no sections on the event), are not held to it", () => {
    const code = graphOf(task("T-1"), task("T-2"))
    const codeReviewing = apply(started(code).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1")).state
    expect(statusOf(apply(codeReviewing, review([])).state, "T-1")).toBe("merging")
    expect(statusOf(apply(reviewing(), review([], null)).state, "T-1")).toBe("merging")
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
