import { Adrs } from "./adrs"

/** What Main is given to show the user when a plan waits for them: the proposal and the decisions recorded with it. */
export namespace Proposal {
  export function text(root: string, summary: string): string {
    const adrs = Adrs.list(root)
    return [
      "PLAN PROPOSED — show the user this plan (tasks, dependencies, decisions) and ask whether to go ahead. If they agree, call air_confirm; if they want changes, pass their words on with air_change (the Architect revises and proposes again).",
      "",
      summary,
      ...(adrs.length ? ["", "Decisions (ADRs):", ...adrs.map((a) => `- ${a}`)] : []),
    ].join("\n")
  }
}
