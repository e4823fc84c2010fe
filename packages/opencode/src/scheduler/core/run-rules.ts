import { commandId } from "./command"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import { initialState } from "./state"
import { emptyUsage } from "./usage"
import { stepStarted } from "./steps"
import { startDeploy } from "./deploy"
import { needStage } from "./rule-guards"
import { startBaselineOnce } from "./baseline"

/** The machine's rules for a run's life: it starts, pauses, resumes, and its final check after the end. */

export function runStarted(d: Draft, e: EventOf<"run.started">): string | undefined {
  if (d.s.stage !== "idle" && d.s.stage !== "finished")
    return `run ${d.s.runId} is in progress (stage: ${d.s.stage}); a new run starts only after it finished`
  if (d.s.stage === "finished") Object.assign(d.s, { ...initialState(), eventCount: d.s.eventCount, lastAt: e.at })
  Object.assign(d.s, { stage: "planning", runId: e.runId, requirement: e.requirement, config: e.config, integration: e.integration ?? null })
  d.s.usage = emptyUsage(e.at)
  d.s.steps = stepStarted(d.s, "plan", e.at, 0)
  d.emit({ type: "plan", id: commandId.plan(e.runId), requirement: e.requirement, autoConfirm: e.config.autoConfirm })
  d.notify(`run ${e.runId} started; the Architect is planning`)
  // Confirmed automatically, the plan stops for no one: the integration head is built and tested while the Architect plans.
  if (e.config.autoConfirm) startBaselineOnce(d)
}

export function finalCheckDone(d: Draft, e: EventOf<"finalCheck.done">): string | undefined {
  if (d.s.stage !== "finished") return `the run has not finished (stage: ${d.s.stage}); the final check comes after the end`
  if (d.s.finalCheck) return `the final check of this run is already recorded (${d.s.finalCheck.status})`
  d.s.finalCheck = { status: e.status, message: e.message }
  d.notify(`final check of the integration branch: ${e.status}${e.message ? ` — ${e.message}` : ""}`)
  startDeploy(d, e)
}

export function runPaused(d: Draft): string | undefined {
  const refusal = needStage(d, ["running", "milestone"], "only a running run can be paused")
  if (refusal) return refusal
  if (d.s.paused) return "the run is already paused"
  d.s.paused = true
  d.notify("run paused: tasks in flight finish, no new task starts")
}

export function runResumed(d: Draft): string | undefined {
  if (!d.s.paused) return "the run is not paused"
  d.s.paused = false
  d.notify("run resumed")
  d.schedule()
}
