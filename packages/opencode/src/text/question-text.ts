import { isOverflowAgain } from "../scheduler/core/session-outcome"
import type { Question } from "../scheduler/core/state"
import { t, type Lang } from "./words"

/**
 * A question as a person reads it, in their language: one asked because a session failed is worded from
 * its cause (words.ts); any other is shown as the machine wrote it. The English rendering equals the
 * machine's own text (core/session-outcome.ts causeQuestion), a test holds them together.
 */
export function questionText(q: Pick<Question, "text" | "cause" | "answers">, lang: Lang): string {
  const cause = q.cause
  if (!cause) return q.text
  const agent = t(lang, `q.agent.${cause.who}`)
  const doing =
    cause.who === "milestone" ? (cause.final ? t(lang, "q.doing.final") : t(lang, "q.doing.milestone", { phase: cause.phase ?? "?" })) : cause.who === "architect" || cause.who === "change" || cause.who === "adr" ? t(lang, `q.doing.${cause.who}`) : ""
  const forTask = cause.taskId ? t(lang, "q.for", { id: cause.taskId }) : ""
  const tries = cause.tries ? t(lang, "q.tries", { n: cause.tries }) : ""
  const answers = listAnswers(lang, q.answers ?? [])
  if (isOverflowAgain(cause)) return t(lang, "q.overflow", { agent, for: forTask, message: trimStop(cause.fault!.message), answers })
  if (cause.fault) {
    const about = forTask || (doing ? t(lang, "q.about", { doing }) : "")
    return t(lang, "q.fault", { agent, for: about, what: t(lang, `fault.${cause.fault.class}`), message: trimStop(cause.fault.message), tries, answers })
  }
  const session = capital(t(lang, doing ? "q.session.doing" : "q.session", { agent, doing, for: forTask }))
  return t(lang, `q.${cause.outcome}`, { session, tries, detail: trimStop(cause.detail), answers })
}

function listAnswers(lang: Lang, answers: readonly string[]): string {
  const quoted = answers.map((answer) => t(lang, "q.answer", { answer }))
  if (quoted.length < 2) return quoted.join("")
  return `${quoted.slice(0, -1).join(t(lang, "q.sep"))}${t(lang, "q.or")}${quoted[quoted.length - 1]}`
}

function trimStop(text: string): string {
  return text.replace(/[.。]+$/, "")
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
