import { MergeQueue } from "../../src/runtime/merge.ts"
import { Worktrees } from "../../src/runtime/worktree.ts"
import type { CppRepo, Workspace } from "./cpp-repo.ts"

/**
 * The executor's side of a runtime test, in a repository made in `beforeAll` (hence the getter): a task
 * branch from the integration tip with `work` done in its worktree, and the Scheduler's merge of it.
 */
export function taskBranches(repo: () => CppRepo, integration = "main") {
  return {
    tip: async (ref = integration) => (await repo().git(["rev-parse", ref])).trim(),
    async task(taskId: string, work: (ws: Workspace) => Promise<void>) {
      const wt = await Worktrees.create(repo().root, taskId, integration)
      const ws = repo().at(wt.path)
      await work(ws)
      return { wt, ws }
    },
    merge: (taskId: string, title = `task ${taskId}`) =>
      MergeQueue.merge({ root: repo().root, taskId, integration, title, message: `work of ${taskId}` }),
  }
}
