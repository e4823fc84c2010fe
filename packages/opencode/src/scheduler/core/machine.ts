import { integrationMoved, recordBaseline } from "./baseline"
import type { Command } from "./command"
import { Draft } from "./draft"
import type { Event, EventOf, EventType } from "./event.schema"
import type { SchedulerState } from "./state"
import { reservationLogged } from "./money-rules"
import { stepFailed } from "./step-rules"
import { runtimeFault } from "./fault-rules"
import { deployFailed, deployPassed, deployStarted } from "./deploy"
import { sessionOverflowed, sessionRefreshed } from "./overflow"
import { contextCompacted } from "./compaction"
import { adrClassified, adrEdited, adrRecorded } from "./adr-rules"
import { budgetSpent, usageRecorded } from "./budget-rules"
import { consultAnswered, consultReplanned, consultUnanswered } from "./consult-rules"
import { gatesErrored, gatesFailed, gatesPassed, gatesStarted } from "./gate-rules"
import { mergeBatchRejected, mergeBlocked, mergeConflicted, mergeDeferred, mergeRejected, mergeStarted, mergeSucceeded } from "./merge-rules"
import { milestoneReached, milestoneReviewed } from "./milestone-rules"
import { changeRequested, deltaAccepted, graphAccepted, planConfirmed, planProposed, planRevisionRequested, revertDone } from "./plan-rules"
import { questionAnswered } from "./question-rules"
import { modelRetrying, rateEased, rateLimited } from "./rate-rules"
import { farmDegraded } from "./farm-rules"
import { reviewReported, reviewStarted } from "./review-rules"
import { finalCheckDone, runPaused, runResumed, runStarted } from "./run-rules"
import { dispatchFailed, sessionErrored, sessionLost, sessionNudged, taskDispatched, timerFired, workerFailed, workerReported } from "./session-rules"

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

/** The transition table: one entry per event type. */
const RULES: { [T in EventType]: Handler<T> } = {
  // The run (run-rules.ts)
  "run.started": runStarted,
  "run.paused": runPaused,
  "run.resumed": runResumed,
  "finalCheck.done": finalCheckDone,

  // The plan and its changes (plan-rules.ts)
  "plan.proposed": planProposed,
  "plan.confirmed": planConfirmed,
  "plan.revision.requested": planRevisionRequested,
  "graph.accepted": graphAccepted,
  "change.requested": changeRequested,
  "delta.accepted": deltaAccepted,
  "revert.done": revertDone,

  // A task's worker sessions (session-rules.ts, overflow.ts)
  "task.dispatched": taskDispatched,
  "worker.reported": workerReported,
  "worker.failed": workerFailed,
  "session.lost": sessionLost,
  "session.nudged": sessionNudged,
  "session.errored": sessionErrored,
  "session.overflowed": sessionOverflowed,
  "session.refreshed": sessionRefreshed,
  // Told to the views: a compacted conversation of Main or the Architect, checked (compaction.ts)
  "context.compacted": contextCompacted,
  "timer.fired": timerFired,
  "dispatch.failed": dispatchFailed,

  // Gates (gate-rules.ts)
  "gates.started": gatesStarted,
  "gates.passed": gatesPassed,
  "gates.failed": gatesFailed,
  "gates.errored": gatesErrored,

  // Review (review-rules.ts)
  "review.started": reviewStarted,
  "review.reported": reviewReported,

  // The merge queue (merge-rules.ts)
  "merge.started": mergeStarted,
  "merge.succeeded": mergeSucceeded,
  "merge.conflicted": mergeConflicted,
  "merge.rejected": mergeRejected,
  "merge.batch-rejected": mergeBatchRejected,
  "merge.deferred": mergeDeferred,
  "merge.blocked": mergeBlocked,

  // Milestones (milestone-rules.ts)
  "milestone.reached": milestoneReached,
  "milestone.reviewed": milestoneReviewed,

  // Consults (consult-rules.ts)
  "consult.answered": consultAnswered,
  "consult.unanswered": consultUnanswered,
  "consult.replanned": consultReplanned,

  // The user's answers (question-rules.ts)
  "question.answered": questionAnswered,

  // Budgets, money and the provider's rate (budget-rules.ts, money-rules.ts, rate-rules.ts)
  "usage.recorded": usageRecorded,
  "budget.spent": budgetSpent,
  "cost.reserved": reservationLogged,
  "rate.limited": rateLimited,
  "rate.eased": rateEased,
  "model.retrying": modelRetrying,

  // The build farm (farm-rules.ts): a host lost mid-build, its compiles run locally
  "farm.degraded": farmDegraded,

  // ADRs (adr-rules.ts)
  "adr.recorded": adrRecorded,
  "adr.edited": adrEdited,
  "adr.classified": adrClassified,

  // The baseline (baseline.ts)
  "baseline.done": recordBaseline,
  "integration.moved": (d, e) => integrationMoved(d, e.commit),

  // Steps of no task and runtime faults (step-rules.ts, fault-rules.ts)
  "step.failed": stepFailed,
  "runtime.fault": runtimeFault,

  // Deploy (deploy.ts): the rules of a deployable run's last mile
  "deploy.started": deployStarted,
  "deploy.passed": deployPassed,
  "deploy.failed": deployFailed,
}
