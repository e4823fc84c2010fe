import type { MergeBuild } from "./merge-build.ts"
import type { MergeError } from "./merge-errors.ts"
import { AirPaths } from "../../core/air-paths"

/** What the merge queue is asked and what it answers: its inputs, outcomes and the names it writes (lock, trailers). */

export const LOCK_PATH = AirPaths.MERGE_LOCK
export const TASK_TRAILER = "Air-Task"
export const REVERT_TRAILER = "Air-Reverts"
export const BATCH_TRAILER = "Air-Batch"

export interface MergeInput {
  root: string
  taskId: string
  /** The integration branch (a branch name, not a sha). */
  integration: string
  /** The squash commit's subject and the tag's message. */
  title: string
  /** Which landing of the task this is: 1, or more when a plan delta reverted the earlier ones. */
  round?: number
  /** The squash commit's body. */
  message?: string
  /** How long to wait for another process's merge lock; default 2 minutes. */
  lockTimeoutMs?: number
  /** Builds and tests a candidate the gates did not build (merge-build.ts); absent: nothing is built. */
  verify?: MergeBuild.Verify
}

/** One task of a batch. */
export interface BatchTask {
  taskId: string
  title: string
  round?: number
  message?: string
}

export interface BatchInput {
  root: string
  integration: string
  /** In the order they land. */
  tasks: BatchTask[]
  lockTimeoutMs?: number
  verify?: MergeBuild.Verify
}

export type BatchOutcome = { taskId: string } & (
  | { status: "merged"; commit: string; tag: string; rebased: boolean; built: boolean; head?: string }
  | { status: "already-merged"; commit: string; tag: string }
  | { status: "conflict"; files: string[]; message: string }
  /** A batch of one that failed its merge build. */
  | { status: "rejected"; message: string; summary: string; evidencePath: string }
  /** Something only this task is to blame for stopped it; the rest of the batch went on. */
  | { status: "blocked"; error: MergeError }
  /** Its change conflicts with a task before it in the batch: it merges after them, alone. */
  | { status: "deferred" }
)

export interface BatchResult {
  outcomes: BatchOutcome[]
  /** The tasks built together failed: nothing of them landed, none is blamed yet. */
  rejected?: { taskIds: string[]; message: string; summary: string; evidencePath: string }
}

export type MergeResult =
  | {
      status: "merged"
      commit: string
      tag: string
      /** True when the branch was rebased first (its gates ran on a different base; the tree may differ). */
      rebased: boolean
      /** True when the candidate was built and tested before it landed (its tree was not the gated one). */
      built: boolean
    }
  | { status: "conflict"; files: string[]; message: string }
  /** The candidate (the task's change on the current head) failed its build or tests: nothing moved. */
  | { status: "rejected"; message: string; summary: string; evidencePath: string }
  | { status: "already-merged"; commit: string; tag: string }

export interface RevertInput {
  root: string
  taskId: string
  /** The landing to undo; 1 by default. */
  round?: number
  integration: string
  lockTimeoutMs?: number
}

export type RevertResult =
  | { status: "reverted"; commit: string; tag: string }
  | { status: "conflict"; files: string[]; message: string }
  | { status: "already-reverted"; commit: string; tag: string }
