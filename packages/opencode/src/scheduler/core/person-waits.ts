import { isFaultQuestion } from "./fault-rules"
import { graphIndex } from "./graph-index"
import { ACTIVE_STATUSES, baselineHolds, type SchedulerState } from "./state"

/**
 * Whether the run can still move without a person (issue 39 item 8): something is in flight — a task's
 * worker, gates, review, consult or merge, the Architect's plan, replan, milestone review or ADR
 * classification, the baseline, a revert, a deploy — or a ready task may start. A question blocks only what
 * waits on its answer: a blocked task (and, through the machine, the tasks after it), the step that asked it,
 * a failed baseline (nothing starts), a spent run budget. A headless run exits 2 only when this says no and
 * a person is needed (`waitsOnlyForPerson`); work that can go on goes on.
 */
export function movesWithoutPerson(s: SchedulerState): boolean {
  switch (s.stage) {
    case "idle":
    case "confirming":
    case "finished":
      return false
    case "planning":
    case "confirmed":
      return !asked(s, "plan")
  }
  // The watchdog asks only when it found nothing at work: what the state calls active is not moving.
  if (s.questions.some(isFaultQuestion)) return false
  if (s.tasks.some((t) => ACTIVE_STATUSES.has(t.status)) || s.merging.length > 0 || s.reverts.length > 0) return true
  if (s.milestone && !asked(s, "milestone") && !s.questions.some((q) => q.milestone !== undefined)) return true
  if (s.frozen && !asked(s, "change")) return true
  if (s.adrEdits.length > 0 || s.baseline?.status === "running") return true
  if ((s.deploy?.targets ?? []).some((d) => d.status === "running")) return true
  return readyCanStart(s)
}

/** Nothing moves and a person must act: a plan to confirm, a question to answer, a pause to lift. */
export function waitsOnlyForPerson(s: SchedulerState): boolean {
  if (s.stage === "idle" || s.stage === "finished") return false
  if (s.stage === "confirming") return true
  return (s.questions.length > 0 || s.paused) && !movesWithoutPerson(s)
}

function asked(s: SchedulerState, step: "plan" | "change" | "milestone"): boolean {
  return s.questions.some((q) => q.step === step)
}

/** A ready task of the current phase that nothing but a free slot or a task in flight holds back. */
function readyCanStart(s: SchedulerState): boolean {
  if (s.paused || s.frozen || s.runBudgetSpent || baselineHolds(s) || !s.graph) return false
  const { indexOf } = graphIndex(s.graph)
  return s.ready.some((id) => (s.graph!.tasks[indexOf.get(id) ?? -1]?.phase ?? Infinity) <= s.currentPhase)
}
