import { z } from "zod"
import type { SchedulerState } from "./state"

/**
 * Steps of a run that belong to no task, each carried out by one Architect session at a time: the plan,
 * a requirement change (replan) and a milestone review (the final one included). Like a task's worker,
 * each has a deadline in the state (a restart keeps it) and a bounded number of fresh sessions after a
 * failure before the user is asked.
 */
export const STEPS = ["plan", "change", "milestone"] as const
export type Step = (typeof STEPS)[number]

/** Fresh sessions a step gets after its session failed, before the user is asked (an answer "retry" gives them again). */
export const MAX_FRESH_SESSIONS = 2

export const StepRun = z.object({
  /** Fresh sessions started after a failure since the step last succeeded (or the user answered "retry"). */
  fresh: z.number().int().default(0),
  /** When the current session's wall-clock cap runs out (its start plus the cap); null while none works. */
  deadline: z.string().nullable().default(null),
})
export type StepRun = z.infer<typeof StepRun>

export const StepRuns = z.object({ plan: StepRun, change: StepRun, milestone: StepRun })
export type StepRuns = z.infer<typeof StepRuns>

export function emptySteps(): StepRuns {
  return { plan: { fresh: 0, deadline: null }, change: { fresh: 0, deadline: null }, milestone: { fresh: 0, deadline: null } }
}

/** A session of the step starts (or is prompted again) at `at`: its deadline is `at` plus the run's wall-clock cap. */
export function stepStarted(s: SchedulerState, step: Step, at: string, fresh?: number): StepRuns {
  const cap = s.config?.wallClockMs
  const time = cap === undefined ? NaN : Date.parse(at) + cap
  const deadline = Number.isNaN(time) ? null : new Date(time).toISOString()
  return { ...s.steps, [step]: { fresh: fresh ?? s.steps[step].fresh, deadline } }
}

/** The step reached its outcome (or waits for a person): no session of it is timed, and its failures are forgiven. */
export function stepEnded(s: SchedulerState, step: Step, keepFresh = false): StepRuns {
  return { ...s.steps, [step]: { fresh: keepFresh ? s.steps[step].fresh : 0, deadline: null } }
}
