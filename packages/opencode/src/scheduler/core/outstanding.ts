import { commandId, type Command } from "./command"
import { adrImpact } from "./graph"
import type { SchedulerState } from "./state"
import { outstandingDeploys } from "./deploy"

/**
 * The commands a state still waits on. After a restart the runtime carries these out again; their ids are
 * the ids first issued, so it can recognise work already done (a tag that exists, a session that runs).
 * Sessions that were running are not listed: the runtime reports each of them `session.lost` (recovery.ts),
 * and the same step starts again in a fresh session. Reverts ordered and not reported done (`revert.done`) come first.
 */
export function outstanding(state: SchedulerState): Command[] {
  // Reverts first: a dispatch carried out after them branches off the integration branch without the undone work.
  const commands: Command[] = pendingReverts(state)
  for (const task of state.tasks) {
    const id = task.id
    switch (task.status) {
      case "running":
      case "debugging":
        if (task.sessionId === null && task.role)
          commands.push({ type: "dispatch", id: commandId.dispatch(id, task.role, task.attempts), taskId: id, role: task.role, attempt: task.attempts, reason: "resumed after a restart" })
        break
      case "gating":
        commands.push({ type: "runGates", id: commandId.runGates(id, task.gateRuns), taskId: id })
        break
      case "reviewing":
        if (task.reviewSessionId === null) commands.push({ type: "review", id: commandId.review(id, task.reviewRuns), taskId: id, run: task.reviewRuns })
        break
      case "consulting":
        commands.push({ type: "consult", id: commandId.consult(id, task.consults), taskId: id, agent: task.consultBy ?? "scheduler", options: task.consultOptions ?? [], question: task.lastFailure?.message ?? `task ${id} needs a decision` })
        break
    }
  }
  // The batch in flight, as first issued (its tasks' tags tell the runtime what landed). A task invalidated
  // while it was being merged is still in it: if it landed, it has to be undone.
  const batch = state.merging.flatMap((id) => state.tasks.filter((t) => t.id === id))
  if (batch.length > 0) commands.push({ type: "merge", id: commandId.merge(batch[0]!.id, batch[0]!.mergeRuns), tasks: batch.map((t) => ({ taskId: t.id, round: t.merges + 1 })) })
  for (const question of state.questions) commands.push({ type: "ask", id: commandId.ask(question.questionId), questionId: question.questionId, text: question.text })
  // A review recorded as started is started again: its session died with the old process.
  if (state.milestone) commands.push({ type: "reviewMilestone", id: state.milestone.commandId, phase: state.milestone.phase, final: state.milestone.final })
  // An ADR edit the Architect had not classified yet: it is asked again.
  for (const edit of state.adrEdits) commands.push({ type: "classifyAdr", id: edit.commandId, adr: edit.adr, hash: edit.hash, tasks: state.graph ? adrImpact(state.graph, edit.adr).impacted : [] })
  if (state.frozen) commands.push({ type: "replan", id: state.frozen.commandId, text: state.frozen.text })
  // The Architect's planning session died with the old process: a new one plans from the requirement.
  if ((state.stage === "planning" || state.stage === "confirmed") && state.runId !== null)
    commands.push({ type: "plan", id: commandId.plan(state.runId), requirement: state.requirement, autoConfirm: state.config?.autoConfirm ?? false })
  // A baseline that never reported runs again (its worktree is remade; a finished one is read back from its evidence).
  if (state.baseline?.status === "running") commands.push({ type: "runBaseline", id: state.baseline.commandId })
  // The run ended but its final check was never recorded (the process died first).
  if (state.finished && state.finalCheck === null) commands.push({ type: "finish", id: commandId.finish(state.finished.status, state.eventCount), status: state.finished.status })
  // Deploys in flight when the process died: each resumes from its progress on disk (completes or rolls back).
  commands.push(...outstandingDeploys(state))
  return commands
}

/**
 * Reverts the machine ordered (a delta undid merged work) and nobody reported done: carried out again with
 * their first id; the runtime recognises a revert already made by its tag.
 */
function pendingReverts(state: SchedulerState): Command[] {
  return state.reverts.map((r) => ({ type: "revert", id: r.commandId, taskId: r.taskId, round: r.round }))
}
