import { catalog, type Key, type Lang } from "../text/words"
import { readStatus } from "../read/status-read"
import { ProgramEvidence } from "../scheduler/runtime/verify/program-evidence"
import { RunData } from "../scheduler/runtime/store/run-data"
import { RunView } from "../read/view"
import { ViewText } from "../read/view-text"
import { EventText } from "../read/event-text"
import { RunGraph } from "../read/run-graph"
import { TerminalText } from "../text/terminal-text"

/** One event as the page shows it: the text is already in the page's language. */
type PageEvent = { seq: number; at: string; clock: string; type: string; taskId: string | null; text: string; refused: boolean }

/** Everything the page draws; sent whole when a page connects and after the log was replaced. */
type FullPayload = {
  lang: Lang
  labels: Record<Key, string>
  root: string
  view: RunView.Status
  graph: RunGraph.Graph
  events: PageEvent[]
  /** What the run waits for and its budgets, as lines in the page's language. */
  waiting: string[]
  budgets: string[]
  /** A running gate's progress per task, as one line in the page's language ("test [7/40] 17% · 1m05s · #8 …"). */
  progress: Record<string, string>
  /** Each task's gates as one line in the page's language (`ViewText.gatesText`: bookkeeping gates only when they failed). */
  gateLines: Record<string, string>
  warnings: string[]
  torn: boolean
}
/** What changed since the last message: the new events, and the view and graph as they are now. */
type UpdatePayload = Pick<FullPayload, "view" | "graph" | "warnings" | "torn" | "waiting" | "budgets" | "progress" | "gateLines"> & { events: PageEvent[] }

export type HubMessage = { kind: "full"; data: FullPayload } | { kind: "update"; data: UpdatePayload } | { kind: "close" }

/**
 * Follows events.jsonl for the dashboard: polls it (fs.watch misses appends on some file systems and
 * behaves differently in Bun and Node), folds what is appended with the machine, and tells every
 * connected page. One hub per server, started on the first subscriber, stopped with the server.
 */
export class RunHub {
  private follower: RunData.Follower
  private subscribers = new Set<(message: HubMessage) => void>()
  private timer?: ReturnType<typeof setInterval>
  private snapshot?: ReturnType<typeof RunData.readSnapshot>
  private quiet = 0
  /** The view last sent: whether it moves with the clock alone (RunView.moves). */
  private lastView?: Pick<RunView.Status, "status" | "retries">

  constructor(
    readonly root: string,
    readonly lang: Lang,
    private pollMs = 250,
  ) {
    this.follower = new RunData.Follower(root)
    this.follower.poll()
  }

  private state() {
    if (this.follower.entries.length === 0) {
      // No log (yet): show the snapshot if there is one.
      this.snapshot ??= RunData.readSnapshot(this.root)
      if (this.snapshot && typeof this.snapshot !== "string") return this.snapshot
    }
    return this.follower.state
  }

  private pageEvent(entry: RunData.Entry): PageEvent {
    const e = entry.event
    return {
      seq: e.seq,
      at: e.at,
      clock: TerminalText.clock(e.at),
      type: e.type,
      taskId: EventText.taskOf(e),
      text: EventText.describe(entry, this.lang, (id, run) => RunData.lastGateReport(this.root, id, run)),
      refused: Boolean(entry.refused),
    }
  }

  private current() {
    const state = this.state()
    const now = state.finished ? undefined : new Date().toISOString()
    const view = readStatus(this.root, state, this.follower.entries, now)
    this.lastView = view
    return {
      view,
      graph: RunGraph.of(state),
      // The baseline or the final check running now comes first, with its step, count and time (like a task's gates).
      waiting: [...(view.checks ?? []).map((c) => ViewText.checkProgressText(this.lang, c)), ...view.waitingFor.map((w) => ViewText.waitingText(this.lang, w))],
      budgets: ViewText.budgetLines(this.lang, view),
      progress: Object.fromEntries(view.tasks.flatMap((t) => (t.progress ? [[t.id, ViewText.progressText(this.lang, t.progress)]] : []))),
      gateLines: Object.fromEntries(view.tasks.map((t) => [t.id, ViewText.gatesText(this.lang, t.gates)])),
      warnings: [...this.follower.warnings],
      torn: this.follower.tornTail(),
    }
  }

  full(): FullPayload {
    return {
      lang: this.lang,
      labels: catalog(this.lang),
      root: this.root,
      ...this.current(),
      events: this.follower.entries.map((entry) => this.pageEvent(entry)),
    }
  }

  evidence(taskId: string) {
    const view = this.current().view
    const task = view.tasks.find((t) => t.id === taskId)
    if (!task) return undefined
    const runs = this.state().tasks.find((t) => t.id === taskId)?.gateRuns ?? 0
    const reviewed = this.state().tasks.find((t) => t.id === taskId)?.history.some((h) => h.event === "review.reported") ?? false
    return {
      task,
      // Only the gate runs and the review the log has reached: the files may be ahead of a log being replayed.
      // A ui or service task's run carries its capture and probe (`program`: pictures, windows, changed share, network summary).
      attempts: RunData.attempts(this.root, taskId)
        .filter((a) => a.attempt <= runs)
        .map((a) => ({ ...a, program: ProgramEvidence.read(this.root, taskId, a.attempt) })),
      review: reviewed ? RunData.review(this.root, taskId) : null,
    }
  }

  /** A program evidence file of a gate run the log has reached, of a task of this run; undefined for anything else. */
  evidenceFile(taskId: string, attempt: number, rel: string): { path: string } | undefined {
    const runs = this.state().tasks.find((t) => t.id === taskId)?.gateRuns ?? 0
    if (!(attempt <= runs)) return undefined
    return ProgramEvidence.resolveFile(this.root, taskId, attempt, rel)
  }

  /** Reads what was appended and tells the pages; called by the timer, and by tests that do not wait. */
  tick(): void {
    const added = this.follower.poll()
    if (added === "reset") {
      this.follower = new RunData.Follower(this.root)
      this.follower.poll()
      this.snapshot = undefined
      this.broadcast({ kind: "full", data: this.full() })
      return
    }
    // A running gate moves without events: its progress is sent about once a second while a task is in its gates.
    if (added.length === 0) {
      if (!RunView.moves(this.state(), this.lastView ?? { status: "running" }) || ++this.quiet * this.pollMs < 1000) return
      this.quiet = 0
    }
    this.broadcast({ kind: "update", data: { ...this.current(), events: added.map((entry) => this.pageEvent(entry)) } })
  }

  subscribe(send: (message: HubMessage) => void): () => void {
    this.subscribers.add(send)
    this.timer ??= setInterval(() => this.tick(), this.pollMs)
    return () => {
      this.subscribers.delete(send)
      if (this.subscribers.size === 0) this.stop()
    }
  }

  private broadcast(message: HubMessage): void {
    for (const send of this.subscribers) {
      try {
        send(message)
      } catch {
        // a page that went away is removed by its own stream's abort
      }
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }

  /** The server is going away: every open stream ends now (Bun's server waits for them otherwise). */
  close(): void {
    this.stop()
    this.broadcast({ kind: "close" })
    this.subscribers.clear()
  }
}
