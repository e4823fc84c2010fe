/**
 * How a person answers a proposed plan in their own words: a yes confirms it; anything else is what they
 * want changed. Shared by the TUI's plan dialog and `aircoding run --resume --answer`.
 */
const YES = /^\s*(yes|y|ok|okay|sure|confirm(ed)?|go( ahead)?|lgtm|是|是的|好|好的|可以|行|确认|同意|没问题)\s*[.!。！]?\s*$/i
const CHANGE_PREFIX = /^\s*(change|修改|更改)\s*[:：]\s*/i

type PlanAnswer = { kind: "confirm" } | { kind: "change"; text: string }

/** An empty answer or a yes confirms; "change: …" (or any other text) asks for those changes. */
export function parsePlanAnswer(text: string): PlanAnswer {
  if (text.trim() === "" || YES.test(text)) return { kind: "confirm" }
  return { kind: "change", text: text.replace(CHANGE_PREFIX, "").trim() }
}

export function isYes(text: string): boolean {
  return YES.test(text)
}
