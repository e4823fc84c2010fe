import type { Conversation } from "./conversation.ts"
import type { Step } from "./schema.ts"

/** Every way the request differs from what the step expects; empty when it is as scripted. */
export function unmetExpectations(step: Step, conv: Conversation): string[] {
  const problems: string[] = []
  const offered = new Set(conv.offered)
  const e = step.expect ?? {}
  const missing = (names: string[] | undefined) => (names ?? []).filter((n) => !offered.has(n))

  const notOfferedButExpected = missing(e.offered)
  if (notOfferedButExpected.length) problems.push(`expect.offered: ${list(notOfferedButExpected)} not offered`)

  const forbidden = (e.notOffered ?? []).filter((n) => offered.has(n))
  if (forbidden.length) problems.push(`expect.notOffered: ${list(forbidden)} is offered`)

  if (e.offeredExactly) {
    const want = new Set(e.offeredExactly)
    const lacking = e.offeredExactly.filter((n) => !offered.has(n))
    const extra = conv.offered.filter((n) => !want.has(n))
    if (lacking.length || extra.length) {
      problems.push(`expect.offeredExactly: ${[lacking.length ? `missing ${list(lacking)}` : "", extra.length ? `unexpected ${list(extra)}` : ""].filter(Boolean).join(", ")}`)
    }
  }

  for (const [key, haystack] of [
    ["systemIncludes", conv.system],
    ["lastToolResultIncludes", conv.lastToolResult],
    ["lastUserIncludes", conv.lastUser],
    ["assistantIncludes", conv.assistantText],
  ] as const) {
    const absent = (e[key] ?? []).filter((needle) => !haystack.includes(needle))
    if (absent.length) problems.push(`expect.${key}: ${list(absent)} not found`)
  }

  const present = (e.lastUserExcludes ?? []).filter((needle) => conv.lastUser.includes(needle))
  if (present.length) problems.push(`expect.lastUserExcludes: ${list(present)} found`)

  if (e.lastUserImages !== undefined && conv.lastUserImages.length !== e.lastUserImages)
    problems.push(`expect.lastUserImages: ${e.lastUserImages} expected, ${conv.lastUserImages.length} received${conv.lastUserImages.length ? ` (${conv.lastUserImages.join(", ")})` : ""}`)

  if (!step.allowUnoffered) {
    const called = step.tool !== undefined ? [step.tool] : (step.tools ?? []).map((t) => t.tool)
    const unoffered = missing(called)
    if (unoffered.length) problems.push(`the step calls ${list(unoffered)} but the request does not offer it (set "allowUnoffered": true if that is the point)`)
  }
  return problems
}

const list = (names: string[]) => names.map((n) => JSON.stringify(n)).join(", ")
