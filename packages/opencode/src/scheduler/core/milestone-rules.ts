import { type Draft, MILESTONE_FIX_ROUNDS } from "./draft"
import type { EventOf } from "./event.schema"
import { passMilestone } from "./step-rules"
import { acceptDelta } from "./plan-rules"

/** The machine's rules for a phase's milestone review: it starts, and passes or brings fix tasks for its phase (after MILESTONE_FIX_ROUNDS rounds, the user decides). */

export function milestoneReached(d: Draft, e: EventOf<"milestone.reached">): string | undefined {
  const m = d.s.milestone
  if (d.s.stage !== "milestone" || !m) return `no milestone review is due (stage: ${d.s.stage})`
  if (m.phase !== e.phase) return `the milestone due is phase ${m.phase}, not ${e.phase}`
  if (m.reviewing) return `the review of milestone ${m.phase} already started`
  d.s.milestone = { ...m, reviewing: true }
}

export function milestoneReviewed(d: Draft, e: EventOf<"milestone.reviewed">): string | undefined {
  const m = d.s.milestone
  if (d.s.stage !== "milestone" || !m) return `no milestone review is due (stage: ${d.s.stage})`
  if (m.phase !== e.phase) return `the milestone due is phase ${m.phase}, not ${e.phase}`
  if (e.verdict === "pass") {
    passMilestone(d)
    return
  }
  if (!e.fixTasks || e.fixTasks.length === 0) return `a failing review of milestone ${m.phase} must bring fix tasks`
  // Fix tasks belong to the phase they fix, whatever phase they were written with.
  const add = e.fixTasks.map((task) => ({ ...task, phase: m.phase }))
  const fails = d.s.milestoneFails + 1
  if (fails > MILESTONE_FIX_ROUNDS) {
    // Rounds of fixes are spent: the user decides (their answer reaches the next review).
    d.s.stage = "running"
    d.s.milestone = null
    d.s.milestoneFails = fails
    d.askAboutMilestone(m.phase, fails, e.findings ?? add.map((t) => t.title))
    d.schedule()
    return
  }
  const refusal = acceptDelta(d, { schemaVersion: 1, add, remove: [], modify: [], supersedesAdrs: [] })
  if (refusal) return `the fix tasks of milestone ${m.phase} are invalid:\n${refusal}`
  d.s.stage = "running"
  d.s.milestone = null
  d.s.milestoneFails = fails
  d.notify(`${m.final ? "final review" : `milestone ${m.phase}`} needs fixes: ${add.map((t) => t.id).join(", ")}`)
  d.schedule()
}
