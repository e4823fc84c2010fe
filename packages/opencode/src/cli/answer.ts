import { isYes } from "../scheduler/core/answer"
import { Store } from "../scheduler/runtime/store/store"
import { UsageError } from "./ui"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * `aircoding run --resume --answer "…"`: the user's answer to what a stopped headless run waits for,
 * recorded in the event log before the engine starts again. The resumed Scheduler then carries it out
 * (a confirmed plan goes to the Architect for its task graph, a change request for a revised proposal, an
 * answered question unblocks what waited on it).
 */
export namespace Answer {
  export type Parsed = { kind: "confirm"; notes?: string } | { kind: "change"; text: string }

  const CHANGE = /^\s*change\s*:\s*(.+)$/is

  export function parse(text: string): Parsed {
    if (isYes(text)) return { kind: "confirm" }
    const change = CHANGE.exec(text)
    if (change?.[1]?.trim()) return { kind: "change", text: change[1].trim() }
    throw new UsageError(`--answer "${text}" is neither "yes" nor "change: <what to change>"`)
  }

  type Open = { questionId: string }

  /** `ID: answer` names an open question; otherwise the answer is for the oldest one (the next exit 2 shows the rest). */
  export function target(open: readonly Open[], text: string): { questionId: string; answer: string } | undefined {
    for (const q of open) {
      const prefix = `${q.questionId}:`
      if (text.trimStart().startsWith(prefix)) return { questionId: q.questionId, answer: text.trimStart().slice(prefix.length).trim() }
    }
    return open[0] ? { questionId: open[0].questionId, answer: text.trim() } : undefined
  }

  /**
   * Records the answer: to the plan waiting for confirmation, else to an open question (a failed baseline, a
   * blocked task, a provider's refusal: "retry", "skip T-2", in the user's words, as in the TUI's dialog).
   * Returns what was recorded, in words; refuses when the run waits for neither.
   */
  export async function record(dir: string, text: string): Promise<string> {
    const store = await Store.open(AirPaths.air(dir))
    try {
      const at = new Date().toISOString()
      // A failed baseline's question comes first: "go on" (known failures) or "fixed" (run it again).
      const baseline = store.state.questions.filter((q) => q.questionId === store.state.baseline?.questionId)
      const open = [...baseline, ...store.state.questions.filter((q) => !baseline.includes(q))]
      if (store.state.stage === "confirming" && baseline.length === 0) {
        const answer = parse(text)
        const result = store.append(answer.kind === "confirm" ? { type: "plan.confirmed", at } : { type: "plan.revision.requested", text: answer.text, at })
        if ("refused" in result) throw new UsageError(`the answer was refused: ${result.refused}`)
        return answer.kind === "confirm" ? "plan confirmed" : `changes to the plan asked for: ${answer.text}`
      }
      const question = target(open, text)
      if (!question) throw new UsageError(`the run in ${dir} waits for no answer (stage: ${store.state.stage}); resume it without --answer`)
      if (!question.answer) throw new UsageError(`--answer "${text}" says nothing after the question's id`)
      const result = store.append({ type: "question.answered", questionId: question.questionId, answer: question.answer, at })
      if ("refused" in result) throw new UsageError(`the answer was refused: ${result.refused}`)
      return baseline.some((q) => q.questionId === question.questionId) ? `answered the baseline's question: ${question.answer}` : `answered ${question.questionId}: ${question.answer}`
    } finally {
      await store.close()
    }
  }
}
