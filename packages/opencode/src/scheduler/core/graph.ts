import { FileIndex } from "./conflicts"
import type { PlanDelta } from "./delta.schema"
import { graphIndex, isLive } from "./graph-index"
import { compareIds } from "./names"
import type { TaskGraph, TaskNode, TaskStatus } from "./task.schema"
import { ACTIVE_STATUSES } from "./state"

type StatusOf = (id: string) => TaskStatus | undefined

/** Dispatch order: lowest phase first, then natural id order. */
function compareTasks(a: TaskNode, b: TaskNode): number {
  return a.phase - b.phase || compareIds(a.id, b.id)
}

/**
 * Tasks that may start now, in dispatch order: pending, every dependency merged, in the earliest phase that
 * still has unmerged work, and no write-set conflict with a task in flight. The cap is the caller's business.
 * Conflicts are looked up through an index of the files held by tasks in flight.
 */
export function readySet(graph: TaskGraph, statusOf: StatusOf): string[] {
  const holders = new FileIndex()
  let phase = Infinity
  for (const task of graph.tasks) {
    if (!isLive(task)) continue
    const status = statusOf(task.id) ?? "pending"
    if (ACTIVE_STATUSES.has(status)) holders.add(task)
    if (status !== "merged" && status !== "invalidated") phase = Math.min(phase, task.phase)
  }
  const ready: TaskNode[] = []
  for (const task of graph.tasks) {
    if (!isLive(task) || task.phase !== phase) continue
    if ((statusOf(task.id) ?? "pending") !== "pending") continue
    if (!task.deps.every((dep) => statusOf(dep) === "merged")) continue
    if (holders.conflictFor(task)) continue
    ready.push(task)
  }
  return ready.sort(compareTasks).map((task) => task.id)
}

interface DeltaImpact {
  id: string
  /** How the delta reaches the task; "reverify" is a task the Scheduler generated to re-check a boundary task. */
  change: "removed" | "modified" | "superseded" | "added" | "reverify"
  reason: string
  /** What becomes of the task. */
  becomes: "invalidated" | "pending"
  /** What must be undone first, given the task's status when the delta arrives. */
  undo: "none" | "abort" | "revert" | "revert-after-merge"
}

export interface DeltaResult {
  graph: TaskGraph
  impacts: DeltaImpact[]
  /** Live tasks the delta leaves alone that depend on, or share a file with, an impacted task: worth re-verifying. */
  boundary: string[]
}

/**
 * Applies a plan delta. Existing tasks keep their places (a removed or superseded task stays in the graph
 * marked invalidated, so its id is never reused for another branch or tag); added tasks are appended.
 * Only tasks the delta names — removed, modified, or citing a superseded ADR — are touched.
 * The delta is expected to have passed validateDelta.
 */
export function applyDelta(graph: TaskGraph, statusOf: StatusOf, delta: PlanDelta): DeltaResult {
  const removed = new Set(delta.remove)
  const patches = new Map(delta.modify.map((m) => [m.id, m.patch]))
  const superseded = new Set(delta.supersedesAdrs)
  const impacts: DeltaImpact[] = []

  const undoFor = (id: string): DeltaImpact["undo"] => {
    const status = statusOf(id) ?? "pending"
    if (status === "merged") return "revert"
    if (status === "merging") return "revert-after-merge"
    if (ACTIVE_STATUSES.has(status)) return "abort"
    return "none"
  }

  const tasks = graph.tasks.map((task): TaskNode => {
    if (!isLive(task)) return task
    if (removed.has(task.id)) {
      impacts.push({ id: task.id, change: "removed", reason: "removed by the plan delta", becomes: "invalidated", undo: undoFor(task.id) })
      return { ...task, status: "invalidated" }
    }
    const patch = patches.get(task.id)
    if (patch) {
      impacts.push({ id: task.id, change: "modified", reason: "modified by the plan delta", becomes: "pending", undo: undoFor(task.id) })
      const { status: _drop, ...rest } = task
      return { ...rest, ...patch }
    }
    const adr = task.adrRefs.find((ref) => superseded.has(ref))
    if (adr) {
      impacts.push({ id: task.id, change: "superseded", reason: `cites ${adr}, which the delta supersedes`, becomes: "invalidated", undo: undoFor(task.id) })
      return { ...task, status: "invalidated" }
    }
    return task
  })
  for (const task of delta.add) {
    impacts.push({ id: task.id, change: "added", reason: "added by the plan delta", becomes: "pending", undo: "none" })
    tasks.push(task)
  }
  const touched = new Set(impacts.map((impact) => impact.id))
  const changed = impacts.filter((impact) => impact.change !== "added").map((impact) => impact.id)
  // Boundary is judged against the tasks as they were, since that is the code that is now in question.
  const boundary = boundaryOf(graph, new Set(changed)).filter((id) => !touched.has(id))
  // Only merged neighbours of work that had landed were checked against code that is now undone.
  const landed = new Set(impacts.filter((impact) => impact.undo === "revert" || impact.undo === "revert-after-merge").map((impact) => impact.id))
  const toReverify = landed.size === 0 ? [] : boundaryOf(graph, landed).filter((id) => !touched.has(id) && statusOf(id) === "merged")
  for (const task of reverifyTasks(graph, tasks, toReverify, delta)) {
    impacts.push({ id: task.id, change: "reverify", reason: task.title, becomes: "pending", undo: "none" })
    tasks.push(task)
  }
  return { graph: { ...graph, tasks }, impacts, boundary }
}

/**
 * A merged task next to merged work the delta undoes (it depends on it, or shares a file with it) was
 * checked against code that is going away: a generated `verify` task checks it again once the new work
 * has landed. It depends on the delta's new or modified tasks near it — or on all of them when none is
 * near. Neighbours not merged yet need nothing: their own gates run on the new code.
 */
function reverifyTasks(before: TaskGraph, after: readonly TaskNode[], merged: readonly string[], delta: PlanDelta): TaskNode[] {
  const { indexOf } = graphIndex(before)
  const taken = new Set(after.map((t) => t.id))
  const byId = new Map(after.map((t) => [t.id, t]))
  const fresh = [...delta.add.map((t) => t.id), ...delta.modify.map((m) => m.id)].filter((id) => isLive(byId.get(id)!))
  const superseded = new Set(delta.supersedesAdrs)
  const out: TaskNode[] = []
  for (const id of merged) {
    const task = before.tasks[indexOf.get(id)!]!
    const files = new Set(task.writeSet.map((entry) => entry.path))
    const near = fresh.filter((f) => task.deps.includes(f) || byId.get(f)!.writeSet.some((entry) => files.has(entry.path)))
    const deps = near.length > 0 ? near : fresh
    const newId = unusedId(id, taken)
    taken.add(newId)
    out.push({
      id: newId,
      title: `Re-verify ${id} (${task.title}) after the plan change`,
      kind: "verify",
      phase: Math.max(task.phase, ...deps.map((dep) => byId.get(dep)!.phase)),
      deps,
      writeSet: [],
      keep: task.keep,
      doneWhen: `${task.doneWhen} — still true on the integration branch after the plan change`,
      validation: task.validation,
      adrRefs: task.adrRefs.filter((ref) => !superseded.has(ref)),
      files: [...files],
    })
  }
  return out
}

/** `<id>.rv`, then `<id>.rv2` …: a valid id (at most 64 characters, no "..") that no task has. */
export function unusedId(id: string, taken: ReadonlySet<string>): string {
  const short = `${id.slice(0, 58).replace(/\.+$/, "")}.rv`
  if (!taken.has(short)) return short
  for (let n = 2; ; n++) if (!taken.has(`${short}${n}`)) return `${short}${n}`
}

interface AdrImpact {
  /** Tasks that cite the ADR. */
  impacted: string[]
  /** Tasks that depend on an impacted task or share a file with one. */
  boundary: string[]
  safe: string[]
}

/** What a change to one ADR reaches. */
export function adrImpact(graph: TaskGraph, adrId: string): AdrImpact {
  const impacted = new Set<string>()
  for (const task of graph.tasks) if (isLive(task) && task.adrRefs.includes(adrId)) impacted.add(task.id)
  const boundary = boundaryOf(graph, impacted)
  const boundarySet = new Set(boundary)
  const safe = graph.tasks.filter((t) => isLive(t) && !impacted.has(t.id) && !boundarySet.has(t.id)).map((t) => t.id)
  return { impacted: sortIds([...impacted]), boundary, safe: sortIds(safe) }
}

/** Live tasks outside `impacted` that depend directly on one of them or touch one of their files. */
function boundaryOf(graph: TaskGraph, impacted: ReadonlySet<string>): string[] {
  const { indexOf, dependents } = graphIndex(graph)
  const files = new Set<string>()
  const out = new Set<string>()
  for (const id of impacted) {
    const i = indexOf.get(id)
    if (i === undefined) continue
    for (const entry of graph.tasks[i]!.writeSet) files.add(entry.path)
    for (const d of dependents[i]!) {
      const dependent = graph.tasks[d]!
      if (isLive(dependent) && !impacted.has(dependent.id)) out.add(dependent.id)
    }
  }
  if (files.size > 0) {
    for (const task of graph.tasks) {
      if (!isLive(task) || impacted.has(task.id) || out.has(task.id)) continue
      if (task.writeSet.some((entry) => files.has(entry.path))) out.add(task.id)
    }
  }
  return sortIds([...out])
}

function sortIds(ids: string[]): string[] {
  return ids.sort(compareIds)
}
