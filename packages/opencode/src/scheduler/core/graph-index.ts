import { compareIds } from "./names"
import type { TaskGraph, TaskNode } from "./task.schema"

/**
 * Lookups derived from a graph. A graph is never mutated (every change makes a new one), so the index is
 * built once per graph object and cached beside it.
 */
export interface GraphIndex {
  readonly indexOf: ReadonlyMap<string, number>
  /** dependents[i]: indices of the tasks that list tasks[i] among their deps. */
  readonly dependents: readonly (readonly number[])[]
  readonly phases: readonly number[]
  /** rank[i]: place of tasks[i] in dispatch order (phase, then natural id order); compared as plain numbers. */
  readonly rank: Int32Array
}

const cache = new WeakMap<TaskGraph, GraphIndex>()

export function graphIndex(graph: TaskGraph): GraphIndex {
  const cached = cache.get(graph)
  if (cached) return cached
  const indexOf = new Map<string, number>()
  graph.tasks.forEach((task, i) => {
    if (!indexOf.has(task.id)) indexOf.set(task.id, i)
  })
  const dependents: number[][] = graph.tasks.map(() => [])
  const phases = new Set<number>()
  graph.tasks.forEach((task, i) => {
    if (task.status !== "invalidated") phases.add(task.phase)
    for (const dep of task.deps) {
      const d = indexOf.get(dep)
      if (d !== undefined) dependents[d]!.push(i)
    }
  })
  const order = graph.tasks.map((_, i) => i)
  order.sort((a, b) => graph.tasks[a]!.phase - graph.tasks[b]!.phase || compareIds(graph.tasks[a]!.id, graph.tasks[b]!.id))
  const rank = new Int32Array(graph.tasks.length)
  order.forEach((taskIndex, position) => (rank[taskIndex] = position))
  const index: GraphIndex = { indexOf, dependents, phases: [...phases].sort((a, b) => a - b), rank }
  cache.set(graph, index)
  return index
}

export function isLive(task: TaskNode): boolean {
  return task.status !== "invalidated"
}
