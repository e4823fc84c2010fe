import { existsSync, readFileSync } from "node:fs"
import { questionText } from "../../../text/question-text"
import { relative } from "node:path"
import type { Question, SchedulerState } from "../../core/state"
import { FinalCheck } from "../integration/final-check"
import { Usage } from "../sessions/usage"
import { Budget } from "../sessions/budget"
import { headlessEnd, runWord, type RunWord } from "../../../text/run-status"
import { list, t, tOr, type Lang } from "../../../text/words"
import { DeployLines } from "../../../text/deploy-lines"
import { durationText } from "../../../text/duration"
import { MoneyLines } from "../../../text/money-lines"
import { AirPaths } from "../../core/air-paths"

/** How a run looks to people and to CI: status lines, the end-of-run text, the JSON summary. */
export namespace RunReport {
  export type Summary = {
    /** The one run status word (src/text/run-status.ts), or "error" when the run could not be read. */
    status: RunWord | "error"
    runId: string | null
    stage: string
    tasks: { id: string; title: string; state: string; attempts: number; repairs: number; evidence: string[] }[]
    /** `cause` and `answers`: set on a question asked because a session failed (worded per language by questionText). */
    questions: { questionId: string; text: string; cause?: Question["cause"]; answers?: string[] }[]
    modelRequests: Record<string, number>
    evidenceRoot: string
    /** The Scheduler's own build and test run of the integration branch after the last merge. */
    final: FinalCheck.Result | null
    /** What the run spent against its budgets: requests, tokens (where the provider reports them), minutes; requests by task. */
    spent?: { requests: number; tokens: number; minutes: number; byTask: Record<string, number> }
    /** What the run cost in USD as the engine priced it: per task, role and session; unpriced requests apart. */
    money?: MoneyLines.Money
    /** Per deploy target of a deployable run: deployed commit, hash match, service state, smoke, rolled back. */
    deploy?: DeployLines.Target[]
  }

  export function runInfo(root: string): { runId: string; integration: string; mainSessionID: string } | undefined {
    const file = AirPaths.state(root, "run.json")
    if (!existsSync(file)) return undefined
    try {
      return JSON.parse(readFileSync(file, "utf8"))
    } catch {
      return undefined
    }
  }

  function evidenceOf(root: string, taskId: string): string[] {
    const dir = AirPaths.evidence(root, taskId)
    if (!existsSync(dir)) return []
    return [relative(root, dir)]
  }

  export function summary(root: string, state: SchedulerState): Summary {
    const titles = new Map((state.graph?.tasks ?? []).map((t) => [t.id, t.title]))
    const status: Summary["status"] = runWord(state)
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
      questions: state.questions.map((q) => ({ questionId: q.questionId, text: q.text, ...(q.cause ? { cause: q.cause, answers: q.answers } : {}) })),
      modelRequests: Usage.byAgent(root),
      spent: spentOf(state),
      money: MoneyLines.of(state),
      evidenceRoot: AirPaths.EVIDENCE,
      final: FinalCheck.read(root) ?? null,
      ...(state.deploy ? { deploy: DeployLines.of(state) } : {}),
    }
  }

  /**
   * The tasks that merged while a question waited (issue 39 item 8): after the task of the earliest open
   * task question was blocked, from the tasks' histories. Questions of no task (a baseline, a step) hold the
   * whole run, so nothing merges past them; with none of a task open the list is empty.
   */
  export function mergedMeanwhile(state: SchedulerState): string[] {
    const byId = new Map(state.tasks.map((t) => [t.id, t]))
    const asked = state.questions.flatMap((q) => {
      const at = q.taskId === null ? undefined : byId.get(q.taskId)?.history.findLast((h) => h.to === "blocked")?.at
      return at === undefined ? [] : [Date.parse(at)]
    })
    if (asked.length === 0) return []
    const since = Math.min(...asked)
    return state.tasks.filter((t) => t.status === "merged" && t.history.some((h) => h.to === "merged" && Date.parse(h.at) >= since)).map((t) => t.id)
  }

  function spentOf(state: SchedulerState): Summary["spent"] {
    const s = Budget.spent(state, Date.now())
    return { requests: s.run.requests, tokens: s.run.tokens, minutes: s.run.minutes, byTask: Object.fromEntries(Object.entries(s.tasks).map(([id, t]) => [id, t.requests])) }
  }

  /** One line on where the run stands, in the catalogue's words ("run status: running — tasks: 1 merged, 2 pending."). */
  export function progressLine(state: SchedulerState, lang: Lang = "en"): string {
    const counts = new Map<string, number>()
    for (const task of state.tasks) counts.set(task.status, (counts.get(task.status) ?? 0) + 1)
    const parts = [...counts].map(([s, n]) => t(lang, "progress.count", { n, state: tOr(lang, `state.${s}`, s) }))
    return t(lang, "progress.run", {
      status: t(lang, `status.${runWord(state)}`),
      tasks: parts.length ? t(lang, "progress.tasks", { counts: parts.join(lang === "zh-CN" ? "，" : ", ") }) : "",
    })
  }

  /**
   * What `aircoding run` prints when it ends, in the catalogue's words: the status, each task, the
   * model requests, the final check, where the evidence is, and the questions left for the user.
   */
  export function summaryText(s: Summary, lang: Lang, wallTimeMs?: number): string {
    const lines: string[] = []
    if (s.runId) {
      lines.push(t(lang, "summary.header", { runId: s.runId, status: t(lang, `status.${s.status}`), seconds: ((wallTimeMs ?? 0) / 1000).toFixed(1) }))
      for (const task of s.tasks)
        lines.push(`  ${task.id.padEnd(6)} ` + t(lang, "summary.task", { state: tOr(lang, `state.${task.state}`, task.state), attempts: task.attempts, title: task.title }))
      const requests = Object.entries(s.modelRequests).map(([a, n]) => `${tOr(lang, `role.${a}`, a)} ${n}`)
      if (requests.length) lines.push("  " + t(lang, "summary.requests", { list: list(lang, requests) }))
      if (s.money && MoneyLines.worthSaying(s.money)) lines.push("  " + t(lang, "summary.cost", { cost: MoneyLines.short(lang, s.money) }))
      if (s.final) lines.push("  " + finalLine(lang, s.final, s.final.evidenceDir))
      for (const line of DeployLines.section(lang, s.deploy)) lines.push(`  ${line}`)
      lines.push("  " + t(lang, "end.evidence", { path: `${s.evidenceRoot}/<task-id>/` }))
    }
    for (const q of s.questions) lines.push(t(lang, "summary.question", { questionId: q.questionId, text: questionText(q, lang) }))
    return lines.join("\n")
  }

  /** The final check in one line; a pass that reused a recorded result (runtime/results/) says so. */
  function finalLine(lang: Lang, final: FinalCheck.Result, path: string): string {
    if (!final.passed) return t(lang, "end.final.failed", { path })
    return final.reused ? t(lang, "end.final.reused", { saved: durationText(final.reused.savedMs) }) : t(lang, "end.final.passed")
  }

  /**
   * The end's news for an air_listen answer, unless the inbox already carries it. Only once the final check
   * is recorded: a run is "finished" when its last task merges, before the check of the integration branch
   * ends, and an end told then would lack the check's verdict (and a failing check would make "done" a lie).
   * The interpreter pushes RUN ENDED when the check is in.
   */
  export function endNews(root: string, state: SchedulerState, items: readonly string[]): string[] {
    if (items.some((i) => i.startsWith("RUN ENDED"))) return []
    if (state.finished && headlessEnd(state) !== "ended")
      return ["Every task has ended; the final check of the integration branch is running. Its verdict comes as RUN ENDED: do not tell the user the run is over before it."]
    return headlessEnd(state) === "ended" ? [endText(root, state)] : []
  }

  /**
   * The end-of-run text. English by default: Main reads it and speaks to the user in their language
   * (the inbox recognises its first line); a view that prints it to a person passes the language.
   */
  export function endText(root: string, state: SchedulerState, lang: Lang = "en"): string {
    const s = summary(root, state)
    const lines = [t(lang, "run.ended", { status: t(lang, `status.${s.status}`) })]
    for (const task of s.tasks)
      lines.push(t(lang, "end.task", { id: task.id, title: task.title, state: tOr(lang, `state.${task.state}`, task.state), attempts: task.attempts }))
    if (s.final) lines.push(finalLine(lang, s.final, relative(root, s.final.evidenceDir) || s.final.evidenceDir))
    lines.push(...DeployLines.section(lang, s.deploy))
    lines.push(t(lang, "end.evidence", { path: `${s.evidenceRoot}/<task-id>/` }))
    return lines.join("\n")
  }
}
