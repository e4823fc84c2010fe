import type { RunReport } from "../scheduler/runtime/report/run-report"
import type { SchedulerState } from "../scheduler/core/state"
import { DeployLines } from "../text/deploy-lines"
import { Labels } from "./labels"
import { TerminalText } from "../text/terminal-text"
import { t, type Key, type Lang } from "../text/words"
import { durationText } from "../text/duration"
import { RunView } from "./view"
import { ViewText } from "./view-text"

/** The status as a terminal page (`aircoding status`, the air_status tool), from the view and its lines. */
export namespace ViewRender {
  function isState(x: unknown): x is SchedulerState {
    return typeof x === "object" && x !== null && "eventCount" in x && "tasks" in x && "stage" in x && !("kind" in x)
  }
  function isSummary(x: unknown): x is RunReport.Summary {
    return typeof x === "object" && x !== null && "evidenceRoot" in x && "modelRequests" in x
  }

  /**
   * The status as text. Takes a view built by `RunView.build`, a SchedulerState (pure: elapsed times up to
   * the last event, no files read) or a RunReport summary.
   */
  export function render(input: RunView.Status | SchedulerState | RunReport.Summary, lang: Lang, width = 80): string {
    const v: RunView.Status = isState(input) ? RunView.build({ state: input }) : isSummary(input) ? RunView.fromSummary(input) : input
    if (v.stage === "idle" && v.tasks.length === 0 && v.runId === null) return t(lang, "waiting.heading") + ": " + t(lang, "waiting.idle") + "\n"
    const W = Math.max(50, width)
    const lines: string[] = []
    const flags = [v.paused && v.status !== "paused" ? t(lang, "run.paused") : null, v.frozen ? t(lang, "run.frozen", { text: TerminalText.oneLine(v.frozen, 80) }) : null].filter(Boolean)
    lines.push(
      TerminalText.truncate(
        t(lang, "run.header", { runId: v.runId ?? "?", status: t(lang, `status.${v.status}`) }) + (flags.length ? ` — ${flags.join("; ")}` : ""),
        W,
      ),
    )
    // Wrapped, not cut, on a narrow terminal: three lines say what was asked.
    if (v.requirement) lines.push(...TerminalText.wrap(t(lang, "run.requirement", { text: TerminalText.oneLine(v.requirement, 3 * W) }), W, "  ").slice(0, 3))
    if (v.lastEventAt) lines.push(t(lang, "run.updated", { count: v.eventCount, at: TerminalText.stamp(v.lastEventAt) }))
    lines.push("", t(lang, "tasks.heading"))
    if (!v.tasks.length) lines.push(t(lang, "tasks.none"))
    else {
      // TASK  TITLE…  STATE  ELAPSED  LAST GATES: the title takes what the terminal leaves; sessions are in --json and the events.
      const cells = v.tasks.map((task) => [
        task.id,
        task.title,
        // A second attempt or a repair is said beside the state; one attempt needs no column.
        Labels.state(lang, task.state) + (task.attempts > 1 || task.repairs > 0 ? ` ×${task.attempts}${v.budgets.repairBudget !== null && task.repairs > 0 ? ` (${task.repairs}↻)` : ""}` : ""),
        durationText(task.elapsedMs),
        W >= 100 && task.gates.length && task.gateRun ? `#${task.gateRun} ${ViewText.gatesText(lang, task.gates)}` : ViewText.gatesText(lang, task.gates),
      ])
      const header = ["col.task", "col.title", "col.state", "col.elapsed", "col.gates"].map((k) => t(lang, k as Key))
      const rows = [header, ...cells]
      const widths = header.map((_, c) => Math.max(...rows.map((r) => TerminalText.displayWidth(r[c]!))))
      const fixed = widths.reduce((a, b, c) => a + (c === 1 ? 0 : b), 0) + 2 * (header.length - 1)
      widths[1] = Math.max(12, Math.min(widths[1]!, W - fixed))
      const lastAt = widths.slice(0, -1).reduce((a, b) => a + b + 2, 0)
      const natural = header.map((_, c) => Math.max(...rows.map((r) => TerminalText.displayWidth(r[c]!))))
      if (natural[1]! <= widths[1]! && lastAt + natural[4]! <= W)
        for (const r of rows) lines.push(r.map((cell, c) => (c === r.length - 1 ? cell : TerminalText.pad(cell, widths[c]!))).join("  ").trimEnd())
      else {
        // Too narrow for the table: each task on its own lines (id, state and time, then its title, then its
        // gates), wrapped rather than cut, so an 80-column terminal still reads every title and every gate.
        const lead = Math.max(...cells.map((r) => TerminalText.displayWidth(r[0]!)))
        for (const [id, title, state, elapsed, gates] of cells) {
          const shown = (cell: string | undefined) => !!cell && cell !== "—"
          lines.push(...TerminalText.wrap(`${TerminalText.pad(id!, lead)}  ${[state, elapsed, title].filter(shown).join(" · ")}`, W, " ".repeat(lead + 2)))
          if (shown(gates)) lines.push(...TerminalText.wrap(`${" ".repeat(lead + 2)}${gates}`, W, " ".repeat(lead + 2)))
        }
      }
      for (const task of v.tasks) {
        if (task.progress) lines.push(TerminalText.truncate(`  ${task.id}: ${ViewText.progressText(lang, task.progress)}`, W))
        if (task.lastFailure && task.state !== "merged") lines.push(TerminalText.truncate(`  ${task.id}: ${TerminalText.oneLine(ViewText.lastFailureText(lang, task.lastFailure), 2 * W)}`, W))
        if (task.waitingOn) lines.push(TerminalText.truncate(`  ${task.id}: ${t(lang, "tasks.waitsOn", { what: task.waitingOn })}`, W))
        lines.push(...ViewText.evidenceLines(lang, task))
      }
    }
    for (const c of v.checks ?? []) lines.push(TerminalText.truncate(ViewText.checkProgressText(lang, c), W))
    for (const line of ViewText.reusedCheckLines(lang, v)) lines.push(TerminalText.truncate(line, W))
    const deploy = DeployLines.section(lang, v.deploy)
    if (deploy.length) lines.push("", ...deploy)
    lines.push("", t(lang, "budgets.heading"))
    for (const line of ViewText.budgetLines(lang, v)) lines.push(...TerminalText.wrap("- " + line, W, "  "))
    lines.push("", t(lang, "waiting.heading"))
    for (const r of v.retries ?? []) lines.push(TerminalText.truncate("- " + ViewText.retryText(lang, r), W))
    const titles = new Map(v.tasks.map((task) => [task.id, task.title]))
    for (const w of v.waitingFor) {
      // The resume command on a line of its own, whole (never wrapped or cut): it is typed, or copied, as it stands.
      if (w.kind === "interrupted") lines.push(...TerminalText.wrap("- " + t(lang, "waiting.interrupted.lead"), W, "  "), `    ${w.resume}`)
      else lines.push(...TerminalText.wrap("- " + ViewText.waitingText(lang, w, titles), W, "  ").slice(0, 4))
    }
    return lines.join("\n") + "\n"
  }
}

/** The status as text; the air_status tool reuses it. */
export function renderStatus(summaryOrState: RunView.Status | SchedulerState | RunReport.Summary, lang: Lang = "en"): string {
  return ViewRender.render(summaryOrState, lang)
}
