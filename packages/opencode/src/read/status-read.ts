import { Usage } from "../scheduler/runtime/sessions/usage"
import { JobsFile } from "../scheduler/runtime/jobs/file"
import type { SchedulerState } from "../scheduler/core/state"
import { RunData } from "./run-data"
import { RunView } from "./view"
import { GateProgress } from "./gate-progress"
import { CheckReuse } from "./check-reuse"

/** The status view of a run on disk: the fold of its log plus what evidence/ and requests.jsonl hold. */
export function readStatus(
  root: string,
  state: SchedulerState,
  entries: readonly RunData.Entry[],
  now?: string,
): RunView.Status {
  const gateReports: Record<string, RunData.GateReportFile | null> = {}
  // The gate run the state knows of: a directory beyond it belongs to a later moment than the log shows.
  for (const rt of state.tasks) gateReports[rt.id] = RunData.lastGateReport(root, rt.id, rt.gateRuns)
  return RunView.build({
    state,
    entries,
    gateReports,
    modelRequests: Usage.byAgent(root),
    requestsBySession: Usage.bySession(root),
    now,
    ...jobsOf(root),
    progress: GateProgress.readAll(root),
    reusedChecks: CheckReuse.read(root, state),
  })
}

/** The run's job budget, when jobs.json is there. */
function jobsOf(root: string): { jobs?: JobsFile.Data } {
  const jobs = JobsFile.read(root)
  return jobs ? { jobs } : {}
}
