/**
 * Every run that finishes now ends with the Architect's final review of the whole requirement. Scenarios
 * built by the tests get a passing final review for the architect unless they script their own (a script
 * whose `match` names "Final milestone review"): it goes first, and matches only that prompt.
 */
export const passingFinalReview = {
  name: "final-review",
  agent: "architect",
  match: "^Final milestone review of phase (?<phase>\\d+):",
  steps: [{ tool: "air_milestone", args: { verdict: "pass", findings: [] } }, { text: "Final review of phase {{phase}} passed." }],
}

export function withFinalReview<T extends Record<string, unknown>>(scenario: T): T {
  const scripts = scenario.scripts
  if (!Array.isArray(scripts)) return scenario
  if (scripts.some((s) => typeof s?.match === "string" && s.match.includes("Final milestone review"))) return scenario
  return { ...scenario, scripts: [passingFinalReview, ...scripts] }
}
