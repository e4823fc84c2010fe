import type { RunConfig } from "./event.schema"
import type { Step, StepRuns } from "./vocabulary"

/** What the step rules read of the state. */
type Holder = { config: Pick<RunConfig, "wallClockMs"> | null; steps: StepRuns }

export { emptySteps, MAX_FRESH_SESSIONS, STEPS, StepRun, StepRuns, type Step } from "./vocabulary"

/** A session of the step starts (or is prompted again) at `at`: its deadline is `at` plus the run's wall-clock cap. */
export function stepStarted(s: Holder, step: Step, at: string, fresh?: number): StepRuns {
  const cap = s.config?.wallClockMs
  const time = cap === undefined ? NaN : Date.parse(at) + cap
  const deadline = Number.isNaN(time) ? null : new Date(time).toISOString()
  return { ...s.steps, [step]: { fresh: fresh ?? s.steps[step].fresh, deadline } }
}

/** The step reached its outcome (or waits for a person): no session of it is timed, and its failures are forgiven. */
export function stepEnded(s: Holder, step: Step, keepFresh = false): StepRuns {
  return { ...s.steps, [step]: { fresh: keepFresh ? s.steps[step].fresh : 0, deadline: null } }
}
