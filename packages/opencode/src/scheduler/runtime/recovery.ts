import { outstanding } from "../core/outstanding"
import { Proposal } from "./sessions/proposal"
import type { SchedulerState } from "../core/state"
import type { Clock } from "./sessions/clock"
import type { Interpreter } from "./interpreter"
import type { Ports } from "./ports"

/**
 * A run that was in progress when the last process died: carry out again what the state still waits on —
 * outstanding() lists it all (dispatches, gates, reviews, merges, consults, questions, the milestone review,
 * the replan, the Architect's planning session, the final check); command ids make that safe — and report
 * the sessions of the old process as lost. Pending reverts are in that list too (the state keeps them until revert.done).
 */
export function resume(ports: Ports, interpreter: Interpreter, clock: Clock, state: SchedulerState): void {
  const { inbox, log } = ports
  if (state.stage === "idle") return
  if (state.finished) {
    // The process may have died between the end of the run and its final check, or before a worktree went.
    const old = state.finalCheck === null ? ports.finalCheck.read(ports.root) : undefined
    if (old) void log.apply({ type: "finalCheck.done", status: old.passed ? "passed" : "failed", message: old.summary })
    else for (const cmd of outstanding(state)) if (cmd.type === "finish") interpreter.execute(cmd)
    void interpreter.removeMergedWorktrees().catch((err) => inbox.push(`Could not remove the worktrees of merged tasks: ${(err as Error).message}`))
    return
  }
  inbox.push(`Resuming run ${state.runId} from the event log (stage ${state.stage}).`)
  for (const cmd of outstanding(state)) interpreter.execute(cmd)
  // An ADR edited while no process ran is noticed now, not at the next dispatch only.
  void interpreter.checkAdrs().catch((err) => inbox.push(`Could not compare the ADRs with the log: ${(err as Error).message}`))
  for (const t of state.tasks) {
    // Sessions of the dead process: lost, not failed — the same step starts again at no cost to the budgets.
    if ((t.status === "running" || t.status === "debugging") && t.sessionId) void log.apply({ type: "session.lost", taskId: t.id, sessionId: t.sessionId })
    if (t.status === "reviewing" && t.reviewSessionId) void log.apply({ type: "session.lost", taskId: t.id, sessionId: t.reviewSessionId })
  }
  // The user had not answered the proposal yet: ask again.
  if (state.stage === "confirming") inbox.push(Proposal.text(ports.root, state.planSummary ?? ""), true)
  clock.start(state.config?.inactivityMs ?? ports.settings().inactivityMs)
}

