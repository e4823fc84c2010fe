import { join } from "node:path"
import { readJsonLines } from "./jsonl"
import { Usage } from "./usage"

/**
 * Budgets per task and per run: model requests (counted by the `chat.params` hook in requests.jsonl),
 * tokens (where the provider reports them; counted by the runtime for the sessions it watches, in
 * tokens.json) and minutes. A limit of 0 means no limit. Spending is derived from files and the event
 * log, so a restarted process sees what the dead one spent.
 *
 * A spent budget is reported to the machine once (`budget.spent`), which blocks and asks the user. A task's
 * budget then starts afresh with its next session; each answer to the run's budget question grants the run
 * one more budget's worth. So an answered question never trips the same limit again at once.
 */
export namespace Budget {
  export type Limits = { taskRequests: number; runRequests: number; taskTokens: number; runTokens: number; runMinutes: number }
  export type Spent = {
    run: { requests: number; tokens: number; minutes: number }
    tasks: Record<string, { requests: number; tokens: number }>
  }
  export type Over = { taskId?: string; kind: "requests" | "tokens" | "minutes" }

  type LogEvent = { type: string; at: string; taskId?: string; sessionId?: string; questionId?: string }

  export function readEvents(root: string): LogEvent[] {
    return readJsonLines(join(root, ".air", "local", "state", "events.jsonl"))
  }

  /**
   * Which task each worker or reviewer session worked for, from the log. A task's spending starts again
   * after its budget was spent (and the user answered): sessions started before that no longer count.
   */
  export function sessionTasks(events: readonly LogEvent[]): Map<string, string> {
    const map = new Map<string, string>()
    for (const e of events) {
      if ((e.type === "task.dispatched" || e.type === "review.started") && e.sessionId && e.taskId) map.set(e.sessionId, e.taskId)
      if (e.type === "budget.spent" && e.taskId) for (const [session, task] of [...map]) if (task === e.taskId) map.delete(session)
    }
    return map
  }

  /** What the current run spent. */
  export function spent(root: string, events: readonly LogEvent[], now: number): Spent {
    let startAt = 0
    for (let i = events.length - 1; i >= 0; i--)
      if (events[i]!.type === "run.started") {
        startAt = Date.parse(events[i]!.at)
        break
      }
    const owner = sessionTasks(events)
    const tasks: Spent["tasks"] = {}
    let requests = 0
    for (const r of Usage.entries(root)) {
      if (startAt && Date.parse(r.at) < startAt) continue
      requests++
      const taskId = owner.get(r.sessionID)
      if (taskId) (tasks[taskId] ??= { requests: 0, tokens: 0 }).requests++
    }
    let tokens = 0
    for (const [sessionID, used] of Object.entries(Usage.readTokens(root))) {
      if (startAt && Date.parse(used.at) < startAt) continue
      tokens += used.tokens
      const taskId = owner.get(sessionID)
      if (taskId) (tasks[taskId] ??= { requests: 0, tokens: 0 }).tokens += used.tokens
    }
    return { run: { requests, tokens, minutes: startAt ? Math.floor((now - startAt) / 60_000) : 0 }, tasks }
  }

  /** The budgets overrun now (a limit of N allows N), given the log (answers raise the limits). */
  export function over(limits: Limits, spent: Spent, events: readonly LogEvent[], active: readonly string[]): Over[] {
    const out: Over[] = []
    const runGrants = 1 + events.filter((e) => e.type === "question.answered" && e.questionId?.startsWith("run:budget:")).length
    const runChecks: [Over["kind"], number, number][] = [
      ["requests", limits.runRequests, spent.run.requests],
      ["tokens", limits.runTokens, spent.run.tokens],
      ["minutes", limits.runMinutes, spent.run.minutes],
    ]
    for (const [kind, limit, used] of runChecks) if (limit > 0 && used > limit * runGrants) out.push({ kind })
    for (const taskId of active) {
      const used = spent.tasks[taskId]
      if (!used) continue
      if (limits.taskRequests > 0 && used.requests > limits.taskRequests) out.push({ taskId, kind: "requests" })
      else if (limits.taskTokens > 0 && used.tokens > limits.taskTokens) out.push({ taskId, kind: "tokens" })
    }
    return out
  }
}
