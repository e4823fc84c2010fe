import type { SchedulerState } from "../scheduler/core/state"

/** The task graph laid out for drawing (the dashboard): each task's layer and row, and the edges between tasks. */
export namespace RunGraph {
  export type GraphNode = { id: string; title: string; state: string; layer: number; row: number }
  export type Graph = { nodes: GraphNode[]; edges: { from: string; to: string }[]; layers: number }

  /** Layers by dependency depth: a task sits one layer right of its deepest dependency. */
  export function of(state: SchedulerState): Graph {
    const tasks = state.graph?.tasks ?? []
    const byId = new Map(tasks.map((n) => [n.id, n]))
    const status = new Map(state.tasks.map((rt) => [rt.id, rt.status]))
    const depth = new Map<string, number>()
    const visit = (id: string, seen: Set<string>): number => {
      const known = depth.get(id)
      if (known !== undefined) return known
      if (seen.has(id)) return 0 // a cycle never passes validation; stay finite anyway
      seen.add(id)
      const node = byId.get(id)
      const d = node && node.deps.length ? 1 + Math.max(...node.deps.filter((x) => byId.has(x)).map((x) => visit(x, seen)), -1) : 0
      depth.set(id, d)
      return d
    }
    for (const n of tasks) visit(n.id, new Set())
    const rows = new Map<number, number>()
    const nodes = tasks.map((n) => {
      const layer = depth.get(n.id) ?? 0
      const row = rows.get(layer) ?? 0
      rows.set(layer, row + 1)
      return { id: n.id, title: n.title, state: status.get(n.id) ?? n.status ?? "pending", layer, row }
    })
    const edges = tasks.flatMap((n) => n.deps.filter((d) => byId.has(d)).map((d) => ({ from: d, to: n.id })))
    return { nodes, edges, layers: Math.max(0, ...nodes.map((n) => n.layer + 1)) }
  }
}
