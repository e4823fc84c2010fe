import { Worktrees } from "../git/worktree.ts"
import { batchLocked } from "./merge-batch.ts"
import { MergeError } from "./merge-errors.ts"
import { assertBranchName, classified } from "./merge-git.ts"
import { queued, withLockFile } from "./merge-lock.ts"
import type { BatchInput, BatchResult, MergeInput, MergeResult, RevertInput, RevertResult } from "./merge-types.ts"
import { revertLocked } from "./revert.ts"

/** The merge queue's entry points: one merge, a batch, a revert, each serialised in the process and under the merge lock. */

export * from "./merge-types.ts"
export * from "./merge-errors.ts"

export async function merge(input: MergeInput): Promise<MergeResult> {
  const { outcomes } = await mergeBatch({ ...input, tasks: [input] })
  const outcome = outcomes[0]!
  switch (outcome.status) {
    case "merged":
      return { status: "merged", commit: outcome.commit, tag: outcome.tag, rebased: outcome.rebased, built: outcome.built }
    case "already-merged":
    case "conflict":
    case "rejected":
      const { taskId: _, ...rest } = outcome
      return rest
    case "blocked":
      throw outcome.error
    case "deferred":
      throw new MergeError(input.taskId, "deferred with nothing before it in its batch (a bug)")
  }
}

/**
 * Merges a batch: each task's change is put on the head in turn, the whole is built and tested once, and
 * only then does the integration branch move, to a commit holding them all. A batch that fails lands
 * nothing and blames no task (`rejected`; the Scheduler splits it). A MergeError thrown here concerns the
 * whole batch (the lock, the integration branch, the user's checkout): nothing moved.
 */
export async function mergeBatch(input: BatchInput): Promise<BatchResult> {
  const lead = input.tasks[0]?.taskId ?? "(none)"
  for (const task of input.tasks) Worktrees.assertTaskId(task.taskId)
  assertBranchName(input.integration, lead)
  if (input.tasks.length === 0) return { outcomes: [] }
  const ids = input.tasks.map((task) => task.taskId).join(", ")
  return queued(input.root, async () => {
    const top = await Worktrees.repoRoot(input.root)
    await Worktrees.ensureExcluded(top)
    return withLockFile(top, lead, `merge of ${ids}`, input.lockTimeoutMs, () => classified(lead, () => batchLocked(top, input)))
  })
}

export async function revert(input: RevertInput): Promise<RevertResult> {
  Worktrees.assertTaskId(input.taskId)
  assertBranchName(input.integration, input.taskId)
  return queued(input.root, async () => {
    const top = await Worktrees.repoRoot(input.root)
    return withLockFile(top, input.taskId, `revert of ${input.taskId}`, input.lockTimeoutMs, () =>
      classified(input.taskId, () => revertLocked(top, input)),
    )
  })
}
