/**
 * The merge queue: one merge at a time per project, each a rebase of the task branch onto the integration
 * tip, then a squash commit on the integration branch and a tag `air/done/<task-id>`.
 *
 * - Serialised twice: an in-process promise chain per project root, and a lock file
 *   (`.air/local/state/merge.lock`) that also keeps other processes out.
 * - Idempotent: a task whose tag exists is `already-merged`; a squash commit that reached the integration
 *   branch before a crash (found by its `Air-Task:` trailer) is recognised, tagged, and not made twice.
 * - Work is never lost: a conflict aborts the rebase and leaves the branch and worktree as they were; the
 *   branch is removed only by `Worktrees.remove`, after `merged`.
 * - The user's checkout of the integration branch is updated in place (index and files, like a fast-forward),
 *   and a merge that would overwrite their uncommitted changes is refused before anything moves.
 * - What lands is what was built: given `verify`, a candidate whose tree the task's gates did not build (the
 *   branch was rebased onto a newer head) is built and tested first (merge-build.ts); a failure is `rejected`
 *   and nothing moves.
 */
export * as MergeQueue from "./merge-queue.ts"
