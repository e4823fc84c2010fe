import type { PlanDelta } from "./delta.schema"
import { adrImpact, unusedId } from "./graph"
import { ACTIVE_STATUSES } from "./state"
import type { TaskGraph, TaskNode, TaskStatus } from "./task.schema"

/**
 * The plan delta a decision change to an accepted ADR amounts to (the Architect classified an edit of the
 * file as one). The tasks citing the ADR (`adrImpact`) are reached as a superseded ADR reaches them, except
 * that nobody wrote replacement tasks: the ADR itself is the new decision, so
 * - work in flight (or blocked, or being consulted on) is redone from the start, on the edited ADR;
 * - merged work is re-verified against it by a generated `verify` task (`<id>.rv`), whose failure takes the
 *   usual repair path;
 * - pending work is left alone: it starts later and reads the ADR as it is then.
 */
export function adrCascade(graph: TaskGraph, statusOf: (id: string) => TaskStatus | undefined, adr: string, phase: number): { delta: PlanDelta; boundary: string[] } {
  const { impacted, boundary } = adrImpact(graph, adr)
  const byId = new Map(graph.tasks.map((t) => [t.id, t]))
  const taken = new Set(graph.tasks.map((t) => t.id))
  const add: TaskNode[] = []
  const modify: PlanDelta["modify"] = []
  for (const id of impacted) {
    const status = statusOf(id) ?? "pending"
    if (status === "merged") {
      const task = byId.get(id)!
      const newId = unusedId(id, taken)
      taken.add(newId)
      add.push({
        id: newId,
        title: `Re-verify ${id} (${task.title}) against the edited ${adr}`,
        kind: "verify",
        phase: Math.max(task.phase, phase),
        deps: [],
        writeSet: [],
        keep: task.keep,
        doneWhen: `${task.doneWhen} — and the code follows ${adr} as edited`,
        validation: task.validation,
        adrRefs: task.adrRefs,
        files: [...new Set([...(task.files ?? []), ...task.writeSet.map((entry) => entry.path)])],
      })
    } else if (ACTIVE_STATUSES.has(status) || status === "blocked") modify.push({ id, patch: {} })
  }
  return { delta: { schemaVersion: 1, add, remove: [], modify, supersedesAdrs: [] }, boundary }
}
