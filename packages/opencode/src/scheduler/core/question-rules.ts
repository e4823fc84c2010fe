import { answerBaseline, isBaselineQuestion } from "./baseline"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import { answerRunCost, isCostQuestion } from "./money-rules"
import { answerStep, answerTaskChoice, isStepQuestion } from "./step-rules"
import { answerFault, isFaultQuestion } from "./fault-rules"
import { answerDeploy } from "./deploy"

/** The machine's rule for the user's answer: each kind of question (baseline, deploy, fault, cost, step, a task's choices, a budget, a milestone) goes to the rule that asked it. */

export function questionAnswered(d: Draft, e: EventOf<"question.answered">): string | undefined {
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
}
