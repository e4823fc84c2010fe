import type { SchedulerState, Stage } from "../core/state"
import type { Ports } from "./ports"

/**
 * The last line of defence behind "every command ends in one event" (issue 44): a run must never sit with nothing
 * in flight, nothing waiting for a person and work left. Every `WATCH_MS` the watchdog looks; a state that stays
 * stalled, unchanged, for `STALLED_LOOKS` looks in a row is recorded as `runtime.fault` (source watchdog, with what
 * it saw), and the machine asks one question (core/fault-rules.ts). A task whose state says a session works but
 * whose session no longer exists is first reported lost, as a restart would: that is recovery, not a fault.
 */
export namespace Watchdog {
  export const WATCH_MS = 2_000
  export const STALLED_LOOKS = 3

  /** The stages in which the Scheduler always has something at work: a command, a session, or a timer it waits on. */
  const BUSY_STAGES: readonly Stage[] = ["planning", "confirmed", "running", "milestone", "deploying"]

  export type Seen = { inFlight: number; sessions: readonly string[]; now: number }

  /** Why the state is stalled (what a person reads in the question), or undefined when something is at work or waited on. Pure. */
  export function stalled(state: SchedulerState, seen: Seen): string | undefined {
    if (state.runId === null || state.finished || !BUSY_STAGES.includes(state.stage)) return undefined
    if (state.paused || state.questions.length > 0) return undefined
    if (seen.inFlight > 0 || seen.sessions.length > 0) return undefined
    // A provider's rate limit holds new calls until its time: waiting on the clock is not waiting on nothing.
    if (state.rateLimit && Date.parse(state.rateLimit.until) > seen.now) return undefined
    const counts = new Map<string, number>()
    for (const t of state.tasks) counts.set(t.status, (counts.get(t.status) ?? 0) + 1)
    const tasks = [...counts].map(([status, n]) => `${n} ${status}`).join(", ")
    return `stage ${state.stage}${tasks ? `, tasks: ${tasks}` : ""}; no command in flight, no session at work`
  }

  /** Sessions the state says work (a task's worker or reviewer) that the runtime no longer watches. */
  export function lostSessions(state: SchedulerState, watched: readonly string[]): { taskId: string; sessionId: string }[] {
    const live = new Set(watched)
    const lost: { taskId: string; sessionId: string }[] = []
    for (const t of state.tasks) {
      if ((t.status === "running" || t.status === "debugging") && t.sessionId && !live.has(t.sessionId)) lost.push({ taskId: t.id, sessionId: t.sessionId })
      if (t.status === "reviewing" && t.reviewSessionId && !live.has(t.reviewSessionId)) lost.push({ taskId: t.id, sessionId: t.reviewSessionId })
    }
    return lost
  }

  /** Watches the run for the life of the process (the timer never keeps it alive). */
  export function start(ports: Ports, inFlight: () => number): () => void {
    let looks = 0
    let lastCount = -1
    let checking = false
    return ports.clock.every(WATCH_MS, () => {
      if (checking) return
      checking = true
      void look()
        .catch((err) => ports.inbox.push(`The watchdog could not look at the run: ${(err as Error).message}`))
        .finally(() => (checking = false))
    })

    async function look(): Promise<void> {
      const state = ports.log.state()
      const sessions = ports.sessions.ids()
      const why = state ? stalled(state, { inFlight: inFlight(), sessions, now: ports.clock.now() }) : undefined
      // Only a state that stayed the same (no event in between) for several looks is stalled: a command that just
      // ended has already issued the next one, but give the runtime its moment all the same.
      if (!state || !why || state.eventCount !== lastCount) {
        looks = why && state ? 1 : 0
        lastCount = state?.eventCount ?? -1
        return
      }
      if (++looks < STALLED_LOOKS) return
      looks = 0
      const lost = lostSessions(state, sessions)
      if (lost.length > 0) {
        for (const l of lost) await ports.log.apply({ type: "session.lost", taskId: l.taskId, sessionId: l.sessionId })
        return
      }
      await ports.log.apply({ type: "runtime.fault", source: "watchdog", message: "nothing in flight, nothing asked, work left", state: why })
    }
  }
}
