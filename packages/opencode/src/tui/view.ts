import { t, tOr, type Key, type Lang } from "../text/words"
import { RunView } from "../read/view"
import { ViewText } from "../read/view-text"
import { Labels } from "../read/labels"
import { TerminalText } from "../text/terminal-text"
import { DeployLines } from "../text/deploy-lines"
import type { SchedulerState } from "../scheduler/core/state"
import type { TaskGraph } from "../scheduler/core/task.schema"
import { MoneyLines } from "../text/money-lines"

/**
 * What the TUI plugin shows, computed from the run's state alone: pure, so the sidebar, the dialogs and
 * the toasts are tested without a terminal. plugin.tsx only renders these and sends the user's answers.
 */
export namespace TuiView {
  export type Tone = "normal" | "muted" | "success" | "warning" | "error" | "accent"
  export type Line = { text: string; tone: Tone }
  /** `deploy`: per deploy target its status, commit and hashes, service, smoke and rollback (empty when the run deployed nothing). */
  export type Sidebar = { heading: Line; tasks: Line[]; deployHeading: string; deploy: Line[]; waitingHeading: string; waiting: Line[] }

  /** What waits on a person rather than on the team (a worker, a gate, the merge queue). */
  const PERSON_WAITS: ReadonlySet<string> = new Set(["confirm", "question", "frozen", "milestone", "adr", "interrupted", "baseline", "paused"])

  const DEPLOY_TONE: Record<DeployLines.Target["status"], Tone> = { running: "accent", passed: "success", failed: "error", asked: "warning" }

  /** Four short lines per target: a 40-column sidebar shows all that matters (only a long service state is cut). */
  export function deployLines(v: RunView.Status, lang: Lang, width = 36): Line[] {
    return (v.deploy ?? []).flatMap((d) => {
      const [head, detail, smoke, service] = DeployLines.compact(lang, d)
      return [
        { text: TerminalText.truncate(head, width), tone: DEPLOY_TONE[d.status] },
        { text: TerminalText.truncate(detail, width), tone: d.hashMatch === false ? "error" : "muted" },
        { text: TerminalText.truncate(smoke, width), tone: d.smoke === "failed" ? "error" : d.rolledBack ? "warning" : "muted" },
        { text: TerminalText.truncate(service, width), tone: "muted" },
      ]
    })
  }

  const TONE: Record<string, Tone> = {
    pending: "muted",
    merged: "success",
    blocked: "error",
    invalidated: "muted",
    merge_queued: "accent",
    merging: "accent",
  }

  export function statusWord(lang: Lang, v: RunView.Status): string {
    return t(lang, `status.${v.status}` as Key)
  }

  /** The sidebar: the run's status word, each task with its state and last gates, and what the run waits for. */
  export function sidebar(v: RunView.Status, lang: Lang, maxTasks = 30, width = 36): Sidebar {
    if (v.stage === "idle" && v.runId === null)
      return { heading: { text: `${t(lang, "tui.sidebar.title")} · ${statusWord(lang, v)}`, tone: "muted" }, tasks: [], deployHeading: "", deploy: [], waitingHeading: "", waiting: [{ text: t(lang, "tui.sidebar.none"), tone: "muted" }] }
    const headingTone: Tone = v.status === "done" ? "success" : v.status === "blocked" ? "error" : v.status === "waiting" || v.status === "paused" || v.status === "interrupted" ? "warning" : "accent"
    // One line per task, and its last gates below it when it has been through them: a 40-column sidebar fits both.
    const tasks: Line[] = v.tasks.slice(0, maxTasks).flatMap((task) => {
      const tone = TONE[task.state] ?? "normal"
      const line = { text: TerminalText.truncate(`${task.id} ${Labels.state(lang, task.state)} · ${task.title}`, width), tone }
      const gates = task.gates.length ? ViewText.gatesText(lang, task.gates) : ""
      const out: Line[] = [line]
      // A long build or test shows its step, count and elapsed time while it runs (runtime/gates/progress.ts).
      if (task.progress) out.push({ text: TerminalText.truncate(`  ${ViewText.progressText(lang, task.progress)}`, width), tone: "accent" })
      else if (gates && gates !== t(lang, "gates.none")) out.push({ text: TerminalText.truncate(`  ${gates}`, width), tone: "muted" })
      return out
    })
    if (v.tasks.length > maxTasks) tasks.push({ text: t(lang, "tui.sidebar.more", { count: v.tasks.length - maxTasks }), tone: "muted" })
    // The baseline or the final check running now, its step, count and time as a task's gates show them.
    for (const c of v.checks ?? []) tasks.push({ text: TerminalText.truncate(ViewText.checkProgressText(lang, c), width), tone: "accent" })
    // The baseline or the final check that ran nothing, reusing a recorded result: said under the tasks.
    for (const text of ViewText.reusedCheckLines(lang, v, true)) tasks.push({ text: TerminalText.truncate(text, width), tone: "muted" })
    // What the run cost so far, as the engine priced it (unpriced requests said as such, never as $0).
    const money = v.budgets.money
    if (money && MoneyLines.worthSaying(money)) tasks.push({ text: TerminalText.truncate(t(lang, "summary.cost", { cost: MoneyLines.short(lang, money) }), width), tone: "muted" })
    const titles = new Map(v.tasks.map((task) => [task.id, task.title]))
    // Retries and rate-limit pauses first, with the time of the next attempt: the run is not stuck, it waits on purpose.
    const retrying = (v.retries ?? []).map((r) => ({ text: TerminalText.truncate(ViewText.retryText(lang, r), width * 2), tone: "warning" as Tone }))
    const waiting = [...retrying, ...v.waitingFor.slice(0, 4).map((w) => ({ text: TerminalText.truncate(ViewText.waitingText(lang, w, titles), width * 3), tone: "normal" as Tone }))]
    const deploy = deployLines(v, lang, width)
    const deployHeading = deploy.length ? DeployLines.heading(lang, v.deploy!) : ""
    return { heading: { text: `${t(lang, "tui.sidebar.title")} · ${statusWord(lang, v)}`, tone: headingTone }, tasks, deployHeading, deploy, waitingHeading: t(lang, "tui.sidebar.waiting"), waiting }
  }

  /**
   * The home screen (where a reopened TUI starts; it has no sidebar): the run's status word and what it
   * waits for, so a person coming back sees where the run stands before typing anything. Nothing when
   * there is no run: the prompt is the way to start one.
   */
  export function home(v: RunView.Status, lang: Lang, width = 76, maxLines = 12): Line[] {
    // No run yet: say what AirCoding is and what to type, below OpenCode's own prompt and hints; a short
    // terminal gets one line per sentence (the home screen has no room to grow: more lines would overlap).
    if (v.stage === "idle" && v.runId === null) {
      const intro: Line[] = [
        { text: t(lang, "tui.intro.what"), tone: "accent" },
        { text: t(lang, "tui.intro.type"), tone: "normal" },
        { text: t(lang, "tui.intro.commands"), tone: "muted" },
      ]
      const wrapped = intro.flatMap((l) => TerminalText.wrap(l.text, width).map((text) => ({ text, tone: l.tone })))
      return wrapped.length <= maxLines ? wrapped : intro.slice(0, maxLines).map((l) => ({ ...l, text: TerminalText.truncate(l.text, width) }))
    }
    const side = sidebar(v, lang, 0, width)
    const merged = v.tasks.filter((task) => task.state === "merged").length
    const progress = v.tasks.length ? ` · ${t(lang, "tui.home.merged", { merged, total: v.tasks.length })}` : ""
    const waiting = side.waiting.slice(0, 2).map((w) => ({ text: TerminalText.truncate(`${side.waitingHeading} · ${w.text}`, width), tone: w.tone }))
    return [{ text: `${side.heading.text}${progress}`, tone: side.heading.tone }, ...waiting]
  }

  /**
   * The run in two lines for a terminal too narrow for the sidebar: the status word and the merged count, then
   * whatever moves or waits — a running gate or check with its count and time, the oldest thing waiting for the
   * person, a retry's pause — each line cut to the width (the app's bottom row has no room to wrap). Nothing when
   * there is no run: the first screen says what to type.
   */
  export function compact(v: RunView.Status, lang: Lang, width = 80): Line[] {
    if (v.stage === "idle" && v.runId === null) return []
    const side = sidebar(v, lang, 0, width)
    const merged = v.tasks.filter((task) => task.state === "merged").length
    const head = [side.heading.text, v.tasks.length ? t(lang, "tui.home.merged", { merged, total: v.tasks.length }) : ""]
    const moving = [
      ...v.tasks.filter((task) => task.progress).map((task) => `${task.id} ${ViewText.progressText(lang, task.progress!)}`),
      ...(v.checks ?? []).map((c) => ViewText.checkProgressText(lang, c)),
    ]
    const first = { text: TerminalText.truncate([...head, ...moving.slice(0, 1)].filter(Boolean).join(" · "), width), tone: side.heading.tone }
    const titles = new Map(v.tasks.map((task) => [task.id, task.title]))
    // What a person must do comes before what the team is doing: that is what the narrow view is for.
    const waits = v.waitingFor.filter((w) => w.kind !== "nothing" && w.kind !== "idle")
    const person = waits.find((w) => PERSON_WAITS.has(w.kind))
    const retry = (v.retries ?? [])[0]
    const waitLine = (w: RunView.Waiting, tone: Tone): Line => ({ text: `${side.waitingHeading} · ${ViewText.waitingText(lang, w, titles)}`, tone })
    const second: Line | null = person
      ? waitLine(person, "warning")
      : retry
        ? { text: ViewText.retryText(lang, retry), tone: "warning" }
        : moving.length > 1
          ? { text: moving.slice(1).join(" · "), tone: "accent" }
          : waits[0]
            ? waitLine(waits[0], "muted")
            : null
    return second ? [first, { ...second, text: TerminalText.truncate(second.text, width) }] : [first]
  }

  /**
   * Something the user must answer: the proposed plan, or the oldest open question. `key` tells one from
   * the next (a revised plan has another summary); other events while it waits leave it alone.
   */
  export type Ask =
    | { kind: "plan"; key: string; summary: string; graph: TaskGraph | null }
    | { kind: "question"; key: string; questionId: string; text: string }

  export function ask(state: SchedulerState): Ask | null {
    if (state.stage === "confirming")
      return { kind: "plan", key: `plan:${state.runId}:${state.planSummary ?? ""}:${state.proposedGraph?.tasks.length ?? 0}`, summary: state.planSummary ?? "", graph: state.proposedGraph ?? null }
    const q = state.questions[0]
    if (q) return { kind: "question", key: `question:${q.questionId}`, questionId: q.questionId, text: q.text }
    return null
  }

  export type Toast = { message: string; variant: "info" | "success" | "warning" | "error" }

  /**
   * A toast's message with its lines broken here, at spaces, to fit the engine's toast: a box at most 60 columns
   * wide (less on a narrow terminal: width − 6), 2 columns of padding and a border on each side. Left to the
   * engine, its word wrap breaks at "/" too, and a path came out as "… /" over "tmp/…"; broken here, a path starts
   * its own line and stays whole when it fits one.
   */
  export function toastText(message: string, terminalWidth = 80): string {
    const inner = Math.max(20, Math.min(60, terminalWidth - 6) - 6)
    return message
      .split("\n")
      .flatMap((line) => (line.trim() ? TerminalText.wrap(line, inner) : [""]))
      .join("\n")
  }

  /** Milestones, merges and blocks between two states of the same run: one toast each. */
  export function toasts(prev: SchedulerState, next: SchedulerState, lang: Lang): Toast[] {
    // Only a newer state speaks: a re-read log (or a fold that is behind) never repeats a toast already shown.
    if (prev.runId !== next.runId || next.eventCount <= prev.eventCount) return []
    const out: Toast[] = []
    if (!prev.graph && next.graph) out.push({ message: t(lang, "tui.toast.graph", { count: next.graph.tasks.length }), variant: "info" })
    const before = new Map(prev.tasks.map((rt) => [rt.id, rt]))
    const titles = new Map((next.graph?.tasks ?? []).map((n) => [n.id, n.title]))
    for (const rt of next.tasks) {
      const old = before.get(rt.id)
      if (rt.merges > (old?.merges ?? 0)) out.push({ message: t(lang, "tui.toast.merged", { id: rt.id, title: TerminalText.truncate(titles.get(rt.id) ?? rt.id, 40) }), variant: "success" })
      if (rt.status === "blocked" && old?.status !== "blocked" && !rt.waitingOn)
        out.push({ message: t(lang, "tui.toast.blocked", { id: rt.id, reason: TerminalText.oneLine(rt.lastFailure?.message ?? "", 80) }), variant: "warning" })
    }
    if (next.milestone && next.milestone.phase !== prev.milestone?.phase) out.push({ message: t(lang, "tui.toast.milestone", { phase: next.milestone.phase }), variant: "info" })
    // Each deploy's outcome once: a target whose current deploy ended since the last state.
    const deployedBefore = new Map((prev.deploy?.targets ?? []).map((d) => [d.name, d]))
    for (const d of next.deploy?.targets ?? []) {
      const old = deployedBefore.get(d.name)
      if (d.status === "running" || (old && old.n === d.n && old.status === d.status)) continue
      const cause = d.cause ? tOr(lang, `deploy.cause.${d.cause}`, d.cause) : t(lang, "deploy.unknown")
      out.push(
        d.status === "passed"
          ? { message: t(lang, "tui.toast.deployed", { target: d.name, commit: (d.commit ?? "").slice(0, 12) }), variant: "success" }
          : { message: t(lang, "tui.toast.deployFailed", { target: d.name, cause, rolled: d.rolledBack ? t(lang, "tui.deploy.rolledBack") : "" }), variant: d.status === "asked" ? "warning" : "error" },
      )
    }
    if (!prev.paused && next.paused) out.push({ message: t(lang, "tui.toast.paused"), variant: "info" })
    if (prev.paused && !next.paused) out.push({ message: t(lang, "tui.toast.resumed"), variant: "info" })
    if (!prev.finished && next.finished)
      out.push(next.finished.status === "done" ? { message: t(lang, "tui.toast.done"), variant: "success" } : { message: t(lang, "tui.toast.runBlocked"), variant: "error" })
    return out
  }
}
