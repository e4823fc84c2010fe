import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { SchedulerState } from "../../core/state"
import { Adrs } from "../adrs"
import { writeFileAtomicSync } from "../store/atomic"
import { PlanView } from "../../../text/plan-view"
import { AirPaths } from "../../core/air-paths"

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

/**
 * The plan's files for people and agents (requirements.md, plan.md, task-graph.json) are views of the log:
 * written only after the event that makes them true is stored (never before, so a crash or a refused event
 * leaves no file claiming a plan the log does not have), and derived from the state when missing or stale.
 */
export namespace PlanFiles {
  /** Events after which a plan file may change (an ADR recorded or reclassified changes plan.md's decisions). */
  export const EVENTS: ReadonlySet<string> = new Set(["run.started", "plan.proposed", "graph.accepted", "delta.accepted", "milestone.reviewed", "adr.recorded", "adr.classified"])

  export function dir(root: string): string {
    return AirPaths.plan(root)
  }

  /**
   * Each file with the content the state gives it (absent: the state says nothing of it yet); plan.md shows
   * the accepted graph once there is one (the proposal's draft before), and the decisions `adrs` (their titles).
   */
  export function expected(state: SchedulerState, adrs: readonly string[] = []): { name: string; content: string }[] {
    if (state.runId === null) return []
    const files = [{ name: "requirements.md", content: `# Requirement\n\n${state.requirement}\n` }]
    if (state.planSummary !== null) files.push({ name: "plan.md", content: PlanView.markdown(state.planSummary, state.graph ?? state.proposedGraph, adrs) })
    if (state.graph !== null) files.push({ name: "task-graph.json", content: JSON.stringify(state.graph, null, 2) })
    return files
  }

  /** Brings the files in line with the state: writes those missing or different (atomically); returns their names. */
  export function sync(root: string, state: SchedulerState): string[] {
    const written: string[] = []
    for (const { name, content } of expected(state, PlanView.adrTitles(root))) {
      const path = join(dir(root), name)
      if (existsSync(path) && readFileSync(path, "utf8") === content) continue
      writeFileAtomicSync(path, content)
      written.push(name)
    }
    return written
  }
}
