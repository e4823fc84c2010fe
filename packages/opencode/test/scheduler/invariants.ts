import { expect } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import { tasksConflict } from "../../src/scheduler/core/conflicts"
import type { Event } from "../../src/scheduler/core/event.schema"
import { workingCount } from "../../src/scheduler/core/draft"
import { ACTIVE_STATUSES, type SchedulerState } from "../../src/scheduler/core/state"

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/** Checks the invariants on one accepted event; throws with the seed's story when one breaks. */
export function checkStep(before: SchedulerState, event: Event, after: SchedulerState, commands: Command[]): void {
  deepFreeze(after) // a later transition that writes into this state throws: transitions must not mutate their input
  const graph = after.graph
  const cap = after.config?.concurrency ?? Infinity
  // The cap counts tasks at work; up to `cap` of those waiting for or in their merge hold files, not a slot.
  // Only a merge conflict or a failed merge build may take the count over the cap (its task goes back at once);
  // no task starts over it.
  const merging = after.tasks.filter((t) => t.status === "merge_queued" || t.status === "merging").length
  const working = after.active.length - Math.min(merging, cap)
  expect(workingCount(after)).toBe(working)
  if (working > cap && event.type !== "merge.conflicted" && event.type !== "merge.rejected" && working > workingCount(before))
    throw new Error(`cap ${cap} exceeded after ${event.type}: ${after.active.join(", ")}`)
  const startedNow = after.tasks.filter((t) => ACTIVE_STATUSES.has(t.status) && (before.tasks.find((x) => x.id === t.id)?.status ?? "pending") === "pending")
  if (startedNow.length > 0 && working > cap) throw new Error(`${startedNow.map((t) => t.id).join(", ")} started over the cap ${cap} after ${event.type}`)
  if (graph) {
    const node = (id: string) => graph.tasks.find((t) => t.id === id)!
    const status = (id: string) => after.tasks.find((t) => t.id === id)!.status
    // Active list and statuses agree.
    const activeByStatus = after.tasks.filter((t) => ACTIVE_STATUSES.has(t.status)).map((t) => t.id).sort()
    expect([...after.active].sort()).toEqual(activeByStatus)
    // No two conflicting tasks in flight at once.
    for (let i = 0; i < after.active.length; i++)
      for (let j = i + 1; j < after.active.length; j++) {
        const c = tasksConflict(node(after.active[i]!), node(after.active[j]!))
        if (c) throw new Error(`conflicting tasks in flight after ${event.type}: ${c.a} and ${c.b} on ${c.path} (${c.why})`)
      }
    // At most one batch in flight, no larger than the run's batch size, and every task being merged is in it.
    expect(after.merging.length).toBeLessThanOrEqual(after.config?.mergeBatch ?? 1)
    for (const t of after.tasks) if (t.status === "merging") expect(after.merging).toContain(t.id)
    for (const t of after.tasks) {
      const prev = before.tasks.find((x) => x.id === t.id)
      // A task leaves pending only when all its dependencies are merged.
      if ((prev?.status ?? "pending") === "pending" && ACTIVE_STATUSES.has(t.status))
        for (const dep of node(t.id).deps) if (status(dep) !== "merged") throw new Error(`${t.id} started before its dependency ${dep} merged (${status(dep)})`)
    }
  }
  for (const command of commands) {
    if (command.type !== "dispatch") continue
    const prev = before.tasks.find((t) => t.id === command.taskId)
    // The one legitimate way back: a plan delta that changes a merged task reverts it first, then redoes it.
    const revertedFirst = event.type === "delta.accepted" && commands.some((c) => c.type === "revert" && c.taskId === command.taskId)
    if (prev?.status === "merged" && !revertedFirst) throw new Error(`merged task ${command.taskId} dispatched again`)
  }
}

