import type { z, ZodType } from "zod"
import type { GateContext, GateOutcome } from "./gate.ts"

/**
 * A ui or service task's program field, read for the gate that checks it: absent (not this gate's kind of task:
 * nothing to run), its spec, or the plan's fault said in words — a failure only the Architect or a person can
 * mend (`plan`: a person), never the code's. The plan is refused for such a field before any gate runs
 * (registry `programProblems`); this is the gate's own guard against a field that changed since.
 */
export function programSpec<S extends ZodType>(ctx: GateContext, field: "ui" | "service", schema: S, nothing: string, needs: string): { spec: z.output<S> } | { outcome: GateOutcome } {
  const raw = ctx.program?.[field]
  if (raw === undefined) return { outcome: { ran: false, summary: `${nothing} in a ${ctx.kind} task` } }
  const parsed = schema.safeParse(raw)
  if (parsed.success) return { spec: parsed.data }
  const summary = `the task's ${field} field is not valid: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`
  return { outcome: { ran: false, summary, failure: { gate: "plan", summary, message: `${ctx.label}: ${summary}. The plan must say ${needs}.` } } }
}
