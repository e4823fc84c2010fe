import { TASK_STATUSES } from "../scheduler/core/task.schema"
import type { SchedulerState } from "../scheduler/core/state"
import { RunData } from "../scheduler/runtime/store/run-data"
import { readStatus } from "./status-read"
import { NotifyRecord } from "../scheduler/runtime/store/notify-record"
import { TraceRecord } from "../scheduler/runtime/store/trace-record"

/**
 * A run's figures for a metrics scraper (Prometheus), derived from the event log, the state folded from it and
 * the files the read model already reads (gate reports, requests.jsonl, jobs.json): never from the runtime's
 * memory, so `aircoding metrics` on a finished or archived run says what the live run said.
 *
 * Not here: the model of a request (the log and requests.jsonl name the role, not the model) and its cost in money
 * (not recorded in the log by this version): a figure the log does not hold is left out, never invented.
 */
export namespace RunMetrics {
  export type Figures = {
    runId: string | null
    status: string
    events: number
    tasksByState: Record<string, number>
    /** One per gate that ran in a task's gate runs the log has reached, from its report.json. */
    gateRuns: { gate: string; seconds: number; passed: boolean }[]
    mergeQueueDepth: number
    mergesInFlight: number
    /** From merge.started to the task's merge outcome. */
    merges: { outcome: string; seconds: number }[]
    /** From the task's entering the merge queue to leaving it (its merge starting, or a reset). */
    mergeWaits: number[]
    /** Model requests by the agent that made them (requests.jsonl, recorded once per model call). */
    requestsByRole: Record<string, number>
    /** Tokens by role, from the sessions' last `usage.recorded` totals. */
    tokensByRole: Record<string, number>
    /**
     * Tokens, cost and unpriced requests by role and model, from the same totals. `costUsd` is null when no
     * session of the pair was priced (a log from before money, or a model with no price): never a made-up zero.
     */
    usageByModel: { role: string; model: string; tokens: number; costUsd: number | null; unpriced: number }[]
    rateLimitPauses: number
    /** Seconds the provider asked the run to wait, summed over its rate limits (rate.limited's until − at). */
    rateLimitPauseSeconds: number
    rateLimited: boolean
    jobs: { size: number; inUse: number; waiting: number } | null
    questionsWaiting: number
    /** Age of the oldest question waiting, in seconds (0 when none waits). */
    oldestQuestionSeconds: number
    budgetsSpent: number
    notifications: NotifyRecord.Counts
    /** Spans of the run's trace exports, sent and dropped (.air/local/trace/sent.jsonl). */
    traceSpans: TraceRecord.Counts
  }

  const seconds = (from: string, to: string) => Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000)

  export function derive(root: string, state: SchedulerState, entries: readonly RunData.Entry[], askedAt: ReadonlyMap<string, string>, now: string): Figures {
    const view = readStatus(root, state, entries, state.finished ? undefined : now)
    const tasksByState: Record<string, number> = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0]))
    for (const t of state.tasks) tasksByState[t.status] = (tasksByState[t.status] ?? 0) + 1

    const gateRuns: Figures["gateRuns"] = []
    for (const t of state.tasks)
      for (let run = 1; run <= t.gateRuns; run++)
        for (const g of RunData.lastGateReport(root, t.id, run)?.gates ?? [])
          if (g.ran !== false && typeof g.ms === "number") gateRuns.push({ gate: g.gate, seconds: g.ms / 1000, passed: g.passed })

    const applied = entries.filter((e) => !e.refused).map((e) => e.event)
    const mergeStarted = new Map<string, string>()
    const merges: Figures["merges"] = []
    const endMerge = (taskId: string, outcome: string, at: string) => {
      const from = mergeStarted.get(taskId)
      if (from === undefined) return
      merges.push({ outcome, seconds: seconds(from, at) })
      mergeStarted.delete(taskId)
    }
    const sessions = new Map<string, { role: string; tokens: number; model?: string; costUsd?: number; unpriced?: number }>()
    let rateLimitPauses = 0
    let rateLimitPauseSeconds = 0
    let budgetsSpent = 0
    for (const e of applied) {
      if (e.type === "merge.started") mergeStarted.set(e.taskId, e.at)
      else if (e.type === "merge.succeeded") endMerge(e.taskId, "merged", e.at)
      else if (e.type === "merge.conflicted") endMerge(e.taskId, "conflicted", e.at)
      else if (e.type === "merge.rejected") endMerge(e.taskId, "rejected", e.at)
      else if (e.type === "merge.blocked") endMerge(e.taskId, "blocked", e.at)
      else if (e.type === "merge.deferred") endMerge(e.taskId, "deferred", e.at)
      else if (e.type === "merge.batch-rejected") for (const id of e.taskIds) endMerge(id, "rejected", e.at)
      else if (e.type === "usage.recorded") sessions.set(e.sessionId, { role: e.role, tokens: e.tokens, model: e.model, costUsd: e.costUsd, unpriced: e.unpriced })
      else if (e.type === "rate.limited") {
        rateLimitPauses++
        rateLimitPauseSeconds += seconds(e.at, e.until)
      } else if (e.type === "budget.spent") budgetsSpent++
    }
    const tokensByRole: Record<string, number> = {}
    for (const { role, tokens } of sessions.values()) tokensByRole[role] = (tokensByRole[role] ?? 0) + tokens
    const byModel = new Map<string, Figures["usageByModel"][number]>()
    for (const u of sessions.values()) {
      // A session whose calls the engine never named a model for (a log from before models were kept).
      const model = u.model ?? "unreported"
      const key = `${u.role}\u0000${model}`
      const row = byModel.get(key) ?? { role: u.role, model, tokens: 0, costUsd: null, unpriced: 0 }
      row.tokens += u.tokens
      if (u.costUsd !== undefined) row.costUsd = (row.costUsd ?? 0) + u.costUsd
      row.unpriced += u.unpriced ?? 0
      byModel.set(key, row)
    }

    const mergeWaits: number[] = []
    for (const t of state.tasks) {
      let queued: string | undefined
      for (const h of t.history) {
        if (h.to === "merge_queued" && h.from !== "merge_queued") queued = h.at
        else if (h.from === "merge_queued" && h.to !== "merge_queued" && queued !== undefined) {
          mergeWaits.push(seconds(queued, h.at))
          queued = undefined
        }
      }
    }

    const ages = state.questions.map((q) => seconds(askedAt.get(q.questionId) ?? state.lastAt ?? now, now))
    const jobs = view.budgets.jobs
    return {
      runId: state.runId,
      status: view.status,
      events: entries.length,
      tasksByState,
      gateRuns,
      mergeQueueDepth: state.mergeQueue.length,
      mergesInFlight: state.merging.length,
      merges,
      mergeWaits,
      requestsByRole: view.budgets.modelRequests.byAgent,
      tokensByRole,
      usageByModel: [...byModel.values()],
      rateLimitPauses,
      rateLimitPauseSeconds,
      rateLimited: state.rateLimit !== null && Date.parse(state.rateLimit.until) > Date.parse(now),
      jobs: jobs ? { size: jobs.size, inUse: jobs.inUse, waiting: jobs.waiting } : null,
      questionsWaiting: state.questions.length,
      oldestQuestionSeconds: ages.length ? Math.max(...ages) : 0,
      budgetsSpent,
      notifications: NotifyRecord.counts(root),
      traceSpans: TraceRecord.counts(root),
    }
  }

  /** Follows one run's log across scrapes, so a scrape reads only what was appended since the last one. */
  export class Source {
    private follower: RunData.Follower

    constructor(readonly root: string) {
      this.follower = new RunData.Follower(root)
    }

    figures(now = new Date().toISOString()): Figures {
      if (this.follower.poll() === "reset") {
        this.follower = new RunData.Follower(this.root)
        this.follower.poll()
      }
      const f = this.follower
      if (f.entries.length === 0) {
        const snap = RunData.readSnapshot(this.root)
        if (snap && typeof snap !== "string") return derive(this.root, snap, [], new Map(), now)
      }
      return derive(this.root, f.state, f.entries, f.askedAt, now)
    }
  }
}
