import { z } from "zod"

/**
 * An analyser's finding, as report.json and the analysis results store keep it. Here, below the gates that
 * report findings (gates/schema.ts re-exports it), so the results store records them without importing the gates.
 */
export const Severity = z.enum(["error", "warning", "style", "performance", "portability", "information"])
export const Finding = z.object({
  file: z.string(),
  line: z.number().int(),
  severity: Severity,
  id: z.string(),
  message: z.string(),
  /** The analyser that reported it (cppcheck when absent: reports written before clang-tidy). */
  tool: z.string().optional(),
  /** The same finding was already in the file at the task's base commit: recorded, never the task's fault. */
  inherited: z.boolean().optional(),
})
export type Finding = z.infer<typeof Finding>
