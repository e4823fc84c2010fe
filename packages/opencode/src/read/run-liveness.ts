import { RunHolder } from "../scheduler/runtime/store/run-holder"
import { ProcessIdentity } from "../scheduler/runtime/store/process-identity"
import type { JobsFile } from "../scheduler/runtime/jobs/file"
import type { GateProgress } from "../scheduler/runtime/store/gate-progress"
import { RunData } from "../scheduler/runtime/store/run-data"

/**
 * Whether anything still carries the run, the one rule every view applies (`aircoding status` and `--json`,
 * air_status, the TUI, the dashboard). The files the run's process leaves for the views — the progress of a
 * running command, the job budget's holders — say what was true when it wrote them; after a SIGKILL or a quit
 * nobody removes them, and read as they are they show a build at 36% whose time climbs and jobs in use with
 * nothing running. So:
 * - the run's process is the store lock's holder (RunHolder), or, with no lock, the last process that
 *   recorded itself as carrying the run; it is alive only if that very process runs (pid and start time);
 * - a progress file counts only while its writer runs, the job holders only while the budget's writer runs;
 *   a file that names no writer (an older version's) follows the run's process.
 * Nothing recorded a process at all (a log from another tool, a test's): the log is trusted as it is.
 */
export namespace RunLiveness {
  export type Process = {
    /** "live": the run's process runs (or runs on another host, which we cannot see); "gone": it ended; "unknown": none was ever recorded. */
    state: "live" | "gone" | "unknown"
    pid: number | null
    /** The command that resumes the run, as its launcher recorded it (else the headless one for this directory). */
    resume: string
  }

  export function of(root: string): Process {
    const dir = RunData.stateDir(root)
    const lock = RunHolder.current(dir)
    const last = RunHolder.last(dir)
    const holder = lock ?? last ?? null
    const resume = lock?.restart ?? last?.restart ?? RunHolder.defaultResume(root)
    if (!holder) return { state: "unknown", pid: null, resume }
    return { state: ProcessIdentity.judge(holder) === "gone" ? "gone" : "live", pid: holder.pid, resume }
  }

  /** Whether a file's writer still runs; a file that names none follows the run's process. */
  export function writerLive(writer: ProcessIdentity.Data | undefined, run: Process): boolean {
    if (writer) return ProcessIdentity.judge(writer) !== "gone"
    return run.state !== "gone"
  }

  /** The progress files of commands still running: those of a process that is gone are left over, not progress. */
  export function liveProgress(files: Record<string, GateProgress.File>, run: Process): Record<string, GateProgress.File> {
    return Object.fromEntries(Object.entries(files).filter(([, file]) => writerLive(file.writer, run)))
  }

  /** The job budget as it stands: a budget whose process is gone has no job in use and nobody waiting (its size and peaks stay). */
  export function liveJobs(jobs: JobsFile.Data, run: Process): JobsFile.Data {
    if (writerLive(jobs.writer, run)) return jobs
    return { ...jobs, inUse: 0, waiting: 0, holders: [] }
  }
}
