import { commandId } from "./command"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import { graphIndex } from "./graph-index"
import { causeQuestion, matchAnswer, type FailedOutcome, type PurposeKind, type QuestionCause } from "./session-outcome"
import type { ProviderFault } from "./provider-fault"
import type { Question, TaskRuntime } from "./state"
import { startPhaseDeploy } from "./deploy"
import { MAX_FRESH_SESSIONS, stepEnded, stepStarted, type Step } from "./steps"
import type { WorkerRole } from "./vocabulary"

/**
 * The machine's rules for the sessions of steps that belong to no task (plan, change, milestone review):
 * a failure gets a fresh session up to MAX_FRESH_SESSIONS, unless the provider refused the request for a
 * reason waiting cannot cure; then the user is asked exactly one question that names the cause and lists
 * the answers the machine honours. The same for a task's session refused by the provider.
 */

const PURPOSE_OF: Record<Step, PurposeKind> = { plan: "architect", change: "change", milestone: "milestone" }

/** The answers a step's question accepts: each one the machine can carry out. */
const STEP_ANSWERS: Record<Step, readonly string[]> = {
  plan: ["retry", "stop"],
  change: ["retry", "drop"],
  milestone: ["retry", "skip", "stop"],
}

/** Why an outcome of this step's session is stale: no session of it works now, or the user is already asked. */
function notLive(d: Draft, step: Step, phase?: number): string | undefined {
  const s = d.s
  if (step === "plan" && s.stage !== "planning" && s.stage !== "confirmed") return `no plan is being made (stage: ${s.stage}); the planning session's outcome is stale`
  if (step === "change" && !s.frozen) return "no change is being planned; the replanning session's outcome is stale"
  if (step === "milestone") {
    if (s.stage !== "milestone" || !s.milestone) return `no milestone review is due (stage: ${s.stage})`
    if (phase !== undefined && phase !== s.milestone.phase) return `the milestone under review is phase ${s.milestone.phase}, not ${phase}`
  }
  if (s.questions.some((q) => q.step === step)) return `the user is already asked about the ${step} step`
  return undefined
}

export function stepFailed(d: Draft, e: EventOf<"step.failed">): string | undefined {
  const refusal = notLive(d, e.step, e.phase)
  if (refusal) return refusal
  failStep(d, e.step, e.outcome, e.message, e.fault)
  return undefined
}

/** A step's session ran out of time: inactivity (the supervisor aborted it) or its wall-clock cap (the next session's start aborts it). */
export function stepTimer(d: Draft, step: Step, kind: "inactivity" | "wallclock"): string | undefined {
  const refusal = notLive(d, step)
  if (refusal) return refusal
  if (kind === "wallclock" && d.s.steps[step].deadline === null) return `no session of the ${step} step is timed; the timer is stale`
  failStep(d, step, "stalled", kind === "inactivity" ? "no output within the inactivity timeout" : "it ran past its wall-clock cap")
  return undefined
}

function failStep(d: Draft, step: Step, outcome: FailedOutcome, message: string, fault?: ProviderFault): void {
  const fresh = d.s.steps[step].fresh
  const hopeless = isHopeless(fault)
  if (!hopeless && fresh < MAX_FRESH_SESSIONS) {
    d.s.steps = stepStarted(d.s, step, d.event.at, fresh + 1)
    restart(d, step)
    d.notify(`the ${step} session failed (${outcome}: ${message}); a fresh session takes over (${fresh + 1} of ${MAX_FRESH_SESSIONS})`)
    return
  }
  d.s.steps = stepEnded(d.s, step, true)
  const m = d.s.milestone
  const cause: QuestionCause = {
    who: PURPOSE_OF[step],
    outcome,
    detail: message,
    tries: fresh,
    ...(fault ? { fault } : {}),
    ...(step === "milestone" && m ? { phase: m.phase, final: m.final } : {}),
  }
  const answers = [...STEP_ANSWERS[step]]
  const questionId = `${step}:failed:${d.s.eventCount}`
  const text = causeQuestion(cause, answers)
  d.s.questions = [...d.s.questions, { questionId, taskId: null, text, step, cause, answers }]
  d.emit({ type: "ask", id: commandId.ask(questionId), questionId, text })
  d.notify(`the ${step} step failed; the user is asked`)
}

/** The step's command again, under a new id: the runtime starts a fresh session for it. */
function restart(d: Draft, step: Step): void {
  const s = d.s
  if (step === "plan") {
    d.emit({ type: "plan", id: `${commandId.plan(s.runId!)}:${s.eventCount}`, requirement: s.requirement, autoConfirm: s.config?.autoConfirm ?? false })
  } else if (step === "change") {
    const id = commandId.replan(s.eventCount)
    s.frozen = { ...s.frozen!, commandId: id }
    d.emit({ type: "replan", id, text: s.frozen.text })
  } else {
    const m = s.milestone!
    const id = commandId.reviewMilestone(m.phase, s.eventCount)
    s.milestone = { ...m, commandId: id }
    d.emit({ type: "reviewMilestone", id, phase: m.phase, final: m.final })
  }
}

/** The user's answer to a step's question: one of STEP_ANSWERS, or refused with the list. */
export function answerStep(d: Draft, question: Question & { step: Step }, answer: string): string | undefined {
  const step = question.step
  const accepted = question.answers ?? STEP_ANSWERS[step]
  const choice = matchAnswer(answer, accepted)
  if (!choice) return `"${answer}" is not an answer to ${question.questionId}; answer one of: ${accepted.join(", ")}`
  d.s.questions = d.s.questions.filter((q) => q !== question)
  if (choice === "retry") {
    d.s.steps = stepStarted(d.s, step, d.event.at, 0)
    restart(d, step)
    d.notify(`the user answered retry: the ${step} step starts again with a fresh session`)
  } else if (choice === "drop") {
    d.s.frozen = null
    d.s.steps = stepEnded(d.s, "change")
    d.notify("the user dropped the requirement change: the plan runs on as it was")
    d.schedule()
  } else if (choice === "skip") {
    d.notify("the user skipped the milestone review")
    passMilestone(d)
  } else stopRun(d, step)
  return undefined
}

/** The milestone under review passes (the Architect's verdict, or the user skipping the review). */
export function passMilestone(d: Draft): void {
  const m = d.s.milestone!
  d.s.stage = "running"
  d.s.milestone = null
  d.s.milestoneFails = 0
  d.s.milestoneAnswer = null
  d.s.steps = stepEnded(d.s, "milestone")
  if (m.final) {
    // The run is done once nothing else is in flight (settle sees the pass).
    d.s.finalReviewPassed = true
    d.notify(`final review passed: the requirement is met`)
    d.schedule()
    return
  }
  // A deployable phase deploys before the next one starts (core/deploy.ts moves the run on once it passed).
  if (startPhaseDeploy(d, m.phase)) return
  const next = graphIndex(d.graph).phases.find((p) => p > m.phase)
  if (next !== undefined) d.s.currentPhase = next
  d.notify(`milestone ${m.phase} passed${next !== undefined ? `; phase ${next} starts` : ""}`)
  d.schedule()
}

/** "stop": the run ends blocked where it stands (its log kept; a new requirement or a change reopens work). */
function stopRun(d: Draft, step: Step): void {
  d.s.steps = stepEnded(d.s, step)
  if (step === "milestone" && d.s.graph) {
    d.s.stage = "running"
    d.s.milestone = null
    d.finishBlocked()
    return
  }
  const s = d.s
  s.stage = "finished"
  s.finished = { status: "blocked" }
  s.finalCheck = null
  d.emit({ type: "finish", id: commandId.finish("blocked", s.eventCount), status: "blocked" })
  d.notify(`run stopped by the user during the ${step} step`)
}

/**
 * A task's session refused by the provider for a reason waiting cannot cure (credentials, a model that does
 * not exist, quota; a context overflow once a fresh session overflowed too, `tries`): no fresh session would
 * fare better, so the task blocks at once and the question names the cause and the answers.
 */
export function blockOnFault(d: Draft, t: TaskRuntime, who: WorkerRole | "reviewer", fault: ProviderFault, resume: NonNullable<TaskRuntime["resume"]>, tries = 0): void {
  const cause: QuestionCause = { who, taskId: t.id, outcome: "errored", fault, detail: fault.message, ...(tries > 0 ? { tries } : {}) }
  const answers = ["retry", `skip ${t.id}`]
  // A Debugger's gate failure stays the task's failure: the session resumed by "retry" is sent to fix it.
  if (!(who === "debugger" && isRepairing(t))) d.patch(t.id, { lastFailure: { source: who === "reviewer" ? "reviewer" : "worker", message: `${fault.class}: ${fault.message}`, evidencePath: null } })
  d.block(t.id, `the model provider refused the ${who}'s request (${fault.class}: ${fault.message})`, resume, { cause, answers, text: causeQuestion(cause, answers) })
}

/** A Debugger sent to fix a failure of the gates, the review or the merge (not one whose own session failed before it got that far). */
export function isRepairing(t: TaskRuntime): boolean {
  return t.role === "debugger" && t.lastFailure !== null && t.lastFailure !== undefined && t.lastFailure.source !== "worker"
}

/**
 * The step a blocked worker task goes back to when the user answers: a Debugger's repair resumes as a
 * Debugger with the same failure (an Executor started again would redo, on top of its own earlier commits,
 * what the branch already holds); anything else starts an Executor.
 */
export function workerResume(t: TaskRuntime): WorkerRole {
  return isRepairing(t) ? "debugger" : "executor"
}

/** A provider fault no fresh session would cure; an error of no known class is given its fresh sessions. */
export function isHopeless(fault: ProviderFault | undefined): fault is ProviderFault {
  return fault !== undefined && !fault.retryable && fault.class !== "unknown"
}

/**
 * The answer to a task's question that lists its answers: "retry" goes on as any answer does (the caller);
 * "skip T-2" leaves the task blocked with no question, and the run goes on with the rest. Refused otherwise.
 */
export function answerTaskChoice(d: Draft, question: Question, answer: string): { choice: string } | { refused: string } {
  const choice = matchAnswer(answer, question.answers!)
  if (!choice) return { refused: `"${answer}" is not an answer to ${question.questionId}; answer one of: ${question.answers!.join(", ")}` }
  return { choice }
}

export function isStepQuestion(q: Question): q is Question & { step: Step } {
  return q.step !== undefined
}
