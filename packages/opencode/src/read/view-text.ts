import type { SchedulerState } from "../scheduler/core/state"
import { isBookkeepingGate, isShippedGate } from "./gate-descriptors"
import { failureText } from "./gate-words"
import { Labels } from "./labels"
import type { RunView } from "./view"
import type { CheckReuse } from "./check-reuse"
import { runStatus } from "../text/run-status"
import { TerminalText } from "../text/terminal-text"
import { t, tCount, type Lang } from "../text/words"
import { durationText } from "../text/duration"
import { MoneyLines } from "../text/money-lines"

/**
 * The status view's lines and phrases, each on its own: a task's gates, its last failure, a running gate's
 * progress, what the run waits for, a retry, the budgets. The terminal page (view-render.ts), the TUI and the
 * dashboard compose them; each takes a view built by `RunView.build`, or a part of one.
 */
export namespace ViewText {
  type Task = RunView.Task
  type Status = RunView.Status
  type GateLine = RunView.GateLine
  type Progress = RunView.Progress
  type CheckProgress = RunView.CheckProgress
  type Waiting = RunView.Waiting
  type Retry = RunView.Retry

  /** A task's evidence files, a line each under the directory they are in: whole, never cut (a path is copied as it stands). */
  export function evidenceLines(lang: Lang, task: Pick<Task, "id" | "evidence">): string[] {
    const e = task.evidence
    if (!e) return []
    return [`  ${t(lang, "tasks.evidence", { id: task.id, n: e.gateRun, dir: e.dir })}`, ...e.files.map((f) => `    ${t(lang, `evidence.${f.kind}`)}: ${f.rel}`)]
  }

  /** "T-2: the executor's model call retries at 10:04:05", "the architect's model call retries at …", "model calls paused until …". */
  export function retryText(lang: Lang, r: Retry): string {
    if (r.taskId) return t(lang, "run.retry.task", { id: r.taskId, role: Labels.role(lang, r.role ?? "worker"), at: TerminalText.clock(r.nextAt) })
    if (r.role) return t(lang, "run.retry.role", { role: Labels.role(lang, r.role), at: TerminalText.clock(r.nextAt) })
    return t(lang, "run.retry.run", { at: TerminalText.clock(r.nextAt) })
  }

  /** "build [12/40] 30% · 1m05s · Building CXX object src/calc.cpp.o": a running gate in one line. */
  export function progressText(lang: Lang, p: Progress): string {
    const count = p.done !== null && p.total !== null ? `[${p.done}/${p.total}] ` : ""
    const percent = p.percent !== null ? `${p.percent}% ` : ""
    const head = `${Labels.gate(p.gate, lang)} ${count}${percent}`.trimEnd()
    return [head, durationText(p.elapsedMs), p.step].filter(Boolean).join(" · ")
  }

  /** "baseline: build [3/10] 30% · 12s · Building CXX object …": the run's own check in one line, as a task's gates. */
  export function checkProgressText(lang: Lang, c: CheckProgress): string {
    return `${t(lang, `check.${c.check}`)}: ${progressText(lang, c)}`
  }

  export function waitingText(lang: Lang, w: Waiting, titles?: ReadonlyMap<string, string>): string {
    switch (w.kind) {
      case "nothing":
      case "idle":
      case "plan":
      case "graph":
      case "paused":
      case "baseline":
        return t(lang, `waiting.${w.kind}`)
      case "confirm":
        return t(lang, "waiting.confirm", { summary: TerminalText.oneLine(w.summary, 100) })
      case "question":
        return t(lang, "waiting.question", { questionId: w.questionId, text: TerminalText.oneLine(w.text, 240) })
      case "frozen":
        return t(lang, "waiting.frozen", { text: TerminalText.oneLine(w.text, 100) })
      case "milestone":
        return t(lang, w.final ? "waiting.finalReview" : "waiting.milestone", { phase: w.phase })
      case "adr":
        return t(lang, "waiting.adr", { adr: w.adr })
      case "worker":
        // A person knows a task by its title; the session id stays in --json and the events.
        if (w.sessionId && titles?.has(w.taskId)) return t(lang, "waiting.workerTitled", { role: Labels.role(lang, w.role), id: w.taskId, title: TerminalText.truncate(titles.get(w.taskId)!, 40) })
        return w.sessionId
          ? t(lang, "waiting.worker", { role: Labels.role(lang, w.role), id: w.taskId, session: w.sessionId })
          : t(lang, "waiting.workerStarting", { role: Labels.role(lang, w.role), id: w.taskId })
      case "gates":
      case "review":
      case "consult":
      case "merging":
        return t(lang, `waiting.${w.kind}`, { id: w.taskId })
      case "deploy":
        return t(lang, "waiting.deploy", { targets: w.targets.join(", ") })
      case "mergeQueue":
        return t(lang, "waiting.mergeQueue", { ids: w.taskIds.join(", ") })
      case "ready":
        return t(lang, "waiting.ready", { ids: w.taskIds.join(", ") })
      case "interrupted":
        return t(lang, "waiting.interrupted", { command: w.resume })
    }
  }

  /** A task's last failure for people: "cppcheck gate failed: 1 finding(s), 1 error(s), in src/parser.cpp". */
  export function lastFailureText(lang: Lang, failure: NonNullable<Task["lastFailure"]>): string {
    return isShippedGate(failure.source) || failure.facts
      ? t(lang, "ev.gates.failed", { gate: Labels.gate(failure.source, lang), what: failureText(lang, failure) })
      : failureText(lang, failure)
  }

  /**
   * Where the run stands in one line, for a sidebar, a toast or a prompt: the status word and what
   * it waits for first ("waiting — waiting for your confirmation of the plan: …").
   */
  export function headline(state: SchedulerState, lang: Lang): string {
    const run = runStatus(state)
    const first = run.waitingFor[0]
    const status = t(lang, `status.${run.word}`)
    return first && first.kind !== "nothing" ? t(lang, "run.headline", { status, what: waitingText(lang, first) }) : status
  }

  export function gatesText(lang: Lang, gates: readonly GateLine[]): string {
    // A bookkeeping gate (commit, diff, …) is shown only when it is what failed; a tool gate that had nothing
    // to run is no ✓ (a project without .clang-tidy, cppcheck disabled).
    const shown = gates.filter((g) => !g.passed || (g.ran !== false && !isBookkeepingGate(g.gate)))
    if (!shown.length) return t(lang, "gates.none")
    return shown.map((g) => (g.passed && g.reused ? reusedText(lang, Labels.gate(g.gate, lang), g.reused) : `${Labels.gate(g.gate, lang)} ${g.passed ? "✓" : "✗"}`)).join(" ")
  }

  /** "test ✓ reused (20 tests, 1m15s saved)"; without the count when the reuse holds no test result (an analysis). */
  export function reusedText(lang: Lang, what: string, reused: { tests: number; savedMs: number }): string {
    return reused.tests > 0
      ? tCount(lang, "gates.reused", reused.tests, { gate: what, tests: reused.tests, saved: durationText(reused.savedMs) })
      : t(lang, "gates.reusedSaved", { gate: what, saved: durationText(reused.savedMs) })
  }

  /**
   * "baseline ✓ reused (…)", "final check ✓ reused (…)": the run's own checks that ran nothing. `short`
   * leaves the test count out (a 36-column sidebar; the status has it) but keeps the time saved.
   */
  export function reusedCheckLines(lang: Lang, v: Pick<Status, "reusedChecks">, short = false): string[] {
    const checks = v.reusedChecks ?? {}
    const line = (what: string, reuse: CheckReuse.Reuse) => (short ? t(lang, "gates.reusedSaved", { gate: what, saved: durationText(reuse.savedMs) }) : reusedText(lang, what, reuse))
    return [
      ...(checks.baseline ? [line(t(lang, "check.baseline"), checks.baseline)] : []),
      ...(checks.final ? [line(t(lang, "check.final"), checks.final)] : []),
    ]
  }

  export function budgetLines(lang: Lang, v: Status): string[] {
    const lines: string[] = []
    const b = v.budgets
    if (b.repairBudget !== null) {
      const spent = b.perTask.filter((p) => p.repairs > 0).map((p) => t(lang, "budgets.repair.task", { id: p.id, used: p.repairs, budget: b.repairBudget!, left: p.left ?? "?" }))
      lines.push(t(lang, "budgets.repair", { budget: b.repairBudget, spent: spent.length ? spent.join(", ") : t(lang, "budgets.repair.none") }))
    }
    if (b.stallRetries !== null) lines.push(t(lang, "budgets.stall", { budget: b.stallRetries }))
    if (b.concurrency !== null) lines.push(t(lang, "budgets.concurrency", { active: b.active, cap: b.concurrency }))
    if (b.wallClockMs !== null) lines.push(t(lang, "budgets.wallclock", { cap: durationText(b.wallClockMs) }))
    const agents = Object.entries(b.modelRequests.byAgent).sort(([a], [c]) => a.localeCompare(c))
    lines.push(t(lang, "budgets.requests", { total: b.modelRequests.total, detail: agents.length ? ` (${agents.map(([a, n]) => `${Labels.role(lang, a)} ${n}`).join(", ")})` : "" }))
    if (b.money && MoneyLines.worthSaying(b.money)) lines.push(...MoneyLines.lines(lang, b.money))
    if (b.runBudgetSpent) lines.push(t(lang, "budgets.runSpent"))
    if (b.jobs)
      lines.push(
        t(lang, "budgets.jobs", { used: b.jobs.inUse, size: b.jobs.size, waiting: b.jobs.waiting, peak: b.jobs.peakInUse }) +
          (b.jobs.timeoutMs !== null ? t(lang, "budgets.jobs.timeout", { timeout: durationText(b.jobs.timeoutMs) }) : ""),
      )
    return lines
  }
}
