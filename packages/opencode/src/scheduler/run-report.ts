import { existsSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import type { SchedulerState } from "./state"
import { FinalCheck } from "./final-check"
import { Usage } from "./usage"
import { Budget } from "./budget"

/** How a run looks to people and to CI: status lines, the end-of-run text, the JSON summary. */
export namespace RunReport {
  export type Summary = {
    status: "done" | "blocked" | "waiting" | "running" | "idle" | "error"
    runId: string | null
    stage: string
    tasks: { id: string; title: string; state: string; attempts: number; repairs: number; evidence: string[] }[]
    questions: { questionId: string; text: string }[]
    modelRequests: Record<string, number>
    evidenceRoot: string
    /** The Scheduler's own build and test run of the integration branch after the last merge. */
    final: FinalCheck.Result | null
    /** What the run spent against its budgets: requests, tokens (where the provider reports them), minutes; requests by task. */
    spent?: { requests: number; tokens: number; minutes: number; byTask: Record<string, number> }
  }

  export function runInfo(root: string): { runId: string; integration: string; mainSessionID: string } | undefined {
    const file = join(root, ".air", "local", "state", "run.json")
    if (!existsSync(file)) return undefined
    try {
      return JSON.parse(readFileSync(file, "utf8"))
    } catch {
      return undefined
    }
  }

  function evidenceOf(root: string, taskId: string): string[] {
    const dir = join(root, ".air", "local", "evidence", taskId)
    if (!existsSync(dir)) return []
    return [relative(root, dir)]
  }

  export function summary(root: string, state: SchedulerState): Summary {
    const titles = new Map((state.graph?.tasks ?? []).map((t) => [t.id, t.title]))
    const status: Summary["status"] = state.finished
      ? state.finished.status
      : state.questions.length || state.stage === "confirming"
        ? "waiting"
        : state.stage === "idle"
          ? "idle"
          : "running"
    return {
      status,
      runId: state.runId,
      stage: state.stage,
      tasks: state.tasks.map((t) => ({
        id: t.id,
        title: titles.get(t.id) ?? t.id,
        state: t.status,
        attempts: t.attempts,
        repairs: t.repairs,
        evidence: evidenceOf(root, t.id),
      })),
      questions: state.questions.map((q) => ({ questionId: q.questionId, text: q.text })),
      modelRequests: Usage.byAgent(root),
      spent: spentOf(root),
      evidenceRoot: ".air/local/evidence",
      final: FinalCheck.read(root) ?? null,
    }
  }

  function spentOf(root: string): Summary["spent"] {
    const s = Budget.spent(root, Budget.readEvents(root), Date.now())
    return { requests: s.run.requests, tokens: s.run.tokens, minutes: s.run.minutes, byTask: Object.fromEntries(Object.entries(s.tasks).map(([id, t]) => [id, t.requests])) }
  }

  export function progressLine(state: SchedulerState): string {
    const counts = new Map<string, number>()
    for (const t of state.tasks) counts.set(t.status, (counts.get(t.status) ?? 0) + 1)
    const parts = [...counts].map(([s, n]) => `${n} ${s}`)
    return `Stage: ${state.stage}${parts.length ? ` — tasks: ${parts.join(", ")}` : ""}.`
  }

  export function endText(root: string, state: SchedulerState): string {
    const s = summary(root, state)
    const lines = [`RUN ENDED: ${s.status}.`]
    for (const t of s.tasks) lines.push(`- ${t.id} ${t.title}: ${t.state} after ${t.attempts} attempt(s)`)
    if (s.final) lines.push(`Final check: ${s.final.summary}.`)
    lines.push(`Evidence: ${s.evidenceRoot}/<task-id>/`)
    return lines.join("\n")
  }
}
