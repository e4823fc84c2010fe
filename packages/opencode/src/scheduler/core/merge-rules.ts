import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import type { TaskRuntime } from "./state"
import { findTask } from "./rule-guards"

/** The machine's rules for the merge queue: a batch in flight lands, conflicts, fails its merge build (whole or per task), or is deferred or blocked; nothing that did not land counts as merged. */

export function mergeStarted(d: Draft, e: EventOf<"merge.started">): string | undefined {
  const t = findTask(d, e.taskId)
  if (typeof t === "string") return t
  return notInFlight(d, t.id)
}

export function mergeSucceeded(d: Draft, e: EventOf<"merge.succeeded">): string | undefined {
  const t = findTask(d, e.taskId)
  if (typeof t === "string") return t
  const refused = notInFlight(d, t.id)
  if (refused) return `${refused}; a merge is never recorded twice`
  d.leaveBatch(t.id)
  const head = e.head ? { head: e.head } : {}
  if (t.revertOnMerge) {
    // The plan changed while this merge ran: undo it now that it landed.
    d.patch(t.id, { revertOnMerge: false, merged: { commit: e.commit, tag: e.tag, ...head }, merges: t.merges + 1 })
    d.revert(t.id)
    d.offerReady(t.id)
  } else {
    d.markMerged(t.id, e.commit, e.tag, e.head)
    d.notify(`task ${t.id} merged (${e.tag})`)
  }
  d.pumpMerge()
  d.schedule()
}

export function mergeConflicted(d: Draft, e: EventOf<"merge.conflicted">): string | undefined {
  return mergeFailed(d, e.taskId, (t) => {
    const files = e.files.join(", ") || "(files not named)"
    d.repairOrConsult(t.id, "executor", `merge conflict in ${files}: rebase on the integration branch and resolve it`, { source: "merge", message: `conflict in ${files}`, evidencePath: null }, ["executor-again", "block"])
  })
}

/** The combined tree fails: nothing landed, the queue moves on, and the task goes to the Debugger on its rebased branch. */
export function mergeRejected(d: Draft, e: EventOf<"merge.rejected">): string | undefined {
  return mergeFailed(d, e.taskId, (t) => {
    const failure = { source: "merge-build", message: e.message, evidencePath: e.evidencePath }
    const reason = `the merge build failed on the integration head: ${e.message} (evidence: ${e.evidencePath})`
    d.repairOrConsult(t.id, "debugger", reason, failure, ["debug-again", "executor-again", "block"])
  })
}

/** The batch failed as a whole: no task is blamed; its halves are tried in turn until one task is left with the failure. */
export function mergeBatchRejected(d: Draft, e: EventOf<"merge.batch-rejected">): string | undefined {
  for (const id of e.taskIds) {
    const t = findTask(d, id)
    if (typeof t === "string") return t
    const refused = notInFlight(d, id)
    if (refused) return refused
  }
  if (new Set(e.taskIds).size !== e.taskIds.length) return `the batch names a task twice: ${e.taskIds.join(", ")}`
  const back: string[] = []
  for (const id of e.taskIds) {
    const t = d.task(id)!
    if (!t.revertOnMerge) {
      back.push(id)
      continue
    }
    // The plan no longer wants it merged, and nothing of it landed.
    d.leaveBatch(id)
    d.patch(id, { revertOnMerge: false })
    d.offerReady(id)
  }
  d.splitBatch(back)
  d.notify(`the merge build of ${e.taskIds.join(", ")} together failed (evidence: ${e.evidencePath}); they are merged again in smaller batches to find the cause`)
  d.pumpMerge()
  d.schedule()
}

/** The batch stopped before this task's outcome (its merge was blocked on another task's account): nothing of it landed; it is merged again first. */
export function mergeDeferred(d: Draft, e: EventOf<"merge.deferred">): string | undefined {
  return mergeFailed(d, e.taskId, (t) => d.requeueFirst([t.id], "its batch went on without it: merged next, on its own"))
}

/** Nothing landed: the queue moves on at once; the task waits for the user, whose answer queues its merge again. */
export function mergeBlocked(d: Draft, e: EventOf<"merge.blocked">): string | undefined {
  return mergeFailed(d, e.taskId, (t) => {
    d.patch(t.id, { lastFailure: { source: `merge:${e.tag}`, message: e.message, evidencePath: null } })
    d.block(t.id, `its merge could not be carried out (${e.tag}): ${e.message}`, "merge")
  })
}

/**
 * The merge in flight did not land (a conflict, or a merge that could not be carried out): the queue moves
 * on; a task the plan no longer wants merged goes back to ready, any other is handled by `onFailure`.
 */
function mergeFailed(d: Draft, taskId: string, onFailure: (t: TaskRuntime) => void): string | undefined {
  const t = findTask(d, taskId)
  if (typeof t === "string") return t
  const refused = notInFlight(d, t.id)
  if (refused) return refused
  d.leaveBatch(t.id)
  if (t.revertOnMerge) {
    d.patch(t.id, { revertOnMerge: false })
    d.offerReady(t.id)
  } else onFailure(t)
  d.pumpMerge()
  d.schedule()
  return undefined
}

/** Why an outcome of this task's merge is refused: it is not in the batch in flight. */
function notInFlight(d: Draft, id: string): string | undefined {
  if (d.s.merging.includes(id)) return undefined
  return `task ${id} is not the merge in flight (${d.s.merging.join(", ") || "none"})`
}
