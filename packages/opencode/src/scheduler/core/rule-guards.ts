import type { Consultant } from "./command"
import type { Draft } from "./draft"
import type { Stage, TaskRuntime } from "./state"
import type { TaskStatus } from "./task.schema"

/** The refusals the machine's rule files share: a task that is not there or not in the state an event needs, a session that is not the current one, a stage that does not allow the event. */

/** A task runs a worker session in these states (the executor's or the Debugger's). */
export const WORKER_STATUSES: readonly TaskStatus[] = ["running", "debugging"]

export function needStage(d: Draft, stages: readonly Stage[], why: string): string | undefined {
  if (stages.includes(d.s.stage)) return undefined
  return `${why} (stage: ${d.s.stage})`
}

export function findTask(d: Draft, id: string, statuses?: readonly TaskStatus[]): TaskRuntime | string {
  if (!d.s.graph) return `no task graph yet (stage: ${d.s.stage}); task ${id} is unknown`
  const t = d.task(id)
  if (!t) return `unknown task ${id}`
  if (statuses && !statuses.includes(t.status)) return `task ${id} is ${t.status}, not ${statuses.join(" or ")}`
  return t
}

/** A worker event counts only from the session the task runs in now; anything else is an echo of the past. */
export function workerTask(d: Draft, id: string, sessionId: string): TaskRuntime | string {
  const t = findTask(d, id, WORKER_STATUSES)
  if (typeof t === "string") return t
  if (t.sessionId === null)
    return `session ${sessionId} is not the current session of task ${id}: attempt ${t.attempts} has no session recorded yet (task.dispatched comes first)`
  if (t.sessionId !== sessionId) return `session ${sessionId} is not the current session of task ${id} (${t.sessionId}); its news is stale`
  return t
}

/** The task as consulted now, provided `by` is the one being asked (a stale session's answer is refused). */
export function consultedTask(d: Draft, id: string, by: Consultant): TaskRuntime | string {
  const t = findTask(d, id, ["consulting"])
  if (typeof t === "string") return t
  const asked = t.consultBy ?? "scheduler"
  if (asked !== by) return `task ${t.id} is waiting on the ${asked === "architect" ? "Architect" : "scheduler agent"}, not the ${by === "architect" ? "Architect" : "scheduler agent"}`
  return t
}
