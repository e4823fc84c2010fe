import type { RunData } from "../scheduler/runtime/store/run-data"
import { failureText, faultText, gateFacts, gateRunOf } from "./gate-words"
import { Labels } from "./labels"
import { MoneyLines } from "../text/money-lines"
import { TerminalText } from "../text/terminal-text"
import { list, t, tOr, type Key, type Lang } from "../text/words"

/** Each event of the log in a line for people (`aircoding events`, the TUI's feed, the dashboard), in the view's language. */
export namespace EventText {
  /** Finds the report of a task's gate run, so a gate failure can be worded from its facts. */
  export type Reports = (taskId: string, gateRun: number | undefined) => RunData.GateReportFile | null

  export function describe(entry: RunData.Entry, lang: Lang, reports?: Reports): string {
    const text = describeEvent(entry.event, lang, reports)
    return entry.refused ? `${text} ${t(lang, "ev.refused", { reason: TerminalText.oneLine(entry.refused, 120) })}` : text
  }

  export function describeEvent(e: RunData.Entry["event"], lang: Lang, reports?: Reports): string {
    const L = (key: Key, params?: Record<string, string | number>) => t(lang, key, params)
    switch (e.type) {
      case "run.started":
        return L("ev.run.started", { runId: e.runId, requirement: TerminalText.oneLine(e.requirement, 80) })
      case "plan.proposed":
        return L("ev.plan.proposed", { summary: TerminalText.oneLine(e.summary, 100) })
      case "plan.confirmed":
        return L("ev.plan.confirmed")
      case "graph.accepted":
        return L("ev.graph.accepted", { count: e.graph.tasks.length, ids: e.graph.tasks.map((x) => x.id).join(", ") })
      case "task.dispatched":
        return L("ev.task.dispatched", { role: Labels.role(lang, e.role), attempt: e.attempt, sessionId: e.sessionId })
      case "worker.reported":
        return e.result.blocked
          ? L("ev.worker.reported.blocked", { role: Labels.role(lang, e.result.role), reason: TerminalText.oneLine(e.result.blocked.reason, 100) })
          : L("ev.worker.reported", { role: Labels.role(lang, e.result.role), summary: TerminalText.oneLine(e.result.summary, 100) })
      case "worker.failed":
        return L("ev.worker.failed", { reason: L(`reason.${e.reason}`), message: TerminalText.oneLine(e.message, 100) })
      case "gates.started":
        return L("ev.gates.started")
      case "gates.passed": {
        const passed = L("ev.gates.passed", { kinds: list(lang, Object.keys(e.evidence).filter((k) => k !== "report").map((g) => Labels.gate(g, lang))) })
        // Tests that failed on the baseline too are named, so nobody mistakes them for this task's.
        const inherited = e.evidence.report ? reports?.(e.taskId, gateRunOf(e.evidence.report))?.inheritedTests : undefined
        return inherited?.length ? passed + L("ev.gates.inherited", { tests: list(lang, inherited) }) : passed
      }
      case "baseline.done": {
        const commit = e.commit.slice(0, 10)
        if (e.status === "failed" && e.buildFailed) return L("ev.baseline.done.build", { commit, message: TerminalText.oneLine(e.message, 120) })
        if (e.status === "failed") return L("ev.baseline.done.failed", { commit, tests: e.failingTests.length ? list(lang, e.failingTests) : TerminalText.oneLine(e.message, 120) })
        return L(`ev.baseline.done.${e.status}`, { commit, message: TerminalText.oneLine(e.message, 120) })
      }
      case "gates.failed":
        return L("ev.gates.failed", {
          gate: Labels.gate(e.gate, lang),
          what: TerminalText.oneLine(failureText(lang, { source: e.gate, message: e.message, facts: gateFacts(e.gate, reports?.(e.taskId, gateRunOf(e.evidencePath)) ?? null) }), 160),
        })
      case "runtime.fault":
        return L("ev.runtime.fault", { source: e.source === "watchdog" ? "watchdog" : (e.command ?? "command"), message: TerminalText.oneLine(e.message, 160) })
      case "review.started":
        return L("ev.review.started", { sessionId: e.sessionId })
      case "review.reported":
        return L("ev.review.reported", { verdict: L(`verdict.${e.report.verdict}`), rows: e.report.rows.length, findings: e.report.findings.length })
      case "merge.started":
        return L("ev.merge.started")
      case "merge.succeeded":
        return L("ev.merge.succeeded", { tag: e.tag, commit: e.commit.slice(0, 10) })
      case "merge.conflicted":
        return L("ev.merge.conflicted", { files: e.files.join(", ") || "?" })
      case "merge.batch-rejected":
        return L("ev.merge.batch-rejected", { ids: e.taskIds.join(", ") })
      case "milestone.reached":
        return L("ev.milestone.reached", { phase: e.phase })
      case "milestone.reviewed":
        return L("ev.milestone.reviewed", { phase: e.phase, verdict: L(`verdict.${e.verdict}`) })
      case "change.requested":
        return L("ev.change.requested", { text: TerminalText.oneLine(e.text, 100) })
      case "delta.accepted":
        return L("ev.delta.accepted", { add: e.delta.add.length, remove: e.delta.remove.length, modify: e.delta.modify.length })
      case "consult.answered":
        return L("ev.consult.answered", { by: L(`consultant.${e.by}`), choice: e.choice })
      case "consult.unanswered":
        return L("ev.consult.unanswered", { by: L(`consultant.${e.by}`), reason: TerminalText.oneLine(e.reason, 100) })
      case "consult.replanned":
        return L("ev.consult.replanned", { added: e.delta.add.length, modified: e.delta.modify.length, removed: e.delta.remove.length })
      case "dispatch.failed":
        return L("ev.dispatch.failed", { role: Labels.role(lang, e.role), message: TerminalText.oneLine(e.message, 100) })
      case "question.answered":
        return L("ev.question.answered", { questionId: e.questionId, answer: TerminalText.oneLine(e.answer, 80) })
      case "budget.spent":
        return L("ev.budget.spent", { kind: L(`budget.kind.${e.kind}`) })
      case "cost.reserved":
        return L("ev.cost.reserved", { role: e.role, usd: MoneyLines.usd(e.usd), spent: MoneyLines.usd(e.spentUsd), limit: MoneyLines.usd(e.limitUsd) })
      case "usage.recorded":
        return L("ev.usage.recorded", { role: e.role, sessionId: e.sessionId, requests: e.requests, tokens: e.tokens })
      case "revert.done":
        return L(e.status === "reverted" ? "ev.revert.done" : "ev.revert.conflicted", { id: e.taskId, round: e.round })
      case "session.lost":
        return L("ev.session.lost", { sessionId: e.sessionId })
      case "session.overflowed":
        return L("ev.session.overflowed", { role: Labels.role(lang, e.role), sessionId: e.sessionId, message: TerminalText.oneLine(e.message, 100) })
      case "session.refreshed":
        return L("ev.session.refreshed", { role: Labels.role(lang, e.role), sessionId: e.sessionId, files: e.carried.diffFiles, steps: e.carried.steps })
      case "timer.fired":
        return L("ev.timer.fired", { kind: L(`ev.timer.${e.kind}`) })
      case "step.failed":
        return L("ev.step.failed", { step: L(`step.${e.step}`), outcome: e.fault ? L(`fault.${e.fault.class}`) : e.outcome, message: TerminalText.oneLine(e.fault?.message ?? e.message, 100) })
      case "run.paused":
        return L("ev.run.paused")
      case "run.resumed":
        return L("ev.run.resumed")
      case "model.retrying":
        return L("ev.model.retrying", { role: Labels.role(lang, e.role), attempt: e.attempt, at: TerminalText.clock(e.nextAt), message: TerminalText.oneLine(e.message, 100) })
      case "farm.degraded":
        return L("ev.farm.degraded", { hosts: e.hosts.join(", "), n: e.localFallbacks })
      case "adr.recorded":
      case "adr.edited":
        return L(`ev.${e.type}`, { adr: e.adr })
      case "adr.classified":
        return L("ev.adr.classified", { adr: e.adr, kind: L(`adr.kind.${e.kind}`), note: TerminalText.oneLine(e.note, 100) })
      default:
        return describeByFields(e as unknown as { type: string } & Record<string, unknown>, lang)
    }
  }

  /**
   * An event this switch does not name (one another part of the code added): its words come from
   * the catalogue's `ev.<type>`, filled from the fields such events carry — a fault's tag, a status,
   * a text, a session — so a new event reads right in every language with one catalogue entry.
   */
  export function describeByFields(e: { type: string } & Record<string, unknown>, lang: Lang): string {
    const str = (k: string) => (typeof e[k] === "string" ? (e[k] as string) : "")
    return tOr(lang, `ev.${e.type}`, e.type, {
      fault: faultText(lang, str("tag")),
      status: tOr(lang, `final.${str("status")}`, str("status")),
      text: TerminalText.oneLine(str("text"), 100),
      sessionId: str("sessionId"),
    })
  }

  export function taskOf(e: RunData.Entry["event"]): string | null {
    return "taskId" in e && typeof e.taskId === "string" ? e.taskId : null
  }

  /** One line of `aircoding events`: time, type, task, text. */
  export function eventLine(entry: RunData.Entry, lang: Lang, reports?: Reports): string {
    const e = entry.event
    return `${TerminalText.clock(e.at)}  ${TerminalText.pad(e.type, 18)}  ${TerminalText.pad(taskOf(e) ?? "-", 6)}  ${describe(entry, lang, reports)}`
  }
}
