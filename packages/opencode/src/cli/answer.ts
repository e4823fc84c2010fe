import { join } from "node:path"
import { isYes } from "../scheduler/core/answer"
import { Store } from "../scheduler/runtime/store/store"
import { UsageError } from "./ui"

/**
 * `aircoding run --resume --answer "…"`: the user's answer to what a stopped headless run waits for,
 * recorded in the event log before the engine starts again. The resumed Scheduler then carries it out
 * (a confirmed plan goes to the Architect for its task graph, a change request for a revised proposal).
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

  /** Records the answer; refuses when the run waits for no plan confirmation. Returns what was recorded, in words. */
  export async function record(dir: string, text: string): Promise<string> {
    const store = await Store.open(join(dir, ".air"))
    try {
      // A failed baseline's question: "go on" (known failures) or "fixed" (run it again), in the user's words.
      const baseline = store.state.baseline?.questionId
      if (baseline && store.state.questions.some((q) => q.questionId === baseline)) {
        const result = store.append({ type: "question.answered", questionId: baseline, answer: text, at: new Date().toISOString() })
        if ("refused" in result) throw new UsageError(`the answer was refused: ${result.refused}`)
        return `answered the baseline's question: ${text}`
      }
      const answer = parse(text)
      if (store.state.stage !== "confirming")
        throw new UsageError(`the run in ${dir} waits for no plan confirmation (stage: ${store.state.stage}); resume it without --answer`)
      const at = new Date().toISOString()
      const result = store.append(answer.kind === "confirm" ? { type: "plan.confirmed", at } : { type: "plan.revision.requested", text: answer.text, at })
      if ("refused" in result) throw new UsageError(`the answer was refused: ${result.refused}`)
      return answer.kind === "confirm" ? "plan confirmed" : `changes to the plan asked for: ${answer.text}`
    } finally {
      await store.close()
    }
  }
}
