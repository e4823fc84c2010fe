import { JsonLines } from "../store/jsonl"
import type { Ports } from "../ports"
import { Queue } from "../store/serial"
import { AirPaths } from "../../core/air-paths"

/**
 * Model requests by agent, one line per request, recorded from the `chat.params` hook (which fires
 * once per model call and names the agent). Invariant 5 — routine scheduling costs zero model calls —
 * is checked against this file. What the budgets count is in the log instead (`UsageReporter`).
 */
export namespace Usage {
  export function file(root: string): string {
    return AirPaths.state(root, "requests.jsonl")
  }

  export function record(root: string, agent: string, sessionID: string, at = new Date().toISOString()): void {
    // Counted for invariant 5 and the views, never acted on: no need to wait for the disk.
    JsonLines.append(file(root), { at, agent, sessionID }, { fsync: false })
  }

  /** Every request recorded, in order (a torn last line is skipped). */
  export function entries(root: string): { at: string; agent: string; sessionID: string }[] {
    return JsonLines.read(file(root))
  }

  export function byAgent(root: string): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const { agent } of entries(root)) counts[agent] = (counts[agent] ?? 0) + 1
    return counts
  }

  /** Model requests per session. */
  export function bySession(root: string): Record<string, number> {
    const counts: Record<string, number> = {}
    for (const { sessionID } of entries(root)) if (sessionID) counts[sessionID] = (counts[sessionID] ?? 0) + 1
    return counts
  }
}

/** Who a session works for, as the supervisor knows it: the role, and the task when it has one. */
type SessionOwner = { role: string; taskId?: string }

/**
 * Feeds the model use of the sessions the Scheduler started to the machine as `usage.recorded` events,
 * carrying each session's totals (completed assistant messages and their tokens, as the engine reports
 * them). An event only when a total grew, so at most one per assistant message a session ended; the
 * machine decides the budgets from the folded totals, and a restart folds the same ones.
 */
export class UsageReporter {
  private readonly queue = new Queue()

  constructor(
    private ports: Ports,
    private ownerOf: (sessionID: string) => SessionOwner | undefined,
  ) {}

  /**
   * Reports the sessions named (by default every session watched). The figures and owners are read now,
   * before the caller lets a session go; the events follow in order.
   */
  report(sessionIDs: Iterable<string> = this.ports.sessions.ids()): Promise<void> {
    const seen = [...sessionIDs].flatMap((sessionId) => {
      const stats = this.ports.sessions.stats(sessionId)
      if (!stats || (stats.requests === 0 && stats.tokens === 0)) return []
      return [{ sessionId, stats, cost: this.ports.sessions.cost?.(sessionId), owner: this.ownerOf(sessionId) }]
    })
    if (seen.length === 0) return Promise.resolve()
    return this.queue.run(async () => {
      for (const { sessionId, stats, cost, owner } of seen) {
        const state = this.ports.log.state()
        if (!state || state.runId === null) return
        const known = state.usage.sessions[sessionId]
        if (known && stats.requests <= known.requests && stats.tokens <= known.tokens) continue
        await this.ports.log.apply({
          type: "usage.recorded",
          sessionId,
          ...(owner?.taskId ? { taskId: owner.taskId } : {}),
          role: owner?.role ?? stats.agent,
          requests: Math.max(stats.requests, known?.requests ?? 0),
          tokens: Math.max(stats.tokens, known?.tokens ?? 0),
          // The estimate beside the provider's figures: the budgets held on it where the provider said nothing, and its error where it did.
          ...(stats.estimated ? { estimated: stats.estimated } : {}),
          ...(stats.ratio !== undefined ? { ratio: stats.ratio } : {}),
          // The engine's own price of the requests (sessions/cost.ts): what the money budget is decided from.
          ...(cost ? { costUsd: cost.usd, unpriced: cost.unpriced } : {}),
          ...(stats.model ? { model: stats.model } : {}),
        })
      }
    })
  }
}
