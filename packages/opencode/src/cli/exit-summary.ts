import type { SchedulerState } from "../scheduler/core/state"
import { PlanView } from "../text/plan-view"
import { questionText } from "../text/question-text"
import { RunReport } from "../scheduler/runtime/report/run-report"
import { runStatus, type Waiting } from "../text/run-status"
import { list, t, type Lang } from "../text/words"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * What `aircoding run` adds to its summary when the run stops for a person (issue 39 items 7 and 8): what it
 * waits for, each open question with the command that answers it, what merged while the questions waited,
 * and a plan to confirm as the dialog shows it (its tasks with their files, its decisions).
 */
export namespace ExitSummary {
  export type Plan = { summary: string; file: string; graph: SchedulerState["graph"] | SchedulerState["proposedGraph"]; adrs: PlanView.Adr[] }

  export type Waits = {
    waitingFor: Waiting[]
    /** Each open question and the command that answers it (the answer named by the question's id). */
    answerWith?: { questionId: string; command: string }[]
    /** The tasks merged while the questions waited. */
    meanwhile?: { merged: string[] }
    plan?: Plan
  }

  /** `resume`: the command that resumes this run as it was started (its flags, its scenario). */
  export function waits(root: string, state: SchedulerState | undefined, resume: string): Waits | {} {
    if (!state || !runStatus(state).needsUser) return {}
    const out: Waits = { waitingFor: runStatus(state).waitingFor.filter((w) => w.kind === "confirm" || w.kind === "question") }
    if (state.questions.length) {
      out.answerWith = state.questions.map((q) => ({ questionId: q.questionId, command: `${resume} --answer "${q.questionId}: <your answer>"` }))
      out.meanwhile = { merged: RunReport.mergedMeanwhile(state) }
    }
    if (state.stage === "confirming")
      out.plan = { summary: state.planSummary ?? "", file: AirPaths.PLAN_FILE, graph: state.graph ?? state.proposedGraph ?? null, adrs: PlanView.adrs(root) }
    return out
  }

  type Shown = Pick<RunReport.Summary, "questions"> & Partial<Waits>

  /** Each question as a person reads it, the command that answers it under it, then what merged meanwhile. */
  export function questionLines(s: Shown, lang: Lang): string[] {
    const lines: string[] = []
    for (const q of s.questions) {
      lines.push(t(lang, "summary.question", { questionId: q.questionId, text: questionText(q, lang) }))
      const command = s.answerWith?.find((a) => a.questionId === q.questionId)?.command
      if (command) lines.push(t(lang, "summary.answerWith", { command }))
    }
    if (s.meanwhile && s.questions.length)
      lines.push(s.meanwhile.merged.length ? t(lang, "summary.meanwhile", { ids: list(lang, s.meanwhile.merged) }) : t(lang, "summary.meanwhile.none"))
    return lines
  }

  /** The plan that waits: its summary, then its tasks with their files and its decisions, as in the dialog. */
  export function planLines(plan: Plan | undefined, lang: Lang, width = 100): string[] {
    const head = t(lang, "summary.plan.waits", { file: plan?.file ?? AirPaths.PLAN_FILE, summary: plan?.summary ?? "" })
    const body = PlanView.lines(plan?.graph, (plan?.adrs ?? []).map(PlanView.adrTitle), lang, width).map((l) => `  ${l.text}`)
    return [head, ...body]
  }

}
