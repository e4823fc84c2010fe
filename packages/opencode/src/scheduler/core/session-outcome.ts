import { z } from "zod"
import type { Consultant } from "./command"
import type { Event, EventType } from "./event.schema"
import { ProviderFault, type ProviderErrorClass } from "./provider-fault"
import { FAILED_OUTCOMES, PURPOSE_KINDS, type FailedOutcome, type PurposeKind, type QuestionCause, type WorkerRole } from "./vocabulary"

/**
 * Every session the Scheduler starts ends in an event the machine folds: this table says which, for each
 * purpose and each way a session can end. The runtime (runtime/sessions/supervisor.ts) only classifies the
 * outcome and applies the event the table gives; the machine's rules for those events decide (a fresh
 * session up to a bound, then one question to the user). A purpose added to PURPOSE_KINDS without a row,
 * or a row without every outcome, does not compile.
 */
export { FAILED_OUTCOMES, PURPOSE_KINDS, QuestionCause, SESSION_OUTCOMES, type FailedOutcome, type PurposeKind } from "./vocabulary"


type NoAt<E> = E extends unknown ? Omit<E, "at"> : never
export type OutcomeEvent = NoAt<Event>

/** What the runtime knows of a session's purpose, per kind. */
export type PurposeRef = {
  executor: { taskId: string; sessionId: string; attempt: number }
  debugger: { taskId: string; sessionId: string; attempt: number }
  reviewer: { taskId: string; sessionId: string; run: number }
  architect: Record<string, never>
  change: Record<string, never>
  consult: { taskId: string; agent: Consultant }
  milestone: { phase: number }
  adr: { adr: string; hash: string }
}

export type SessionFailure = { message: string; fault?: ProviderFault }

type Rules<P extends PurposeKind> = {
  /** The tool whose call is the session's report; the nudge names it. */
  tool: string
  /** What a report of this purpose becomes (the tool's own event). */
  reported: readonly EventType[]
  failed: { [O in FailedOutcome]: (ref: PurposeRef[P], failure: SessionFailure) => OutcomeEvent }
}

const NO_REPORT = (tool: string) => `the session ended twice without calling ${tool}`

/** The session's failure in words for the log: the provider's class and message when there is one. */
export function failureText(f: SessionFailure): string {
  return f.fault && f.fault.class !== "unknown" ? `${f.fault.class}: ${f.fault.message}` : f.message
}

/** The session ran out of the model's context: its role starts afresh from the task's pack (core/overflow.ts), it is not a failure of the work. */
function overflowed(f: SessionFailure): boolean {
  return f.fault?.class === "context-too-long"
}

function worker(role: WorkerRole): Rules<typeof role> {
  return {
    tool: "air_report",
    reported: ["worker.reported"],
    failed: {
      "no-report": (r) => ({ type: "worker.failed", taskId: r.taskId, sessionId: r.sessionId, reason: "error", message: NO_REPORT("air_report") }),
      errored: (r, f) =>
        overflowed(f)
          ? { type: "session.overflowed", taskId: r.taskId, sessionId: r.sessionId, role, message: f.fault!.message }
          : { type: "worker.failed", taskId: r.taskId, sessionId: r.sessionId, reason: "error", message: failureText(f), ...(f.fault ? { fault: f.fault } : {}) },
      stalled: (r) => ({ type: "timer.fired", taskId: r.taskId, kind: "inactivity" }),
      "spawn-failed": (r, f) => ({ type: "dispatch.failed", taskId: r.taskId, role, run: r.attempt, message: failureText(f) }),
    },
  }
}

/** A step of the run (no task): the machine counts its fresh sessions and asks the user past the bound. */
function step(name: "plan" | "change" | "milestone", tool: string, reported: readonly EventType[]): Rules<"architect" | "change" | "milestone"> {
  const failed = (outcome: FailedOutcome) => (r: { phase?: number }, f: SessionFailure): OutcomeEvent => ({
    type: "step.failed",
    step: name,
    outcome,
    message: outcome === "no-report" ? NO_REPORT(tool) : failureText(f),
    ...(f.fault ? { fault: f.fault } : {}),
    ...(r.phase !== undefined ? { phase: r.phase } : {}),
  })
  return {
    tool,
    reported,
    failed: { "no-report": failed("no-report"), errored: failed("errored"), stalled: () => ({ type: "timer.fired", step: name, kind: "inactivity" }), "spawn-failed": failed("spawn-failed") },
  }
}

const unanswered = (why: (f: SessionFailure) => string) => (r: PurposeRef["consult"], f: SessionFailure): OutcomeEvent => ({ type: "consult.unanswered", taskId: r.taskId, by: r.agent, reason: why(f) })
/** No classification of an ADR edit: the safe reading, a decision change (the work citing it is checked again). */
const unclassified = (why: (f: SessionFailure) => string) => (r: PurposeRef["adr"], f: SessionFailure): OutcomeEvent => ({
  type: "adr.classified",
  adr: r.adr,
  hash: r.hash,
  kind: "decision-change",
  note: `no classification from the Architect (${why(f)}); treated as a decision change`,
})

export const SESSION_RULES: { [P in PurposeKind]: Rules<P> } = {
  executor: worker("executor"),
  debugger: worker("debugger"),
  reviewer: {
    tool: "air_review",
    reported: ["review.reported"],
    failed: {
      "no-report": (r) => ({ type: "session.errored", taskId: r.taskId, sessionId: r.sessionId, cause: NO_REPORT("air_review") }),
      errored: (r, f) =>
        overflowed(f)
          ? { type: "session.overflowed", taskId: r.taskId, sessionId: r.sessionId, role: "reviewer", message: f.fault!.message }
          : { type: "session.errored", taskId: r.taskId, sessionId: r.sessionId, cause: `error: ${failureText(f)}`, ...(f.fault ? { fault: f.fault } : {}) },
      stalled: (r) => ({ type: "timer.fired", taskId: r.taskId, kind: "inactivity" }),
      "spawn-failed": (r, f) => ({ type: "dispatch.failed", taskId: r.taskId, role: "reviewer", run: r.run, message: failureText(f) }),
    },
  },
  architect: step("plan", "air_propose or air_plan", ["plan.proposed", "graph.accepted"]),
  change: step("change", "air_delta (until it is accepted)", ["delta.accepted"]),
  milestone: step("milestone", "air_milestone", ["milestone.reviewed"]),
  consult: {
    tool: "air_decide",
    reported: ["consult.answered", "consult.replanned"],
    failed: {
      "no-report": unanswered(() => NO_REPORT("air_decide")),
      errored: unanswered((f) => `its session failed: ${failureText(f)}`),
      stalled: unanswered((f) => `no activity: ${f.message}; the session was aborted`),
      "spawn-failed": unanswered((f) => `its session could not start: ${failureText(f)}`),
    },
  },
  adr: {
    tool: "air_decide",
    reported: ["adr.classified"],
    failed: {
      "no-report": unclassified(() => NO_REPORT("air_decide")),
      errored: unclassified((f) => `its session failed: ${failureText(f)}`),
      stalled: unclassified((f) => `no activity: ${f.message}`),
      "spawn-failed": unclassified((f) => `its session could not start: ${failureText(f)}`),
    },
  },
}

/** The event a failed session of this purpose becomes. */
export function failureEvent<P extends PurposeKind>(kind: P, ref: PurposeRef[P], outcome: FailedOutcome, failure: SessionFailure): OutcomeEvent {
  return SESSION_RULES[kind].failed[outcome](ref, failure)
}


const CLASS_WORDS: Record<ProviderErrorClass, string> = {
  "rate-limit": "it kept hitting the rate limit",
  overloaded: "it was overloaded",
  server: "it had a server error",
  timeout: "the request timed out",
  connection: "the connection failed",
  "stream-cut": "the response was cut off",
  "context-too-long": "the conversation is longer than the model's context",
  auth: "the credentials were refused",
  forbidden: "access was forbidden",
  "model-not-found": "the model was not found",
  quota: "the quota or billing limit is exhausted",
  "bad-request": "it refused the request as invalid",
  unknown: "it reported an error",
}

/** Who made the request, and what for when it was not a task's work. */
const AGENT: Record<PurposeKind, [string, string]> = {
  executor: ["Executor", ""],
  debugger: ["Debugger", ""],
  reviewer: ["Reviewer", ""],
  architect: ["Architect", "planning"],
  change: ["Architect", "replanning"],
  consult: ["consulted agent", ""],
  milestone: ["Architect", "milestone review"],
  adr: ["Architect", "ADR classification"],
}

/** "'retry', 'skip T-2' or 'stop'" */
export function listAnswers(answers: readonly string[]): string {
  const quoted = answers.map((a) => `'${a}'`)
  return quoted.length < 2 ? quoted.join("") : `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`
}

/**
 * The English question for a cause (the machine's words; views render the cause in the person's language
 * through text/question-text.ts, whose English equals this — a test holds them together).
 */
export function causeQuestion(cause: QuestionCause, answers: readonly string[]): string {
  const [agent, doing] = AGENT[cause.who]
  const what = cause.who === "milestone" ? (cause.final ? "final review" : `review of phase ${cause.phase ?? "?"}`) : doing
  const session = `the ${agent}'s ${what ? `${what} ` : ""}session${cause.taskId ? ` for ${cause.taskId}` : ""}`
  const tries = cause.tries ? ` (${cause.tries} fresh session${cause.tries === 1 ? "" : "s"} tried)` : ""
  let said: string
  if (isOverflowAgain(cause))
    said = `The ${agent}'s session for ${cause.taskId} ran out of the model's context again: a fresh session started from the task's context pack and its worktree overflowed too (${trimStop(cause.fault!.message)}). The task is likely too large for one session: split it with a requirement change or use a model with a longer context.`
  else if (cause.fault)
    said = `The model provider refused the ${agent}'s request${cause.taskId ? ` for ${cause.taskId}` : what ? ` (${what})` : ""}: ${CLASS_WORDS[cause.fault.class]} (${trimStop(cause.fault.message)})${tries}.`
  else if (cause.outcome === "no-report") said = `${capital(session)} ended without its report${tries}: ${trimStop(cause.detail)}.`
  else if (cause.outcome === "stalled") said = `${capital(session)} stalled: no output within the time allowed${tries}.`
  else if (cause.outcome === "spawn-failed") said = `${capital(session)} could not start${tries}: ${trimStop(cause.detail)}.`
  else said = `${capital(session)} failed${tries}: ${trimStop(cause.detail)}.`
  return `${said} Answer ${listAnswers(answers)}.`
}

/** The question of a task whose fresh session overflowed too (core/overflow.ts): worded apart, with what to do next. */
export function isOverflowAgain(cause: QuestionCause): boolean {
  return cause.fault?.class === "context-too-long" && (cause.tries ?? 0) > 0 && cause.taskId !== undefined
}

function trimStop(text: string): string {
  return text.replace(/[.。]+$/, "")
}

function capital(text: string): string {
  return text[0]!.toUpperCase() + text.slice(1)
}

const SYNONYMS: Record<string, string> = { 重试: "retry", 再试: "retry", 停止: "stop", 跳过: "skip", 放弃: "drop", 取消: "drop" }

/**
 * The accepted answer the user gave, if any: case, quotes and a trailing full stop do not matter, a
 * Chinese word stands for its English one, and "skip" alone means the one "skip …" offered.
 */
export function matchAnswer(answer: string, accepted: readonly string[]): string | undefined {
  const words = answer
    .trim()
    .replace(/^['"‘“「]+|['"’”」.。!！]+$/g, "")
    .trim()
    .split(/\s+/)
  const first = SYNONYMS[words[0] ?? ""] ?? words[0]?.toLowerCase() ?? ""
  const said = [first, ...words.slice(1)].join(" ").toLowerCase()
  return accepted.find((a) => a.toLowerCase() === said || (a.toLowerCase().startsWith(`${first} `) && words.length === 1))
}
