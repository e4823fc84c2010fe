import { ContextPack } from "../scheduler/context-pack"
import { outstanding } from "../scheduler/outstanding"
import { Proposal } from "./proposal"
import type { SchedulerState } from "../scheduler/state"
import { Worktrees } from "../scheduler/worktree"
import type { Clock } from "./clock"
import type { Interpreter } from "./interpreter"
import type { Ports } from "./ports"

/**
 * A run that was in progress when the last process died: carry out again what the state still waits
 * on (command ids make that safe), and report the sessions of the old process as lost.
 */
export function resume(ports: Ports, interpreter: Interpreter, clock: Clock, state: SchedulerState): void {
  const { inbox, log, root } = ports
  if (state.stage === "idle") return
  if (state.finished) {
    // The process may have died between the last merge and the final build of the integration branch.
    if (state.finished.status === "done" && !ports.finalCheck.read(root))
      void ports.finalCheck.run(root).catch((err) => inbox.push(`The final build of the integration branch could not run: ${(err as Error).message}`))
    return
  }
  inbox.push(`Resuming run ${state.runId} from the event log (stage ${state.stage}).`)
  for (const cmd of outstanding(state)) interpreter.execute(cmd)
  void resumeReverts(ports, interpreter, state).catch((err) => inbox.push(`Could not finish a revert after the restart: ${(err as Error).message}`, true))
  for (const t of state.tasks) {
    // Sessions of the dead process: lost, not failed — the same step starts again at no cost to the budgets.
    if ((t.status === "running" || t.status === "debugging") && t.sessionId) void log.apply({ type: "session.lost", taskId: t.id, sessionId: t.sessionId })
    if (t.status === "reviewing" && t.reviewSessionId) void log.apply({ type: "session.lost", taskId: t.id, sessionId: t.reviewSessionId })
  }
  // A milestone review whose session died with the old process: review again (it was recorded as started).
  if (state.stage === "milestone" && state.milestone?.reviewing) {
    const phase = state.milestone.phase
    void interpreter.reviewMilestone(phase, true).catch((err) => inbox.push(`Could not restart the milestone review: ${(err as Error).message}`, true))
  }
  // The Architect's session died with the old process: a new one is told where the plan stands.
  if (state.stage === "planning" || state.stage === "confirmed")
    void restartArchitect(interpreter, state).catch((err) => inbox.push(`Could not restart the Architect: ${(err as Error).message}`, true))
  // The user had not answered the proposal yet: ask again.
  if (state.stage === "confirming") inbox.push(Proposal.text(root, state.planSummary ?? ""), true)
  clock.start(state.config?.inactivityMs ?? ports.settings().inactivityMs)
}

function restartArchitect(interpreter: Interpreter, state: SchedulerState): Promise<void> {
  const summary = state.planSummary
  if (state.stage === "confirmed" && summary !== null && !state.config?.autoConfirm)
    return interpreter.toArchitect(ContextPack.confirmedText(), ContextPack.architectAgain(state.requirement, summary, { confirmed: true }))
  if (state.stage === "planning" && state.planRevision !== undefined && summary !== null) {
    const revision = state.planRevision
    return interpreter.toArchitect(ContextPack.revisionText(revision), ContextPack.architectAgain(state.requirement, summary, { confirmed: false, revision }))
  }
  return interpreter.spawnArchitect(state.requirement, state.config?.autoConfirm ?? false)
}

/**
 * Reverts are not in the state's outstanding work (the delta already reset the task): after a restart, a task
 * that is no longer merged but still has its air/done tag is reverted now (a finished revert is recognised).
 */
export async function resumeReverts(ports: Ports, interpreter: Interpreter, state: SchedulerState): Promise<void> {
  for (const t of state.tasks) {
    if (t.status === "merged" || t.status === "merging" || t.status === "merge_queued" || t.merges === 0) continue
    const has = (tag: string) => ports.git(ports.root, ["rev-parse", "-q", "--verify", `refs/tags/${tag}`]).then(() => true, () => false)
    if ((await has(Worktrees.doneTag(t.id, t.merges))) && !(await has(Worktrees.revertedTag(t.id, t.merges)))) await interpreter.revert(t.id, t.merges)
  }
}
