import { z } from "zod"

/** A worker's report is a request for the gates, never a claim that the task is done. */
export const WorkerResult = z
  .object({
    taskId: z.string(),
    role: z.enum(["executor", "debugger"]),
    summary: z.string(),
    commits: z.array(z.string()).optional(),
    evidence: z.array(z.object({ kind: z.string(), detail: z.string() }).strict()).optional(),
    blocked: z.object({ reason: z.string().min(1) }).strict().optional(),
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

export const ReviewReport = z
  .object({
    taskId: z.string(),
    verdict: z.enum(["pass", "fail"]),
    rows: z.array(ReviewRow),
    findings: z.array(z.string()).default([]),
  })
  .strict()
export type ReviewReport = z.infer<typeof ReviewReport>

/** A review passes only when the verdict says so and no row disagrees with it. */
export function reviewPasses(report: ReviewReport): boolean {
  return report.verdict === "pass" && report.rows.every((row) => row.status === "match")
}
