import { commandId } from "./command"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import { outstanding } from "./outstanding"
import { matchAnswer } from "./session-outcome"
import type { Question, TaskRuntime } from "./state"
import type { TaskStatus } from "./task.schema"
import { workerResume } from "./step-rules"

/**
 * The last line of defence (issue 44): the runtime records what no other rule covers — a command whose outcome and
 * failure events were both refused, or a run with nothing in flight, nothing asked and work left (the watchdog) —
 * as `runtime.fault`, and these rules turn it into a question. A task still waiting on the command blocks with the
 * cause; a stalled run asks whether to carry out again what the state waits on (as a restart would) or to stop.
 */

/** The answers the watchdog's question accepts. */
const FAULT_ANSWERS = ["retry", "stop"] as const

/** The statuses in which a task waits on a command of this type: a fault of it blocks the task; otherwise it is stale. */
const AWAITED_BY: Partial<Record<string, readonly TaskStatus[]>> = {
  dispatch: ["running", "debugging"],
  runGates: ["gating"],
  review: ["reviewing"],
  consult: ["consulting"],
  merge: ["merging"],
}

/** Where the blocked task resumes when the user answers: the step the failed command was. */
function resumeOf(t: TaskRuntime): NonNullable<TaskRuntime["resume"]> {
  if (t.status === "gating") return "gates"
  if (t.status === "reviewing" || t.status === "consulting") return "review"
  if (t.status === "merging") return "merge"
  return workerResume(t)
}

export function runtimeFault(d: Draft, e: EventOf<"runtime.fault">): string | undefined {
  const s = d.s
  if (s.runId === null) return "no run has started; a fault concerns nothing"
  if (s.finished) return "the run has ended; nothing waits"
  if (e.source === "command") {
    const awaited = e.command ? AWAITED_BY[e.command] : undefined
    const t = e.taskId !== undefined && s.graph ? d.task(e.taskId) : undefined
    if (!t || !awaited) return `no task waits on ${e.command ?? "the command"}; the fault is recorded in the inbox only`
    if (!awaited.includes(t.status)) return `task ${t.id} is ${t.status}: it no longer waits on ${e.command}`
    d.patch(t.id, { lastFailure: { source: `runtime:${e.command}`, message: e.message, evidencePath: null } })
    d.block(t.id, `the Scheduler could not carry out its ${e.command}: ${e.message}`, resumeOf(t))
    d.schedule()
    return undefined
  }
  if (s.questions.length > 0) return "a person is already asked; the run waits on the answer, not on nothing"
  const questionId = `fault:${s.eventCount}`
  const text =
    `The Scheduler found nothing at work and nothing waiting for you, with work left (${e.state ?? e.message}).` +
    ` Answer "retry" to carry out again what the run waits on, as a restart would, or "stop" to end the run blocked.`
  s.questions = [...s.questions, { questionId, taskId: null, text, fault: true, answers: [...FAULT_ANSWERS] }]
  d.emit({ type: "ask", id: commandId.ask(questionId), questionId, text })
  d.notify(`the run stalled with nothing in flight (${e.state ?? e.message}); the user is asked`)
  return undefined
}

export function isFaultQuestion(q: Question): boolean {
  return q.fault === true
}

export function answerFault(d: Draft, question: Question, answer: string): string | undefined {
  const choice = matchAnswer(answer, question.answers ?? FAULT_ANSWERS)
  if (!choice) return `"${answer}" is not an answer to ${question.questionId}; answer one of: ${(question.answers ?? FAULT_ANSWERS).join(", ")}`
  d.s.questions = d.s.questions.filter((q) => q !== question)
  if (choice === "retry") {
    // What a restarted runtime would carry out again: the state's own list, with the ids first issued.
    for (const cmd of outstanding(d.s)) if (cmd.type !== "ask") d.emit(cmd)
    d.notify("the user answered retry: what the run waits on is carried out again")
    d.schedule()
    return undefined
  }
  d.notify("the user stopped the stalled run")
  if (d.s.graph && (d.s.stage === "running" || d.s.stage === "milestone")) {
    d.s.stage = "running"
    d.s.milestone = null
    d.finishBlocked()
    return undefined
  }
  d.s.stage = "finished"
  d.s.finished = { status: "blocked" }
  d.s.finalCheck = null
  d.emit({ type: "finish", id: commandId.finish("blocked", d.s.eventCount), status: "blocked" })
  return undefined
}
