import { Usage } from "../scheduler/runtime/sessions/usage"
import { JobsFile } from "../scheduler/runtime/jobs/file"
import type { SchedulerState } from "../scheduler/core/state"
import { RunData } from "../scheduler/runtime/store/run-data"
import { ProgramEvidence } from "../scheduler/runtime/verify/program-evidence"
import { RunView } from "./view"
import { GateProgress } from "../scheduler/runtime/store/gate-progress"
import { CheckReuse } from "./check-reuse"
import { RunLiveness } from "./run-liveness"

/**
 * The status view of a run on disk: the fold of its log plus what evidence/ and requests.jsonl hold, and whether
 * its process still runs (RunLiveness: a run whose process is gone is "interrupted", its leftovers ignored).
 */
export function readStatus(
  root: string,
  state: SchedulerState,
  entries: readonly RunData.Entry[],
  now?: string,
): RunView.Status {
  const gateReports: Record<string, RunData.GateReportFile | null> = {}
  // The gate run the state knows of: a directory beyond it belongs to a later moment than the log shows.
  for (const rt of state.tasks) gateReports[rt.id] = RunData.lastGateReport(root, rt.id, rt.gateRuns)
  // A ui or service task names its capture's and probe's files (of the gate run the state knows of).
  const kinds = new Map((state.graph?.tasks ?? []).map((n) => [n.id, n.kind]))
  const programEvidence: Record<string, ProgramEvidence.Evidence | null> = {}
  for (const rt of state.tasks) if ((kinds.get(rt.id) === "ui" || kinds.get(rt.id) === "service") && rt.gateRuns > 0) programEvidence[rt.id] = ProgramEvidence.read(root, rt.id, rt.gateRuns)
  const run = RunLiveness.of(root)
  return RunView.build({
    state,
    entries,
    gateReports,
    modelRequests: Usage.byAgent(root),
    requestsBySession: Usage.bySession(root),
    now,
    ...jobsOf(root, run),
    progress: RunLiveness.liveProgress(GateProgress.readAll(root), run),
    process: run,
    reusedChecks: CheckReuse.read(root, state),
    programEvidence,
  })
}

/** The run's job budget, when jobs.json is there. */
function jobsOf(root: string, run: RunLiveness.Process): { jobs?: JobsFile.Data } {
  const jobs = JobsFile.read(root)
  return jobs ? { jobs: RunLiveness.liveJobs(jobs, run) } : {}
}
