import { z } from "zod"

/**
 * What a worker found wrong with the plan itself (not with its own work): the Architect hears it first and
 * answers with a plan delta, an ADR, or one question to the user.
 */
const PLAN_ISSUE_KINDS = ["missing-dependency", "write-set", "interface", "other"] as const

export const PlanIssue = z
  .object({
    kind: z.enum(PLAN_ISSUE_KINDS).describe("missing-dependency | write-set | interface | other"),
    detail: z.string().min(1).describe("what the plan gets wrong and what would fix it, e.g. 'needs T-0's parse() first'"),
  })
  .strict()
export type PlanIssue = z.infer<typeof PlanIssue>

/**
 * The Debugger's steps, as its report carries them: the symptom; the command that reproduced the failure
 * and what it printed — or, when it would not fail, every command tried (the report then goes to the
 * Architect, never to a blind fix); the root cause at a file and line; the fix; and the verification, the
 * failing command run again green after the last edit. The guard's record of the session's commands and
 * edits is what each step is checked against (src/agent/debug-steps.ts), not these words.
 */
export const DebugReport = z
  .object({
    symptom: z.string().min(1).describe("what fails, as the gate saw it, e.g. 'calc_test: expected 2, got 8'"),
    reproduction: z
      .object({
        command: z.string().min(1).describe("the command you ran that showed the failure, exactly as you ran it"),
        output: z.string().min(1).describe("the lines of its output that show the failure"),
      })
      .strict()
      .optional()
      .describe("the failure reproduced in this session, before your first edit"),
    notReproducible: z
      .object({
        tried: z.array(z.string().min(1)).min(1).describe("every command you ran trying to make it fail"),
        note: z.string().default("").describe("what you saw instead"),
      })
      .strict()
      .optional()
      .describe("only when the failure would not show: then change nothing, the Architect or the user decides"),
    rootCause: z
      .object({
        file: z.string().min(1).describe("repository path, e.g. src/calc.cpp"),
        line: z.number().int().min(1),
        explanation: z.string().min(1).describe("why that line makes the failure"),
      })
      .strict()
      .optional(),
    fix: z.string().min(1).optional().describe("what you changed, and why it removes the cause"),
    verification: z
      .object({
        command: z.string().min(1).describe("the failing command, run again after your last edit"),
        output: z.string().default("").describe("the lines of its output that show it passes"),
      })
      .strict()
      .optional(),
    pattern: z.string().min(1).optional().describe("the id of a repair pattern from your context that applied, or 'none'"),
  })
  .strict()
export type DebugReport = z.infer<typeof DebugReport>

/** A worker's report is a request for the gates, never a claim that the task is done. */
export const WorkerResult = z
  .object({
    taskId: z.string(),
    role: z.enum(["executor", "debugger"]),
    summary: z.string(),
    commits: z.array(z.string()).optional(),
    evidence: z.array(z.object({ kind: z.string(), detail: z.string() }).strict()).optional(),
    blocked: z.object({ reason: z.string().min(1) }).strict().optional(),
    planIssue: PlanIssue.optional(),
    /** The Debugger's steps (checked against the session's commands and edits before the report is taken). */
    debug: DebugReport.optional(),
  })
  .strict()
export type WorkerResult = z.infer<typeof WorkerResult>

export const ReviewRow = z
  .object({
    designRef: z.string().describe("the requirement, ADR or plan line the code must follow"),
    code: z.string().describe("file and symbol that implement it, e.g. src/parser.cpp:parseLine"),
    status: z.enum(["match", "divergent", "missing"]),
    note: z.string().default(""),
  })
  .strict()
export type ReviewRow = z.infer<typeof ReviewRow>

/** The C++ risks every review answers for the diff, in this order (002 §3.2.15). */
const CPP_RISKS = ["lifetimes", "rawPointers", "concurrency", "exceptions", "integerOverflow", "undefinedBehaviour"] as const
/**
 * The logging rows (issue 40, P1-18), answered after the C++ risks: the house rule's library is the one format
 * (`not-applicable` when the project's house rules name none, as a C++ risk is for a diff with no C++).
 */
const LOGGING_ROWS = ["loggingKeyPaths", "loggingFormat"] as const
/** Every row of the checklist, in the order the reviewer answers them: the C++ risks, then the logging rows. */
export const CHECKLIST_ROWS = [...CPP_RISKS, ...LOGGING_ROWS] as const
type ChecklistRow = (typeof CHECKLIST_ROWS)[number]

/** Each row's words, as the reviewer reads them (the tool's schema, the prompt's {{checklist_rows}}) and findings say them. */
export const CHECKLIST_LABELS: Record<ChecklistRow, string> = {
  lifetimes: "lifetimes and ownership",
  rawPointers: "raw pointers",
  concurrency: "concurrency",
  exceptions: "exceptions across boundaries",
  integerOverflow: "integer overflow",
  undefinedBehaviour: "undefined behaviour",
  loggingKeyPaths: "key paths logged (start-up, network, file I/O, errors)",
  loggingFormat: "one logging library and format",
}

/** What each row asks of the diff: the tool's schema and the reviewer's prompt ({{checklist_rows}}) say it from here. */
export const CHECKLIST_ASKS: Record<ChecklistRow, string> = {
  lifetimes: "ownership, dangling references or iterators, use after move or free",
  rawPointers: "owning raw pointers, new/delete pairs, null checks, pointer arithmetic",
  concurrency: "shared state, locks, data races, atomics",
  exceptions: "exceptions crossing a module, thread or C boundary, noexcept, exception safety",
  integerOverflow: "signed overflow, narrowing, mixed signed/unsigned arithmetic",
  undefinedBehaviour: "out-of-bounds access, uninitialised reads, aliasing, shifts",
  loggingKeyPaths: "the code the diff adds logs its start-up, network, file I/O and errors through the house rule's library",
  loggingFormat: "one logging library and one format: no second library, no bare prints, the levels the rule's calls give; not-applicable when the house rules name no logging library",
}

export const FINDING_NEEDS_PLACE =
  'a checklist finding must name the file and the line it is about, e.g. { "status": "finding", "file": "src/calc.cpp", "line": 12, "note": "returns a reference to a local" }; if you cannot point at a line, the row is "checked" with a note'

/**
 * One risk, answered for the diff: it does not arise (not-applicable), it was looked at and is fine
 * (checked), or a finding at a file and line. A finding without its place is refused: the executor must be
 * able to go to it.
 */
const ChecklistItem = z
  .object({
    status: z.enum(["not-applicable", "checked", "finding"]),
    file: z.string().min(1).optional().describe("repository path of the finding, e.g. src/calc.cpp"),
    line: z.number().int().min(1).optional().describe("line of the finding in that file"),
    note: z.string().default("").describe("what was checked, or what is wrong and why"),
  })
  .strict()
  .superRefine((item, ctx) => {
    if (item.status !== "finding") return
    if (item.file === undefined || item.line === undefined)
      ctx.addIssue({ code: "custom", path: item.file === undefined ? ["file"] : ["line"], message: FINDING_NEEDS_PLACE })
    if (item.note.trim().length === 0) ctx.addIssue({ code: "custom", path: ["note"], message: "a checklist finding must say what is wrong in its note" })
  })
type ChecklistItem = z.infer<typeof ChecklistItem>

const rowShape = (rows: readonly ChecklistRow[]) => Object.fromEntries(rows.map((row) => [row, ChecklistItem.describe(`${CHECKLIST_LABELS[row]}: ${CHECKLIST_ASKS[row]}`)]))

/** The checklist the review tool takes: every row answered. */
export const Checklist = z.object(rowShape(CHECKLIST_ROWS) as Record<ChecklistRow, typeof ChecklistItem>).strict()
export type Checklist = z.infer<typeof Checklist>

/** A checklist as a log holds it: reviews recorded before the logging rows existed have only the C++ risks. */
const RecordedChecklist = z
  .object({
    ...(rowShape(CPP_RISKS) as Record<(typeof CPP_RISKS)[number], typeof ChecklistItem>),
    ...(Object.fromEntries(LOGGING_ROWS.map((row) => [row, ChecklistItem.optional()])) as Record<(typeof LOGGING_ROWS)[number], z.ZodOptional<typeof ChecklistItem>>),
  })
  .strict()

/**
 * `block-release`: the change must not land whatever the executor does next (it breaks a decision, an
 * interface other work relies on, or a release rule): the merge stops and the Architect is consulted.
 */
export const REVIEW_VERDICTS = ["pass", "fail", "block-release"] as const

export const ReviewReport = z
  .object({
    taskId: z.string(),
    verdict: z.enum(REVIEW_VERDICTS),
    rows: z.array(ReviewRow),
    findings: z.array(z.string()).default([]),
    /** Absent only in logs written before the checklist existed (its logging rows, before they did); the review tool requires every row. */
    checklist: RecordedChecklist.optional(),
  })
  .strict()
export type ReviewReport = z.infer<typeof ReviewReport>

/** The checklist's findings, one line each: "integer overflow: src/calc.cpp:12 — a * b overflows int". */
export function checklistFindings(report: ReviewReport): string[] {
  const checklist = report.checklist
  if (!checklist) return []
  return CHECKLIST_ROWS.flatMap((row) => {
    const item = checklist[row]
    return item?.status === "finding" ? [`${CHECKLIST_LABELS[row]}: ${item.file}:${item.line} — ${item.note}`] : []
  })
}

/** A review passes only when the verdict says so, no row disagrees with it and the checklist found nothing. */
export function reviewPasses(report: ReviewReport): boolean {
  return report.verdict === "pass" && report.rows.every((row) => row.status === "match") && checklistFindings(report).length === 0
}

/** The designRef of a ui task's row for one section of the UI design skill. */
export function uiSkillRef(section: string): string {
  return `UI skill: ${section}`
}

/** The skill's sections a report has no row for (designRef "UI skill: <section>", case and spaces aside). */
export function missingUiRows(report: ReviewReport, sections: readonly string[]): string[] {
  const norm = (text: string) => text.trim().replace(/\s+/g, " ").toLowerCase()
  const refs = new Set(report.rows.map((row) => norm(row.designRef)))
  return sections.filter((section) => !refs.has(norm(uiSkillRef(section))))
}
