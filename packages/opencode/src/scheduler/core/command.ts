import type { Consultant, ConsultOption, WorkerRole } from "./vocabulary"

/**
 * What the machine asks the runtime to do. Every command carries an id that is stable across replays,
 * so a command re-issued after a crash is recognised and not carried out twice.
 */
export type Command =
  | { type: "dispatch"; id: string; taskId: string; role: WorkerRole; attempt: number; reason: string }
  | { type: "abort"; id: string; taskId: string; sessionId: string }
  | { type: "runGates"; id: string; taskId: string }
  | { type: "review"; id: string; taskId: string; run: number }
  /**
   * One batch: the tasks land together, in this order, after their combined tree is built and tested. `round`:
   * which landing of the task this is (1 unless a plan delta reverted an earlier one).
   */
  | { type: "merge"; id: string; tasks: { taskId: string; round: number }[] }
  /** `round`: the landing to undo. */
  | { type: "revert"; id: string; taskId: string; round: number }
  | { type: "consult"; id: string; taskId: string; agent: Consultant; options: ConsultOption[]; question: string }
  | { type: "ask"; id: string; questionId: string; text: string }
  | { type: "notify"; id: string; text: string }
  /** `final`: the last phase, reviewed against the whole requirement and the ADRs before the run is done. */
  | { type: "reviewMilestone"; id: string; phase: number; final: boolean }
  /** An accepted ADR's file no longer matches its recorded hash: the Architect says whether the decision changed. */
  | { type: "classifyAdr"; id: string; adr: string; hash: string; tasks: string[] }
  | { type: "replan"; id: string; text: string }
  /** Start the Architect's planning session for the run's requirement. */
  | { type: "plan"; id: string; requirement: string; autoConfirm: boolean }
  | { type: "finish"; id: string; status: "done" | "blocked" }
  /** Build and test the integration head (or `commit`) in a baseline worktree; answered by baseline.done. */
  | { type: "runBaseline"; id: string; commit?: string }
  /** Deploy the merged build to one target (the `n`th deploy of it in this run); answered by deploy.passed or deploy.failed. */
  | { type: "deploy"; id: string; target: string; n: number; phase?: number }

export type CommandType = Command["type"]

export { CONSULT_OPTIONS, CONSULTANTS, type ConsultOption, type Consultant } from "./vocabulary"

/** Command ids: built from counters in the state, so replaying the same events yields the same ids. */
export const commandId = {
  dispatch: (taskId: string, role: WorkerRole, attempt: number) => `dispatch:${taskId}:${role}:${attempt}`,
  abort: (taskId: string, sessionId: string) => `abort:${taskId}:${sessionId}`,
  runGates: (taskId: string, run: number) => `gates:${taskId}:${run}`,
  review: (taskId: string, run: number) => `review:${taskId}:${run}`,
  merge: (taskId: string, run: number) => `merge:${taskId}:${run}`,
  revert: (taskId: string, eventCount: number) => `revert:${taskId}:${eventCount}`,
  consult: (taskId: string, n: number) => `consult:${taskId}:${n}`,
  ask: (questionId: string) => `ask:${questionId}`,
  notify: (eventCount: number, n: number) => `notify:${eventCount}:${n}`,
  reviewMilestone: (phase: number, eventCount: number) => `milestone:${phase}:${eventCount}`,
  replan: (eventCount: number) => `replan:${eventCount}`,
  classifyAdr: (adr: string, eventCount: number) => `adr:${adr}:${eventCount}`,
  plan: (runId: string) => `plan:${runId}`,
  finish: (status: string, eventCount: number) => `finish:${status}:${eventCount}`,
  deploy: (target: string, n: number) => `deploy:${target}:${n}`,
}
