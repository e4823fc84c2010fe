import path from "node:path"
import { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { MergeBuild } from "../../src/scheduler/runtime/integration/merge-build.ts"
import { MergeQueue } from "../../src/scheduler/runtime/integration/merge.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import type { CppRepo, Workspace } from "./cpp-repo.ts"

export interface TaskBranchOptions {
  /** The branch tasks start from and merge into; default `main`. */
  integration?: string
  /** Commit what `work` left (message: the task id), for tests whose work is only writing files. */
  commit?: boolean
  /** Record the branch's tip as the tree its gates passed on, as the runtime does when they pass (merge-build.ts). */
  gated?: boolean
}

/**
 * The executor's side of a runtime test, in a repository made in `beforeAll` (hence the getter): a task
 * branch from the integration tip with `work` done in its worktree, and the Scheduler's merge of it.
 * The one helper for this: tests of gates, merges and faults all start a task the same way.
 */
export function taskBranches(repo: () => CppRepo, options: TaskBranchOptions = {}) {
  const integration = options.integration ?? "main"
  return {
    tip: async (ref = integration) => (await repo().git(["rev-parse", ref])).trim(),
    async task(taskId: string, work: (ws: Workspace) => Promise<void>) {
      const wt = await Worktrees.create(repo().root, taskId, integration)
      const ws = repo().at(wt.path)
      await work(ws)
      if (options.commit) await ws.commitAll(taskId)
      if (options.gated) await MergeBuild.recordGated(repo().root, taskId)
      return { wt, ws }
    },
    merge: (taskId: string, title = `task ${taskId}`) =>
      MergeQueue.merge({ root: repo().root, taskId, integration, title, message: `work of ${taskId}` }),
  }
}

/**
 * The gates' first run on a task's worktree in a test repository (a code task, attempt 1, based on `main`,
 * evidence under `.air/local/evidence/<task>/attempt-1`): what differs from test to test is `input`.
 */
export function firstGates(root: string, taskId: string, worktree: string, input: Pick<Gates.RunInput, "requires"> & Partial<Gates.RunInput>) {
  return Gates.run({
    root,
    worktree,
    taskId,
    base: "main",
    kind: "code",
    attempt: 1,
    evidenceDir: path.join(root, ".air", "local", "evidence", taskId, "attempt-1"),
    ...input,
  })
}
