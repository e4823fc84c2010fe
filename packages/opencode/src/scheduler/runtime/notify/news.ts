import { basename } from "node:path"
import type { StoredEvent } from "../../core/event.schema"
import type { Question, SchedulerState } from "../../core/state"
import { questionText } from "../../../read/question-text"
import { RunReport } from "../../../read/run-report"
import { RunLiveness } from "../../../read/run-liveness"
import { t, type Lang } from "../../../read/words"
import type { NotifyConfig } from "./config"

/**
 * What a person is told of one event of the log, in the run's language: a question that now waits (with the
 * command or TUI step that answers it), the run's end, a rolled-back deploy, a spent budget, a rate-limit pause
 * over a minute. Pure but for the words: the notifier folds the log and asks this of every event it appends.
 */
export namespace News {
  export type Notice = {
    /** The same on every replay of the log: what the record of sent notifications is keyed by. */
    key: string
    event: NotifyConfig.EventKind
    title: string
    text: string
  }

  /** How the person answers: headless (`aircoding run … --resume --answer`) or in the TUI (`/air-answer`). */
  export type Context = { root: string; lang: Lang; interactive: boolean; resumeCommand?: string }

  const LONG_PAUSE_MS = 60_000

  export function of(before: SchedulerState, after: SchedulerState, event: StoredEvent, ctx: Context): Notice[] {
    const runId = after.runId ?? ""
    const title = t(ctx.lang, "notify.title", { project: basename(ctx.root) })
    const notice = (event: NotifyConfig.EventKind, id: string, text: string): Notice => ({ key: `${runId}:${event}:${id}`, event, title, text })
    const out: Notice[] = []
    const known = new Set(before.questions.map((q) => q.questionId))
    for (const q of after.questions) if (!known.has(q.questionId)) out.push(notice("question", q.questionId, question(q, runId, ctx)))
    // A run blocked on a question waits rather than failed: the question's notice says what it needs.
    if (after.finished && !before.finished && (after.finished.status === "done" || after.questions.length === 0)) {
      const progress = RunReport.progressLine(after, ctx.lang)
      out.push(
        after.finished.status === "done"
          ? notice("done", String(event.seq), t(ctx.lang, "notify.done", { runId, progress }))
          : notice("failed", String(event.seq), t(ctx.lang, "notify.failed", { runId, progress, command: statusCommand(ctx.root) })),
      )
    }
    if (event.type === "deploy.failed" && event.rolledBack)
      out.push(
        notice("rolledBack", String(event.seq), t(ctx.lang, "notify.rolledBack", { commit: (event.commit ?? "?").slice(0, 12), target: event.target, cause: event.cause, message: event.message })),
      )
    if (event.type === "budget.spent") {
      const task = event.taskId ? t(ctx.lang, "notify.budget.task", { id: event.taskId }) : ""
      out.push(notice("budget", String(event.seq), t(ctx.lang, "notify.budget", { runId, kind: t(ctx.lang, `budget.kind.${event.kind}`), task, command: statusCommand(ctx.root) })))
    }
    if (event.type === "rate.limited") {
      const ms = Date.parse(event.until) - Date.parse(event.at)
      if (ms > LONG_PAUSE_MS)
        out.push(notice("rateLimit", String(event.seq), t(ctx.lang, "notify.rateLimit", { runId, minutes: Math.round(ms / 6_000) / 10, until: event.until, message: event.message })))
    }
    return out
  }

  /** The questions waiting now, as notices: what a notifier started on a run already under way has to tell. */
  export function waiting(state: SchedulerState, ctx: Context): Notice[] {
    const runId = state.runId ?? ""
    const title = t(ctx.lang, "notify.title", { project: basename(ctx.root) })
    return state.questions.map((q) => ({ key: `${runId}:question:${q.questionId}`, event: "question" as const, title, text: question(q, runId, ctx) }))
  }

  function question(q: Question, runId: string, ctx: Context): string {
    const asked = t(ctx.lang, "notify.question", { runId, questionId: q.questionId, text: questionText(q, ctx.lang) })
    const resume = ctx.resumeCommand ?? RunLiveness.defaultResume(ctx.root)
    const how = ctx.interactive
      ? t(ctx.lang, "notify.answer.tui", { command: resume })
      : t(ctx.lang, "notify.answer.headless", { command: `${resume} --answer '${q.questionId}: ${q.answers?.[0] ?? "<your answer>"}'` })
    return `${asked}\n${how}`
  }

  function statusCommand(root: string): string {
    return RunLiveness.defaultResume(root).replace(/ run (.*) --resume$/, " status $1")
  }
}
