import { describe, expect, test } from "vitest"
import { PROVIDER_ERROR_CLASSES, type ProviderErrorClass } from "../../src/scheduler/core/provider-fault"
import { causeQuestion, FAILED_OUTCOMES, PURPOSE_KINDS, type QuestionCause } from "../../src/scheduler/core/session-outcome"
import { questionText } from "../../src/text/question-text"
import { ProviderError } from "../../src/scheduler/runtime/sessions/provider-error"

/** Causes for every purpose, outcome and provider class, some with the provider's raw JSON as the engine sends it. */
function causes(): QuestionCause[] {
  const raw = ProviderError.classify({ name: "APIError", data: { message: "Bad Request", statusCode: 404, isRetryable: false, responseBody: '{"type":"error","error":{"type":"not_found_error","message":"model: \\"claude-x\\""}}' } })
  const out: QuestionCause[] = []
  for (const who of PURPOSE_KINDS)
    for (const outcome of FAILED_OUTCOMES)
      out.push({ who, outcome, detail: 'the session ended twice without calling air_report.', tries: outcome === "spawn-failed" ? 0 : 2, ...(who === "executor" || who === "debugger" || who === "reviewer" ? { taskId: "T-2" } : {}), ...(who === "milestone" ? { phase: 2, final: outcome === "stalled" } : {}) })
  for (const cls of PROVIDER_ERROR_CLASSES as readonly ProviderErrorClass[])
    for (const who of PURPOSE_KINDS) out.push({ who, outcome: "errored", detail: raw.message, fault: { class: cls, retryable: false, message: raw.message }, ...(who === "debugger" ? { taskId: "T-2" } : {}) })
  return out
}

const answers = ["retry", "skip T-2", "stop"]

describe("a question asked because a session failed", () => {
  test("in English, the view's words equal the machine's text", () => {
    for (const cause of causes()) expect(questionText({ text: "", cause, answers }, "en")).toBe(causeQuestion(cause, answers))
  })

  test("the example of the issue, in both languages", () => {
    const cause: QuestionCause = { who: "debugger", taskId: "T-2", outcome: "errored", detail: "", fault: { class: "model-not-found", retryable: false, message: "anthropic/claude-x" } }
    expect(questionText({ text: "", cause, answers }, "en")).toBe("The model provider refused the Debugger's request for T-2: the model was not found (anthropic/claude-x). Answer 'retry', 'skip T-2' or 'stop'.")
    expect(questionText({ text: "", cause, answers }, "zh-CN")).toBe("模型服务拒绝了调试者的请求（任务 T-2）：找不到该模型（anthropic/claude-x）。请回答 「retry」、「skip T-2」 或 「stop」。")
  })

  test("no question text, in any language, holds JSON or an escaped quote", () => {
    for (const cause of causes())
      for (const lang of ["en", "zh-CN"] as const) {
        const text = questionText({ text: "", cause, answers }, lang)
        expect(text).not.toMatch(/\{"|\\"|\{\w+\}/)
        expect(text.split("\n")).toHaveLength(1)
      }
  })

  test("a question without a cause is shown as the machine wrote it", () => {
    expect(questionText({ text: "Task T-1 is blocked. How should it continue?" }, "zh-CN")).toBe("Task T-1 is blocked. How should it continue?")
  })
})
