import { basename } from "node:path"
import type { StoredEvent } from "../../core/event.schema"
import type { Question, SchedulerState } from "../../core/state"
import { questionText } from "../../../text/question-text"
import { RunReport } from "../report/run-report"
import { RunHolder } from "../store/run-holder"
import { t, type Lang } from "../../../text/words"
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
    for (const spent of budgetsSpent(before, after)) {
      const task = spent.taskId ? t(ctx.lang, "notify.budget.task", { id: spent.taskId }) : ""
      const kind = spent.kind ? t(ctx.lang, `budget.kind.${spent.kind}`) : ""
      out.push(notice("budget", `${event.seq}:${spent.taskId ?? "run"}`, t(ctx.lang, "notify.budget", { runId, kind, task, command: statusCommand(ctx.root) })))
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

  type Spent = { taskId?: string; kind?: "requests" | "tokens" | "cost" | "minutes" }
  const KINDS = new Set(["requests", "tokens", "cost", "minutes"])
  const kindOf = (word: string | undefined) => (word && KINDS.has(word) ? { kind: word as NonNullable<Spent["kind"]> } : {})

  /**
   * The budgets this event spent, as the machine decided them (from usage.recorded, a timer, or budget.spent): the
   * run's when it became spent, a task's when it was blocked for its budget (the machine's note names the kind).
   */
  function budgetsSpent(before: SchedulerState, after: SchedulerState): Spent[] {
    const out: Spent[] = []
    if (after.runBudgetSpent && !before.runBudgetSpent) {
      const note = after.tasks.flatMap((task) => task.history).findLast((h) => /^run \w+ budget spent/.test(h.note ?? ""))?.note
      out.push(kindOf(/^run (\w+) budget/.exec(note ?? "")?.[1]))
    }
    after.tasks.forEach((task, i) => {
      const added = task.history.slice(before.tasks[i]?.id === task.id ? before.tasks[i]!.history.length : task.history.length)
      const spent = added.find((h) => h.to === "blocked" && /^its \w+ budget is spent/.test(h.note ?? ""))
      if (spent) out.push({ taskId: task.id, ...kindOf(/^its (\w+) budget/.exec(spent.note!)?.[1]) })
    })
    return out
  }

  function question(q: Question, runId: string, ctx: Context): string {
    const asked = t(ctx.lang, "notify.question", { runId, questionId: q.questionId, text: questionText(q, ctx.lang) })
    const resume = ctx.resumeCommand ?? RunHolder.defaultResume(ctx.root)
    const how = ctx.interactive
      ? t(ctx.lang, "notify.answer.tui", { command: resume })
      : t(ctx.lang, "notify.answer.headless", { command: `${resume} --answer '${q.questionId}: ${q.answers?.[0] ?? "<your answer>"}'` })
    return `${asked}\n${how}`
  }

  function statusCommand(root: string): string {
    return RunHolder.defaultResume(root).replace(/ run (.*) --resume$/, " status $1")
  }
}
