import { answerBaseline, inheritedBuildFailure, integrationMoved, isBaselineQuestion, recordBaseline, startBaseline } from "./baseline"
import { commandId, type Command, type Consultant, type ConsultOption } from "./command"
import { adrCascade } from "./adr-cascade"
import { Draft, MILESTONE_FIX_ROUNDS } from "./draft"
import { adrImpact } from "./graph"
import { routeOfOldLogEvent } from "./gate-route"
import type { Event, EventOf, EventType } from "./event.schema"
import { graphIndex, isLive } from "./graph-index"
import { checklistFindings, reviewPasses, type WorkerResult } from "./report.schema"
import { initialState, newTaskRuntime, type SchedulerState, type Stage, type TaskRuntime } from "./state"
import type { TaskStatus } from "./task.schema"
import { missingEvidence, requiredEvidence } from "./required-evidence"
import { addUsage, emptyUsage, overruns, resetTask } from "./usage"
import { answerRunCost, askRunCost, heldForMoney, isCostQuestion, moneyLimited, ownSession, recordCost, reservationLogged, resetCost } from "./money-rules"
import { validateDelta, validateGraph, type ValidationError } from "./validate"
import { answerStep, answerTaskChoice, blockOnFault, isHopeless, isRepairing, isStepQuestion, passMilestone, stepFailed, stepTimer, workerResume } from "./step-rules"
import { stepEnded, stepStarted } from "./steps"
import { answerFault, isFaultQuestion, runtimeFault } from "./fault-rules"
import { answerDeploy, deployFailed, deployPassed, deployStarted, startDeploy } from "./deploy"
import { sessionOverflowed, sessionRefreshed } from "./overflow"
import { contextCompacted } from "./compaction"

export type TransitionResult = { state: SchedulerState; commands: Command[] } | { refused: string }

/**
 * The Scheduler's rules: (state, event) → (state, commands). Pure: no clock, no randomness, no I/O; time
 * comes inside events. An event the rules do not allow in this state is refused with the reason, and the
 * state is left as it was.
 */
export function transition(state: SchedulerState, event: Event): TransitionResult {
  const draft = new Draft(state, event)
  const handler = RULES[event.type] as Handler<EventType>
  const refusal = handler(draft, event)
  if (refusal) return { refused: refusal }
  return { state: draft.s, commands: draft.commands }
}

/**
 * Folds many events whose earlier states nobody keeps — a replay of the log — without copying anything per
 * event: the folder owns private copies of the arrays and tasks and writes them in place. The result
 * equals the fold by `transition`, event for event (a property test checks it).
 */
export class Folder {
  private current: SchedulerState
  poisoned: string | null = null
  /** The commands of the last event applied. */
  commands: Command[] = []

  constructor(from: SchedulerState) {
    // Private copies of everything a rule writes in place: the arrays, and each task with its history.
    this.current = {
      ...from,
      tasks: from.tasks.map((task) => ({ ...task, history: task.history.slice() })),
      active: from.active.slice(),
      ready: from.ready.slice(),
      mergeQueue: from.mergeQueue.slice(),
      merging: from.merging.slice(),
    }
  }

  /** The folder's own state: the next `apply` changes it in place. Hand it on only once folding is over. */
  get state(): SchedulerState {
    return this.current
  }

  /**
   * Applies one event; returns the refusal reason, if any. Rules refuse before they change anything (a
   * property test holds them to it), so a refused event leaves the folder as it was; a rule that throws
   * poisons it.
   */
  apply(event: Event): string | null {
    if (this.poisoned) throw new Error(`the folder is poisoned: ${this.poisoned}`)
    const { eventCount, lastAt } = this.current
    const draft = new Draft(this.current, event, true)
    let refusal: string | undefined
    try {
      refusal = (RULES[event.type] as Handler<EventType>)(draft, event)
    } catch (error) {
      this.poisoned = `a rule failed: ${error instanceof Error ? error.message : String(error)}`
      throw error
    }
    if (refusal) {
      this.current.eventCount = eventCount
      this.current.lastAt = lastAt
      return refusal
    }
    // Written in place; a handler may also have swapped in fresh arrays (a new graph): they are ours too.
    this.current = draft.s
    this.commands = draft.commands
    return null
  }
}

export function isRefused(result: TransitionResult): result is { refused: string } {
  return "refused" in result
}

/** Returns a refusal reason, or nothing when the event was applied to the draft. */
type Handler<T extends EventType> = (d: Draft, e: EventOf<T>) => string | undefined

const WORKER_STATUSES: readonly TaskStatus[] = ["running", "debugging"]

/** The transition table: one entry per event type. */
const RULES: { [T in EventType]: Handler<T> } = {
  "run.started": (d, e) => {
    if (d.s.stage !== "idle" && d.s.stage !== "finished")
      return `run ${d.s.runId} is in progress (stage: ${d.s.stage}); a new run starts only after it finished`
    if (d.s.stage === "finished") Object.assign(d.s, { ...initialState(), eventCount: d.s.eventCount, lastAt: e.at })
    Object.assign(d.s, { stage: "planning", runId: e.runId, requirement: e.requirement, config: e.config, integration: e.integration ?? null })
    d.s.usage = emptyUsage(e.at)
    d.s.steps = stepStarted(d.s, "plan", e.at, 0)
    d.emit({ type: "plan", id: commandId.plan(e.runId), requirement: e.requirement, autoConfirm: e.config.autoConfirm })
    d.notify(`run ${e.runId} started; the Architect is planning`)
  },

  "plan.proposed": (d, e) => {
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
  },

  "plan.confirmed": (d) => {
    if (d.s.stage !== "confirming") return `no plan waits for confirmation (stage: ${d.s.stage})`
    d.s.stage = "confirmed"
    d.s.steps = stepStarted(d.s, "plan", d.event.at)
    d.notify("plan confirmed by the user")
  },

  "plan.revision.requested": (d, e) => {
    if (d.s.stage !== "confirming") return `no proposed plan waits for the user (stage: ${d.s.stage}); once the graph runs, changes go through change.requested`
    d.s.stage = "planning"
    d.s.planRevision = e.text
    d.s.steps = stepStarted(d.s, "plan", e.at)
    d.notify("the user asked for changes to the plan; the Architect revises it")
  },

  "graph.accepted": (d, e) => {
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
    if (d.s.config!.baseline) startBaseline(d)
    d.schedule()
  },

  "task.dispatched": (d, e) => {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
    if (!WORKER_STATUSES.includes(t.status)) return `task ${t.id} is ${t.status}; no dispatch for it is outstanding`
    if (t.role !== e.role) return `task ${t.id} was dispatched to the ${t.role}, not the ${e.role}`
    if (t.attempts !== e.attempt) return `task ${t.id} is at attempt ${t.attempts}; attempt ${e.attempt} is not the outstanding dispatch`
    if (t.sessionId !== null) return `task ${t.id} attempt ${e.attempt} already runs in session ${t.sessionId}`
    // The time comes from the event, never a clock: the deadline folds the same on every replay.
    const deadline = new Date(Date.parse(e.at) + d.s.config!.wallClockMs)
    d.patch(t.id, { sessionId: e.sessionId, deadline: Number.isNaN(deadline.getTime()) ? null : deadline.toISOString() })
    ownSession(d, e.sessionId, t.id)
  },

  "worker.reported": (d, e) => {
    const t = workerTask(d, e.taskId, e.sessionId)
    if (typeof t === "string") return t
    if (e.result.taskId !== t.id) return `the report is for task ${e.result.taskId} but came from the session of ${t.id}`
    if (e.result.role !== t.role) return `task ${t.id}: the report says ${e.result.role}, but the session belongs to the ${t.role}`
    // The step is over: a later overflow is the first of its own step.
    if (t.overflow !== null) d.patch(t.id, { overflow: null })
    if (e.result.blocked || e.result.planIssue) {
      fieldReport(d, t, e.result)
    } else {
      // A report asks for the gates; it never makes a task done.
      d.runGates(t.id, `${t.role} reported: ${e.result.summary}`)
    }
    d.schedule()
  },

  "worker.failed": (d, e) => {
    const t = workerTask(d, e.taskId, e.sessionId)
    if (typeof t === "string") return t
    if (e.reason === "aborted") {
      d.block(t.id, `the ${t.role}'s session was aborted: ${e.message}`, workerResume(t))
    } else if (isHopeless(e.fault)) {
      blockOnFault(d, t, t.role ?? "executor", e.fault, workerResume(t))
    } else {
      retryOrBlock(d, t, `${e.reason}: ${e.message}`)
    }
    d.schedule()
  },

  "session.lost": (d, e) => {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
    if (WORKER_STATUSES.includes(t.status)) {
      if (t.sessionId !== e.sessionId) return `session ${e.sessionId} is not the current session of task ${t.id} (${t.sessionId ?? "none recorded"}); nothing was lost`
      // A fresh session for the same step; stalls and repairs stay as they were.
      d.dispatch(t.id, t.role ?? "executor", "its session was lost when AirCoding restarted")
    } else if (t.status === "reviewing") {
      if (t.reviewSessionId !== e.sessionId) return `session ${e.sessionId} is not the current review of task ${t.id} (${t.reviewSessionId ?? "none recorded"}); nothing was lost`
      d.review(t.id, "its review session was lost when AirCoding restarted")
    } else return `task ${t.id} is ${t.status}: no session of it runs`
    d.schedule()
  },

  "session.nudged": (d, e) => {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
    const current = WORKER_STATUSES.includes(t.status) ? t.sessionId : t.status === "reviewing" ? t.reviewSessionId : null
    if (current !== e.sessionId) return `session ${e.sessionId} is not the current session of task ${t.id} (${current ?? "none"}); it is not nudged`
    d.patch(t.id, { nudges: t.nudges + 1 })
  },

  "session.overflowed": (d, e) => sessionOverflowed(d, e),
  "session.refreshed": (d, e) => sessionRefreshed(d, e),

  "session.errored": (d, e) => {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
    if (WORKER_STATUSES.includes(t.status)) {
      if (t.sessionId !== e.sessionId) return `session ${e.sessionId} is not the current session of task ${t.id} (${t.sessionId ?? "none recorded"}); its error is stale`
      d.patch(t.id, { sessionId: null })
      if (isHopeless(e.fault)) blockOnFault(d, t, t.role ?? "executor", e.fault, workerResume(t))
      else retryOrBlock(d, t, `its session errored: ${e.cause}`)
    } else if (t.status === "reviewing") {
      if (t.reviewSessionId !== e.sessionId) return `session ${e.sessionId} is not the current review of task ${t.id} (${t.reviewSessionId ?? "none recorded"}); its error is stale`
      d.patch(t.id, { reviewSessionId: null, lastFailure: { source: "reviewer", message: e.cause, evidencePath: null } })
      if (isHopeless(e.fault)) blockOnFault(d, t, "reviewer", e.fault, "review")
      else if (t.stalls < d.s.config!.stallRetries) {
        d.patch(t.id, { stalls: t.stalls + 1 })
        d.review(t.id, `the reviewer's session errored (${e.cause}); reviewing again`)
      } else d.block(t.id, `the reviewer's session errored again: ${e.cause}`, "review")
    } else return `task ${t.id} is ${t.status}: no session of it runs`
    d.schedule()
  },

  "finalCheck.done": (d, e) => {
    if (d.s.stage !== "finished") return `the run has not finished (stage: ${d.s.stage}); the final check comes after the end`
    if (d.s.finalCheck) return `the final check of this run is already recorded (${d.s.finalCheck.status})`
    d.s.finalCheck = { status: e.status, message: e.message }
    d.notify(`final check of the integration branch: ${e.status}${e.message ? ` — ${e.message}` : ""}`)
    startDeploy(d, e)
  },

  "timer.fired": (d, e) => {
    if ((e.step === undefined) === (e.taskId === undefined)) return "a timer names either a task or a step, exactly one of the two"
    if (e.step !== undefined) return stepTimer(d, e.step, e.kind)
    const t = findTask(d, e.taskId!)
    if (typeof t === "string") return t
    const what = e.kind === "inactivity" ? "stalled (no activity within the inactivity timeout)" : "ran past its wall-clock cap"
    if (e.kind === "wallclock" && (WORKER_STATUSES.includes(t.status) || t.status === "reviewing")) d.patch(t.id, { deadline: null })
    if (WORKER_STATUSES.includes(t.status)) {
      d.abortSessions(t.id)
      retryOrBlock(d, t, `${t.role} ${what}`)
    } else if (t.status === "reviewing") {
      d.abortSessions(t.id)
      if (t.stalls < d.s.config!.stallRetries) {
        d.patch(t.id, { stalls: t.stalls + 1 })
        d.review(t.id, `reviewer ${what}; reviewing again`)
      } else d.block(t.id, `the reviewer ${what}, again`, "review")
    } else return `task ${t.id} is ${t.status}: no session of it is timed; the timer is stale`
    d.schedule()
  },

  "gates.started": (d, e) => {
    const t = findTask(d, e.taskId, ["gating"])
    if (typeof t === "string") return t
    if (t.gatesStarted) return `the gates of task ${t.id} already started`
    d.patch(t.id, { gatesStarted: true })
  },

  "gates.passed": (d, e) => {
    const t = findTask(d, e.taskId, ["gating"])
    if (typeof t === "string") return t
    const node = d.node(t.id)
    const missing = missingEvidence(requiredEvidence(e.requires, node.kind), e)
    if (missing.length > 0)
      return `task ${t.id} (${node.kind}) cannot pass its gates without evidence for: ${missing.join(", ")}; run those gates, or report gates.failed with gate "evidence"`
    d.patch(t.id, { evidence: e.evidence, lastFailure: null })
    d.review(t.id, "gates passed")
    d.schedule()
  },

  "gates.failed": (d, e) => {
    const t = findTask(d, e.taskId, ["gating"])
    if (typeof t === "string") return t
    const route = e.route ?? routeOfOldLogEvent(e.gate)
    if (!route) return `the ${e.gate} gate's failure names no route (debugger, executor, user, …): the runtime writes the route its gate declares`
    const failure = { source: e.gate, message: e.message, evidencePath: e.evidencePath }
    const reason = `${e.gate} gate failed: ${e.message} (evidence: ${e.evidencePath})`
    switch (route) {
      case "debugger-unless-baseline-build-failed":
        // The baseline's build failed too and the user went on: not the task's fault, so no Debugger.
        if (inheritedBuildFailure(d.s)) {
          d.patch(t.id, { lastFailure: failure })
          d.block(t.id, `its build fails, as the integration branch's build did before any task (the baseline): ${e.message}`, "gates")
          break
        }
        d.repairOrConsult(t.id, "debugger", reason, failure, ["debug-again", "executor-again", "block"])
        break
      case "debugger":
        d.repairOrConsult(t.id, "debugger", reason, failure, ["debug-again", "executor-again", "block"])
        break
      case "executor":
        d.repairOrConsult(t.id, "executor", reason, failure, ["executor-again", "block"])
        break
      case "user":
        d.patch(t.id, { lastFailure: failure })
        d.block(t.id, `its ${e.gate} gate failed, and only a person can decide: ${e.message}`, "gates")
        break
      case "block-for-tool":
        d.patch(t.id, { lastFailure: failure })
        d.block(t.id, `a tool the gates need is missing: ${e.message}`, "gates")
        break
    }
    d.schedule()
  },

  "gates.errored": (d, e) => {
    const t = findTask(d, e.taskId, ["gating"])
    if (typeof t === "string") return t
    // Not the work's fault: nobody repairs it; the user hears the cause, and the answer runs the gates again.
    d.patch(t.id, { lastFailure: { source: `gates:${e.tag}`, message: e.message, evidencePath: null } })
    d.block(t.id, `its gates could not run (${e.tag}): ${e.message}`, "gates")
    d.schedule()
  },

  "review.started": (d, e) => {
    const t = findTask(d, e.taskId, ["reviewing"])
    if (typeof t === "string") return t
    if (t.reviewSessionId !== null) return `task ${t.id} is already reviewed in session ${t.reviewSessionId}`
    d.patch(t.id, { reviewSessionId: e.sessionId })
    ownSession(d, e.sessionId, t.id)
  },

  "review.reported": (d, e) => {
    const t = findTask(d, e.taskId, ["reviewing"])
    if (typeof t === "string") return t
    if (e.report.taskId !== t.id) return `the review report is for task ${e.report.taskId}, not ${t.id}`
    d.patch(t.id, { reviewSessionId: null, overflow: null })
    const disagreeing = e.report.rows.filter((row) => row.status !== "match")
    const risks = checklistFindings(e.report)
    const findings = [...e.report.findings, ...disagreeing.map((row) => `${row.status}: ${row.designRef} ↔ ${row.code}${row.note ? ` — ${row.note}` : ""}`), ...risks.map((risk) => `checklist ${risk}`)]
    if (e.report.verdict === "block-release") {
      blockRelease(d, t, findings)
    } else if (risks.length > 0) {
      // A C++ risk found at a file and line fails the review whatever the verdict says: the executor repairs it.
      d.patch(t.id, { findings })
      d.repairOrConsult(t.id, "executor", `review failed on the C++ checklist: ${findings.join("; ")}`, { source: "review", message: findings.join("\n"), evidencePath: null }, ["executor-again", "block"])
    } else if (reviewPasses(e.report)) {
      d.patch(t.id, { findings: [] })
      d.enqueueMerge(t.id)
    } else if (e.report.verdict === "pass") {
      // The verdict says pass while rows say otherwise: no rule decides which to believe.
      d.patch(t.id, { findings })
      d.consult(t.id, `task ${t.id}: the reviewer's verdict is pass but ${disagreeing.length} row(s) are divergent or missing`, ["review-again", "executor-again", "block"])
    } else {
      d.patch(t.id, { findings })
      d.repairOrConsult(t.id, "executor", `review failed: ${findings.join("; ") || "no findings given"}`, { source: "review", message: findings.join("\n"), evidencePath: null }, ["executor-again", "block"])
    }
    d.schedule()
  },

  "merge.started": (d, e) => {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
    return notInFlight(d, t.id)
  },

  "merge.succeeded": (d, e) => {
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
  },

  "merge.conflicted": (d, e) =>
    mergeFailed(d, e.taskId, (t) => {
      const files = e.files.join(", ") || "(files not named)"
      d.repairOrConsult(t.id, "executor", `merge conflict in ${files}: rebase on the integration branch and resolve it`, { source: "merge", message: `conflict in ${files}`, evidencePath: null }, ["executor-again", "block"])
    }),

  // The combined tree fails: nothing landed, the queue moves on, and the task goes to the Debugger on its rebased branch.
  "merge.rejected": (d, e) =>
    mergeFailed(d, e.taskId, (t) => {
      const failure = { source: "merge-build", message: e.message, evidencePath: e.evidencePath }
      const reason = `the merge build failed on the integration head: ${e.message} (evidence: ${e.evidencePath})`
      d.repairOrConsult(t.id, "debugger", reason, failure, ["debug-again", "executor-again", "block"])
    }),

  // The batch failed as a whole: no task is blamed; its halves are tried in turn until one task is left with the failure.
  "step.failed": (d, e) => stepFailed(d, e),

  "merge.batch-rejected": (d, e) => {
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
  },

  // Deploy (core/deploy.ts): the rules of a deployable run's last mile.
  "deploy.started": (d, e) => deployStarted(d, e),
  "deploy.passed": (d, e) => deployPassed(d, e),
  "deploy.failed": (d, e) => deployFailed(d, e),

  // The batch stopped before this task's outcome (its merge was blocked on another task's account): nothing of it landed; it is merged again first.
  "merge.deferred": (d, e) => mergeFailed(d, e.taskId, (t) => d.requeueFirst([t.id], "its batch went on without it: merged next, on its own")),

  // Nothing landed: the queue moves on at once; the task waits for the user, whose answer queues its merge again.
  "merge.blocked": (d, e) =>
    mergeFailed(d, e.taskId, (t) => {
      d.patch(t.id, { lastFailure: { source: `merge:${e.tag}`, message: e.message, evidencePath: null } })
      d.block(t.id, `its merge could not be carried out (${e.tag}): ${e.message}`, "merge")
    }),

  "milestone.reached": (d, e) => {
    const m = d.s.milestone
    if (d.s.stage !== "milestone" || !m) return `no milestone review is due (stage: ${d.s.stage})`
    if (m.phase !== e.phase) return `the milestone due is phase ${m.phase}, not ${e.phase}`
    if (m.reviewing) return `the review of milestone ${m.phase} already started`
    d.s.milestone = { ...m, reviewing: true }
  },

  "milestone.reviewed": (d, e) => {
    const m = d.s.milestone
    if (d.s.stage !== "milestone" || !m) return `no milestone review is due (stage: ${d.s.stage})`
    if (m.phase !== e.phase) return `the milestone due is phase ${m.phase}, not ${e.phase}`
    if (e.verdict === "pass") {
      passMilestone(d)
      return
    }
    if (!e.fixTasks || e.fixTasks.length === 0) return `a failing review of milestone ${m.phase} must bring fix tasks`
    // Fix tasks belong to the phase they fix, whatever phase they were written with.
    const add = e.fixTasks.map((task) => ({ ...task, phase: m.phase }))
    const fails = d.s.milestoneFails + 1
    if (fails > MILESTONE_FIX_ROUNDS) {
      // Rounds of fixes are spent: the user decides (their answer reaches the next review).
      d.s.stage = "running"
      d.s.milestone = null
      d.s.milestoneFails = fails
      d.askAboutMilestone(m.phase, fails, e.findings ?? add.map((t) => t.title))
      d.schedule()
      return
    }
    const refusal = acceptDelta(d, { schemaVersion: 1, add, remove: [], modify: [], supersedesAdrs: [] })
    if (refusal) return `the fix tasks of milestone ${m.phase} are invalid:\n${refusal}`
    d.s.stage = "running"
    d.s.milestone = null
    d.s.milestoneFails = fails
    d.notify(`${m.final ? "final review" : `milestone ${m.phase}`} needs fixes: ${add.map((t) => t.id).join(", ")}`)
    d.schedule()
  },

  "change.requested": (d, e) => {
    const refusal = needStage(d, ["running", "milestone", "finished"], "a change can be requested once a task graph runs; before that, tell the Architect")
    if (refusal) return refusal
    if (d.s.frozen) return `a change is already being planned ("${d.s.frozen.text}"); wait for its delta`
    const id = `replan:${d.s.eventCount}`
    d.s.frozen = { text: e.text, at: e.at, commandId: id }
    d.s.steps = stepStarted(d.s, "change", e.at, 0)
    d.reopen()
    d.emit({ type: "replan", id, text: e.text })
    d.notify("requirement change received: no new task starts until the Architect's plan delta is accepted")
  },

  "delta.accepted": (d, e) => {
    if (!d.s.frozen) return "no change was requested: a plan delta is accepted only after change.requested"
    const refusal = acceptDelta(d, e.delta)
    if (refusal) return `the plan delta is invalid:\n${refusal}`
    d.s.frozen = null
    d.s.steps = stepEnded(d.s, "change")
    d.schedule()
  },

  "consult.answered": (d, e) => {
    const t = consultedTask(d, e.taskId, e.by)
    if (typeof t === "string") return t
    const options = t.consultOptions ?? []
    if (!options.includes(e.choice as ConsultOption)) return `"${e.choice}" is not one of the options offered for task ${t.id}: ${options.join(", ")}`
    const choice = e.choice as ConsultOption
    const who = e.by === "architect" ? "the Architect" : "the scheduler agent"
    if (choice === "block") {
      escalate(d, t, e.by, `${who} chose not to decide${e.reason ? `: ${e.reason}` : ""}`)
    } else {
      d.patch(t.id, { consultOptions: null, consultBy: null })
      if (choice === "debug-again") d.dispatch(t.id, "debugger", `${who} chose another debugger run`)
      else if (choice === "executor-again") d.dispatch(t.id, "executor", `${who} chose another executor run`)
      else d.review(t.id, `${who} chose another review`)
    }
    d.schedule()
  },

  "consult.unanswered": (d, e) => {
    const t = consultedTask(d, e.taskId, e.by)
    if (typeof t === "string") return t
    escalate(d, t, e.by, `the ${e.by === "architect" ? "Architect" : "scheduler agent"} gave no decision: ${e.reason}`)
    d.schedule()
  },

  "dispatch.failed": (d, e) => {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
    const reason = `its ${e.role} session could not be started: ${e.message}`
    if (e.role === "reviewer") {
      if (t.status !== "reviewing" || t.reviewRuns !== e.run) return `task ${t.id} is ${t.status} (review run ${t.reviewRuns}); review run ${e.run} is not outstanding`
      if (t.reviewSessionId !== null) return `task ${t.id} is already reviewed in session ${t.reviewSessionId}; its review did start`
      if (t.stalls < d.s.config!.stallRetries) {
        d.patch(t.id, { stalls: t.stalls + 1, lastFailure: { source: "dispatch", message: reason, evidencePath: null } })
        d.review(t.id, `retry: ${reason}`)
      } else d.block(t.id, reason, "review")
    } else {
      if (!WORKER_STATUSES.includes(t.status) || t.role !== e.role || t.attempts !== e.run)
        return `task ${t.id} is ${t.status} (attempt ${t.attempts} by the ${t.role ?? "nobody"}); the ${e.role}'s attempt ${e.run} is not outstanding`
      if (t.sessionId !== null) return `task ${t.id} attempt ${e.run} already runs in session ${t.sessionId}; its dispatch did not fail`
      retryOrBlock(d, t, reason)
    }
    d.schedule()
  },

  "question.answered": (d, e) => {
    const question = d.s.questions.find((q) => q.questionId === e.questionId)
    if (!question) return `no open question ${e.questionId}; open: ${d.s.questions.map((q) => q.questionId).join(", ") || "none"}`
    if (isBaselineQuestion(d.s, question)) {
      answerBaseline(d, question, e.answer)
      return
    }
    if (question.deploy !== undefined) {
      answerDeploy(d, question, e.answer)
      return
    }
    if (isFaultQuestion(question)) return answerFault(d, question, e.answer)
    if (isCostQuestion(question)) return answerRunCost(d, question, e.answer)
    if (isStepQuestion(question)) return answerStep(d, question, e.answer)
    if (question.taskId !== null && question.answers) {
      // A question that lists its answers accepts only those; "skip T-2" leaves the task blocked and goes on.
      const answered = answerTaskChoice(d, question, e.answer)
      if ("refused" in answered) return answered.refused
      if (answered.choice !== "retry") {
        d.s.questions = d.s.questions.filter((q) => q !== question)
        d.notify(`task ${question.taskId} stays blocked (the user answered ${answered.choice}); the run goes on without it`)
        d.schedule()
        return
      }
    }
    d.s.questions = d.s.questions.filter((q) => q !== question)
    const budgetRaised = question.taskId === null && question.milestone === undefined
    if (question.milestone !== undefined) {
      // A milestone review that kept failing: the user's answer goes to the next review, with fresh rounds.
      d.s.milestoneFails = 0
      d.s.milestoneAnswer = e.answer
    } else if (question.taskId === null) d.s.runBudgetSpent = false
    else {
      const t = d.task(question.taskId)!
      if (t.status === "blocked") {
        d.setStatus(t.id, "pending", "the user answered")
        d.patch(t.id, { repairs: 0, stalls: 0, waitingOn: null, findings: [...t.findings, `user: ${e.answer}`] })
        d.offerReady(t.id)
      }
    }
    d.reopen(budgetRaised)
    d.schedule()
  },

  "cost.reserved": (d, e) => reservationLogged(d, e),

  "budget.spent": (d, e) => {
    const refusal = spendBudget(d, e.taskId, e.kind)
    if (refusal) return refusal
    d.schedule()
  },

  "run.paused": (d) => {
    const refusal = needStage(d, ["running", "milestone"], "only a running run can be paused")
    if (refusal) return refusal
    if (d.s.paused) return "the run is already paused"
    d.s.paused = true
    d.notify("run paused: tasks in flight finish, no new task starts")
  },

  "run.resumed": (d) => {
    if (!d.s.paused) return "the run is not paused"
    d.s.paused = false
    d.notify("run resumed")
    d.schedule()
  },

  "usage.recorded": (d, e) => {
    if (d.s.runId === null) return "no run has started; its usage counts for nothing"
    // A task's budget counts its current worker's or reviewer's session only (not one it was taken from).
    const t = e.taskId !== undefined && d.s.graph ? d.task(e.taskId) : undefined
    const taskId = t && (t.sessionId === e.sessionId || t.reviewSessionId === e.sessionId) ? t.id : null
    const usage = addUsage(d.s.usage, e, taskId)
    if (typeof usage === "string") return usage
    d.s.usage = usage
    const limits = d.s.config?.budgets
    const judged = Boolean(limits && d.s.graph && (d.s.stage === "running" || d.s.stage === "milestone"))
    const costOver = recordCost(d, e, taskId, judged)
    if (!limits || !judged) return undefined
    const over = [...overruns(limits, usage, taskId, d.s.runBudgetSpent), ...costOver.map((o) => ({ ...o, kind: "cost" as const }))]
    for (const o of over) spendBudget(d, o.taskId, o.kind)
    // A cost report moves the estimates and what is held back: a session held for money may fit now.
    if (over.length || heldForMoney(d.s)) d.schedule()
    return undefined
  },

  "rate.limited": (d, e) => {
    if (d.s.runId === null || !d.s.config) return "no run has started; a rate limit concerns nothing"
    const cap = Math.min(e.cap, d.s.config.concurrency)
    d.s.rateLimit = { until: d.s.rateLimit && d.s.rateLimit.until > e.until ? d.s.rateLimit.until : e.until, cap }
    d.notify(`the model provider limits the rate: no new model call before ${e.until}; at most ${cap} task(s) at work until calls succeed again`)
    return undefined
  },

  // Told to the views only: the engine's own retry is under way, and the inactivity clock already counts from it.
  "context.compacted": (d, e) => contextCompacted(d, e),
  "model.retrying": (d) => (d.s.runId === null ? "no run has started; a retry concerns nothing" : undefined),

  "rate.eased": (d, e) => {
    if (!d.s.rateLimit || !d.s.config) return "no rate limit is in force"
    d.s.rateLimit = e.cap >= d.s.config.concurrency ? null : { ...d.s.rateLimit, cap: e.cap }
    d.schedule()
    return undefined
  },

  "revert.done": (d, e) => {
    const pending = d.s.reverts.find((r) => r.taskId === e.taskId && r.round === e.round)
    if (!pending) return `no revert of ${e.taskId} (round ${e.round}) is outstanding`
    d.s.reverts = d.s.reverts.filter((r) => r !== pending)
    return undefined
  },

  "baseline.done": (d, e) => recordBaseline(d, e),

  "integration.moved": (d, e) => integrationMoved(d, e.commit),

  "runtime.fault": (d, e) => runtimeFault(d, e),

  "adr.recorded": (d, e) => {
    if (d.s.adrs[e.adr] !== undefined) return `${e.adr} is already recorded; a change to its file is adr.edited`
    d.s.adrs = { ...d.s.adrs, [e.adr]: e.hash }
  },

  "adr.edited": (d, e) => {
    const recorded = d.s.adrs[e.adr]
    if (recorded === undefined) return `${e.adr} was never recorded as accepted; record it with adr.recorded`
    if (recorded === e.hash) return `${e.adr} is unchanged (hash ${e.hash})`
    if (d.s.adrEdits.some((edit) => edit.adr === e.adr)) return `an edit of ${e.adr} is already waiting for the Architect's classification`
    if (!d.s.graph || (d.s.stage !== "running" && d.s.stage !== "milestone")) return `no task graph runs (stage: ${d.s.stage}); an ADR edit matters only to a running plan`
    const id = commandId.classifyAdr(e.adr, d.s.eventCount)
    const tasks = adrImpact(d.graph, e.adr).impacted
    d.s.adrEdits = [...d.s.adrEdits, { adr: e.adr, hash: e.hash, commandId: id }]
    d.emit({ type: "classifyAdr", id, adr: e.adr, hash: e.hash, tasks })
    d.notify(`${e.adr} was edited; the Architect classifies the edit (tasks citing it: ${tasks.join(", ") || "none"}) and they wait`)
  },

  "adr.classified": (d, e) => {
    const edit = d.s.adrEdits.find((x) => x.adr === e.adr)
    if (!edit) return `no edit of ${e.adr} waits for a classification`
    if (edit.hash !== e.hash) return `the edit of ${e.adr} waiting is ${edit.hash}, not ${e.hash}`
    d.s.adrEdits = d.s.adrEdits.filter((x) => x !== edit)
    d.s.adrs = { ...d.s.adrs, [e.adr]: e.hash }
    if (e.kind === "clarification") {
      d.notify(`${e.adr} edit recorded as a clarification${e.note ? `: ${e.note}` : ""}`)
    } else {
      const { delta, boundary } = adrCascade(d.graph, (id) => d.task(id)?.status, e.adr, d.s.currentPhase)
      if (delta.add.length > 0 || delta.modify.length > 0) {
        const refusal = acceptDelta(d, delta)
        if (refusal) return `the cascade of ${e.adr} could not be applied:\n${refusal}`
      }
      d.notify(
        `${e.adr} changed its decision${e.note ? ` (${e.note})` : ""}: ` +
          `redone ${delta.modify.map((m) => m.id).join(", ") || "none"}; re-verified by ${delta.add.map((t) => t.id).join(", ") || "none"}` +
          (boundary.length > 0 ? `; boundary: ${boundary.join(", ")}` : ""),
      )
    }
    d.schedule()
  },

  "consult.replanned": (d, e) => {
    const t = consultedTask(d, e.taskId, "architect")
    if (typeof t === "string") return t
    const refusal = acceptDelta(d, e.delta)
    if (refusal) return `the Architect's plan delta for task ${t.id} is invalid:\n${refusal}`
    // A delta that left the task itself alone (a new task it now waits on is added by modifying it) sends it
    // back to work on the changed plan; a delta that modified it already reset it to pending.
    const after = d.task(t.id)!
    if (after.status === "consulting") {
      d.patch(t.id, { consultOptions: null, consultBy: null })
      d.dispatch(t.id, t.role ?? "executor", "the Architect changed the plan")
    }
    d.notify(`the Architect answered task ${t.id} with a plan delta`)
    d.schedule()
  },
}

/** A budget is spent: the task (or the whole run, merges apart) stops and the user is asked. */
function spendBudget(d: Draft, taskId: string | undefined, kind: EventOf<"budget.spent">["kind"]): string | undefined {
  const e = { taskId, kind }
  if (!d.s.graph || (d.s.stage !== "running" && d.s.stage !== "milestone")) return `no run is in progress (stage: ${d.s.stage})`
  if (e.taskId !== undefined) {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
    if (t.status === "merged" || t.status === "invalidated" || t.status === "blocked") return `task ${t.id} is ${t.status}; it spends nothing`
    if (t.status === "merge_queued" || t.status === "merging") return `task ${t.id} is being merged, which costs no model budget`
    d.abortSessions(t.id)
    d.block(t.id, `its ${e.kind} budget is spent`, resumeFor(t.status))
    d.s.usage = resetTask(d.s.usage, t.id)
    resetCost(d, t.id)
  } else {
    if (d.s.runBudgetSpent) return "the run's budget is already spent"
    d.s.runBudgetSpent = true
    // A money limit is raised to the amount the user names; the others by one budget's worth per answer.
    const money = e.kind === "cost" && moneyLimited(d.s)
    if (!money) d.s.usage = { ...d.s.usage, runGrants: d.s.usage.runGrants + 1 }
    // Merges finish (they cost no model budget); everything else stops and waits for one answer.
    for (const id of [...d.s.active]) {
      const status = d.task(id)!.status
      if (status === "merge_queued" || status === "merging") continue
      d.abortSessions(id)
      d.setStatus(id, "blocked", `run ${e.kind} budget spent`)
      d.patch(id, { resume: resumeFor(status), waitingOn: "run budget" })
    }
    if (money) {
      askRunCost(d)
      return undefined
    }
    const questionId = `run:budget:${d.s.eventCount}`
    const text = `The run's ${e.kind} budget is spent. Raise it and continue?`
    d.s.questions = [...d.s.questions, { questionId, taskId: null, text }]
    d.emit({ type: "ask", id: `ask:${questionId}`, questionId, text })
  }
  return undefined
}

/**
 * A worker that is blocked, or finds the plan wrong (a missing dependency, a wrong write-set, an interface
 * that does not exist), is heard by the Architect first: a delta, an ADR and another run, or one question
 * to the user. Each such round spends a repair, so a task cannot bounce between worker and Architect forever;
 * once the budget is spent the user is asked.
 */
function fieldReport(d: Draft, t: TaskRuntime, result: WorkerResult): void {
  const issue = result.planIssue
  const said = [
    issue ? `finds the plan wrong (${issue.kind}): ${issue.detail}` : null,
    result.blocked ? `reports it is blocked: ${result.blocked.reason}` : null,
  ].filter((part): part is string => part !== null)
  const reason = `the ${t.role} ${said.join("; and ")}`
  d.patch(t.id, { lastFailure: { source: "plan", message: reason, evidencePath: null } })
  if (t.repairs >= d.s.config!.repairBudget) {
    d.block(t.id, `${reason} (the repair budget of ${d.s.config!.repairBudget} is spent)`, "executor")
    return
  }
  d.patch(t.id, { repairs: t.repairs + 1 })
  const options: ConsultOption[] = t.role === "debugger" ? ["debug-again", "executor-again", "block"] : ["executor-again", "block"]
  d.consult(t.id, `task ${t.id}: ${reason}`, options, "architect")
}

/** The reviewer says the change must not land as it is: the merge stops and the Architect decides. */
function blockRelease(d: Draft, t: TaskRuntime, findings: string[]): void {
  const why = findings.join("; ") || "no findings given"
  d.patch(t.id, { findings, lastFailure: { source: "review", message: `block-release: ${why}`, evidencePath: null } })
  d.consult(t.id, `task ${t.id}: the reviewer blocks its release: ${why}`, ["executor-again", "review-again", "block"], "architect")
  d.notify(`the reviewer blocks the release of task ${t.id}; the Architect is consulted`)
}

function needStage(d: Draft, stages: readonly Stage[], why: string): string | undefined {
  if (stages.includes(d.s.stage)) return undefined
  return `${why} (stage: ${d.s.stage})`
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

function findTask(d: Draft, id: string, statuses?: readonly TaskStatus[]): TaskRuntime | string {
  if (!d.s.graph) return `no task graph yet (stage: ${d.s.stage}); task ${id} is unknown`
  const t = d.task(id)
  if (!t) return `unknown task ${id}`
  if (statuses && !statuses.includes(t.status)) return `task ${id} is ${t.status}, not ${statuses.join(" or ")}`
  return t
}

/** A worker event counts only from the session the task runs in now; anything else is an echo of the past. */
function workerTask(d: Draft, id: string, sessionId: string): TaskRuntime | string {
  const t = findTask(d, id, WORKER_STATUSES)
  if (typeof t === "string") return t
  if (t.sessionId === null)
    return `session ${sessionId} is not the current session of task ${id}: attempt ${t.attempts} has no session recorded yet (task.dispatched comes first)`
  if (t.sessionId !== sessionId) return `session ${sessionId} is not the current session of task ${id} (${t.sessionId}); its news is stale`
  return t
}

/** The task as consulted now, provided `by` is the one being asked (a stale session's answer is refused). */
function consultedTask(d: Draft, id: string, by: Consultant): TaskRuntime | string {
  const t = findTask(d, id, ["consulting"])
  if (typeof t === "string") return t
  const asked = t.consultBy ?? "scheduler"
  if (asked !== by) return `task ${t.id} is waiting on the ${asked === "architect" ? "Architect" : "scheduler agent"}, not the ${by === "architect" ? "Architect" : "scheduler agent"}`
  return t
}

/** A consult that did not settle it: the Architect is asked after the scheduler agent; after the Architect, the user. */
function escalate(d: Draft, t: TaskRuntime, by: Consultant, why: string): void {
  const last = t.lastFailure?.message ?? "see the task's history"
  if (by === "scheduler") {
    d.consult(t.id, `task ${t.id}: ${why}. Last failure: ${last}`, t.consultOptions ?? ["block"], "architect")
    return
  }
  d.block(t.id, `${why}; last failure: ${last}`, "executor")
}

/** Stalls, errors and timeouts get a fresh session, a limited number of times; then the user hears of it. */
function retryOrBlock(d: Draft, t: TaskRuntime, reason: string): void {
  const role = t.role ?? "executor"
  // A Debugger's fresh session is still sent to fix the gate failure it was given: a stalled or failed
  // session does not replace it (a chaos seed's second Debugger got only "no activity" and never the cppcheck finding).
  const repairing = isRepairing(t)
  if (!repairing) d.patch(t.id, { lastFailure: { source: "worker", message: reason, evidencePath: null } })
  if (t.stalls < d.s.config!.stallRetries) {
    d.patch(t.id, { stalls: t.stalls + 1 })
    d.dispatch(t.id, role, `retry after ${reason}`)
  } else {
    d.block(t.id, `the ${role} failed again: ${reason}`, repairing ? "debugger" : "executor")
  }
}

function resumeFor(status: TaskStatus): NonNullable<TaskRuntime["resume"]> {
  if (status === "debugging") return "debugger"
  if (status === "gating") return "gates"
  if (status === "reviewing") return "review"
  return "executor"
}

/** Applies a validated plan delta: invalidates or resets exactly the tasks it reaches, appends the new ones. */
function acceptDelta(d: Draft, input: unknown): string | undefined {
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

export function formatErrors(errors: readonly ValidationError[]): string {
  return errors.map((error) => `- ${error.path}: ${error.message}\n  fix: ${error.fix}`).join("\n")
}
