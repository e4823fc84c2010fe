import type { Ports } from "./ports"
import { ContextPack } from "./sessions/context-pack"
import { EvidencePack } from "./sessions/evidence-pack"
import { OverflowCarry } from "./sessions/overflow-carry"
import { WorkerSession } from "./sessions/worker-session"
import { RunReport } from "./report/run-report"
import { DeployStep } from "./deploy/step"

/**
 * The ports only the interpreter reaches, beside the run's (ports.ts). Apart because what they wrap takes the run's
 * ports itself (the deploy step, the supervisor's session spec, the usage the report reads, the git an overflow's
 * carry asks): in ports.ts they would close a circle of imports through it.
 */
type ContextPort = {
  /** Each role's context pack, read from the prompts, the knowledge folder and the task's files. */
  pack: Pick<typeof ContextPack, "architect" | "architectAgain" | "confirmedText" | "revisionText" | "reviewer" | "consult" | "milestone" | "adrEdit" | "change">
  /** A review's evidence: the task's captures and their pictures. */
  evidence: Pick<typeof EvidencePack, "forReview" | "forFinalReview">
  /** A worker's session: its agent, worktree and prompt. */
  worker: typeof WorkerSession.spec
  /** What a session after a context overflow carries: the diff (through the git given) and the guard log's steps. */
  overflow: Pick<typeof OverflowCarry, "gather" | "carried">
}

export type InterpreterPorts = Ports & {
  /** What a session is told. */
  context: ContextPort
  /** How the run's end is told, read from its files (the final check's record, the request log, the budget). */
  report: { endText: typeof RunReport.endText }
  /** One deploy of a target, its outcome one event (deploy/step.ts: ssh, the target's files, its smoke check). */
  deploy: { step: typeof DeployStep.run }
}

/** The run's ports with the interpreter's own, the real ones. */
export function interpreterPorts(ports: Ports): InterpreterPorts {
  return {
    ...ports,
    context: { pack: ContextPack, evidence: EvidencePack, worker: WorkerSession.spec, overflow: OverflowCarry },
    report: { endText: RunReport.endText },
    deploy: { step: DeployStep.run },
  }
}
