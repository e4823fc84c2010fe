import { startBaselineOnce } from "./baseline"
import { commandId } from "./command"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import { graphIndex, isLive } from "./graph-index"
import { newTaskRuntime } from "./state"
import { validateDelta, validateGraph, type ValidationError } from "./validate"
import { stepEnded, stepStarted } from "./steps"
import { needStage } from "./rule-guards"

/** The machine's rules for the plan: the Architect's proposal, the user's confirmation or revision, the task graph, a requirement change and the plan delta that answers it (`acceptDelta`, shared by milestone fixes, consults and ADR cascades), and the reverts a delta orders. */

export function planProposed(d: Draft, e: EventOf<"plan.proposed">): string | undefined {
  const refusal = needStage(d, ["planning", "confirming", "confirmed"], "a plan can be proposed only before the graph is accepted; later changes go through change.requested")
  if (refusal) return refusal
  d.s.planSummary = e.summary
  if (e.graph) d.s.proposedGraph = e.graph
  else delete d.s.proposedGraph
  delete d.s.planRevision
  d.s.stage = d.s.config!.autoConfirm ? "confirmed" : "confirming"
  // The Architect goes on to the graph (auto-confirmed), or waits for the user, untimed.
  d.s.steps = d.s.config!.autoConfirm ? stepStarted(d.s, "plan", e.at) : stepEnded(d.s, "plan")
  d.notify(d.s.config!.autoConfirm ? "plan proposed and confirmed automatically" : "plan proposed; waiting for the user's confirmation")
}

export function planConfirmed(d: Draft): string | undefined {
  if (d.s.stage !== "confirming") return `no plan waits for confirmation (stage: ${d.s.stage})`
  d.s.stage = "confirmed"
  d.s.steps = stepStarted(d.s, "plan", d.event.at)
  d.notify("plan confirmed by the user")
  startBaselineOnce(d)
}

export function planRevisionRequested(d: Draft, e: EventOf<"plan.revision.requested">): string | undefined {
  if (d.s.stage !== "confirming") return `no proposed plan waits for the user (stage: ${d.s.stage}); once the graph runs, changes go through change.requested`
  d.s.stage = "planning"
  d.s.planRevision = e.text
  d.s.steps = stepStarted(d.s, "plan", e.at)
  d.notify("the user asked for changes to the plan; the Architect revises it")
}

export function graphAccepted(d: Draft, e: EventOf<"graph.accepted">): string | undefined {
  if (d.s.stage === "planning" || d.s.stage === "confirming")
    return "the plan has not been confirmed by the user yet; a task graph is accepted only after plan.confirmed"
  if (d.s.stage !== "confirmed") return `a graph is accepted once per run, before it runs (stage: ${d.s.stage}); changes go through change.requested and a plan delta`
  // Structure only: the boundary-test rule is checked at the Architect's door, so older logs still replay.
  const checked = validateGraph(e.graph, { boundaryTests: false })
  if (!checked.ok) return `the task graph is invalid:\n${formatErrors(checked.errors)}`
  // Runtime status comes from events only; a status in the file matters only to keep a retired id retired.
  const graph = { ...checked.graph, tasks: checked.graph.tasks.map(({ status, ...task }) => (status === "invalidated" ? { ...task, status } : task)) }
  const { indexOf } = graphIndex(graph)
  d.s.graph = graph
  d.s.tasks = graph.tasks.map((node) => {
    const runtime = newTaskRuntime(node.id, node.deps.filter((dep) => indexOf.has(dep)).length)
    return isLive(node) ? runtime : { ...runtime, status: "invalidated" as const }
  })
  const phases = graphIndex(graph).phases
  d.s.currentPhase = phases[0] ?? 1
  d.s.stage = "running"
  d.s.steps = stepEnded(d.s, "plan")
  d.rebuildReady()
  d.notify(`task graph accepted: ${graph.tasks.length} tasks in ${phases.length} phase(s)`)
  startBaselineOnce(d)
  d.schedule()
}

export function changeRequested(d: Draft, e: EventOf<"change.requested">): string | undefined {
  const refusal = needStage(d, ["running", "milestone", "finished"], "a change can be requested once a task graph runs; before that, tell the Architect")
  if (refusal) return refusal
  if (d.s.frozen) return `a change is already being planned ("${d.s.frozen.text}"); wait for its delta`
  const id = `replan:${d.s.eventCount}`
  d.s.frozen = { text: e.text, at: e.at, commandId: id }
  d.s.steps = stepStarted(d.s, "change", e.at, 0)
  d.reopen()
  d.emit({ type: "replan", id, text: e.text })
  d.notify("requirement change received: no new task starts until the Architect's plan delta is accepted")
}

export function deltaAccepted(d: Draft, e: EventOf<"delta.accepted">): string | undefined {
  if (!d.s.frozen) return "no change was requested: a plan delta is accepted only after change.requested"
  const refusal = acceptDelta(d, e.delta)
  if (refusal) return `the plan delta is invalid:\n${refusal}`
  d.s.frozen = null
  d.s.steps = stepEnded(d.s, "change")
  d.schedule()
}

export function revertDone(d: Draft, e: EventOf<"revert.done">): string | undefined {
  const pending = d.s.reverts.find((r) => r.taskId === e.taskId && r.round === e.round)
  if (!pending) return `no revert of ${e.taskId} (round ${e.round}) is outstanding`
  d.s.reverts = d.s.reverts.filter((r) => r !== pending)
  return undefined
}

/** Applies a validated plan delta: invalidates or resets exactly the tasks it reaches, appends the new ones. */
export function acceptDelta(d: Draft, input: unknown): string | undefined {
  const statusOf = (id: string) => d.task(id)?.status
  const checked = validateDelta(d.graph, input, statusOf, { boundaryTests: false })
  if (!checked.ok) return formatErrors(checked.errors)
  const { graph, impacts, boundary } = checked.result
  const oldCount = d.s.tasks.length
  for (const impact of impacts) {
    if (impact.change === "added" || impact.change === "reverify") continue
    const t = d.task(impact.id)!
    if (impact.undo === "abort") d.abortSessions(t.id)
    if (impact.undo === "revert") d.revert(t.id)
    if (impact.undo === "revert-after-merge") d.patch(t.id, { revertOnMerge: true })
    const open = d.s.questions.filter((q) => q.taskId === t.id)
    if (open.length > 0) d.s.questions = d.s.questions.filter((q) => q.taskId !== t.id)
    d.setStatus(t.id, impact.becomes, impact.reason)
    d.patch(t.id, {
      repairs: 0,
      stalls: 0,
      resume: null,
      waitingOn: null,
      consultOptions: null,
      consultBy: null,
      findings: [],
      overflow: null,
      ...(impact.undo === "revert" ? { merged: null } : {}),
    })
  }
  d.s.graph = graph
  // The plan changed: the final review, if it passed, reviewed another plan.
  d.s.finalReviewPassed = false
  d.s.tasks = [...d.s.tasks.slice(0, oldCount), ...graph.tasks.slice(oldCount).map((node) => newTaskRuntime(node.id, 0))]
  d.rebuildReady()
  // A delta may add work to an earlier phase than the one running; that phase comes first again.
  let phase = Infinity
  graph.tasks.forEach((node, i) => {
    const status = d.s.tasks[i]!.status
    if (isLive(node) && status !== "merged") phase = Math.min(phase, node.phase)
  })
  if (phase !== Infinity && phase < d.s.currentPhase) d.s.currentPhase = phase
  const count = (change: string) => impacts.filter((impact) => impact.change === change).length
  d.notify(
    `plan delta applied: ${count("added")} added, ${count("modified")} modified, ${count("removed") + count("superseded")} invalidated` +
      (boundary.length > 0 ? `; boundary tasks: ${boundary.join(", ")}` : "") +
      (count("reverify") > 0 ? `; re-verified by ${impacts.filter((impact) => impact.change === "reverify").map((impact) => impact.id).join(", ")}` : ""),
  )
  return undefined
}

/** A validation's errors as the refusal says them: path, message and the fix, one error a paragraph. */
function formatErrors(errors: readonly ValidationError[]): string {
  return errors.map((error) => `- ${error.path}: ${error.message}\n  fix: ${error.fix}`).join("\n")
}
