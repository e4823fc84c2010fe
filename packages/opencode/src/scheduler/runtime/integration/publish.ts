import { Worktrees } from "../git/worktree.ts"
import { git, gitTry, gitYes, revParse } from "../git/git.ts"
import { IndexLocked, LocalChangesInTheWay, MergeError } from "./merge-errors.ts"
import { indexLockOf } from "./merge-git.ts"

/** Moving the integration branch (compare-and-swap) and the user's checkout of it along, never over their uncommitted changes. */

/**
 * Moves `integration` from `base` to `commit` (compare-and-swap: false when it moved meanwhile) and brings
 * the checkout that has it (the user's working tree) along, as a fast-forward would. Refuses, before
 * moving anything, when that checkout has uncommitted changes to a file the new commit touches.
 */
export async function publish(
  top: string,
  integration: string,
  base: string,
  commit: string,
  touched: string[],
  taskId: string,
  reason: string,
): Promise<boolean> {
  const checkout = await Worktrees.checkoutOf(top, integration)
  if (checkout) {
    const dirty = new Set(await Worktrees.uncommittedFiles(checkout, { untracked: true }))
    const inTheWay = touched.filter((file) => dirty.has(file))
    if (inTheWay.length > 0) throw new LocalChangesInTheWay(taskId, checkout, inTheWay)
  }
  const swapped = await gitTry(top, ["update-ref", "-m", reason, `refs/heads/${integration}`, commit, base])
  if (swapped.code !== 0) {
    const now = await revParse(top, `refs/heads/${integration}`)
    if (now !== base) return false
    throw new MergeError(taskId, `could not move ${integration}: ${swapped.stderr.trim()}`)
  }
  if (checkout) {
    const updated = await gitTry(checkout, ["read-tree", "-m", "-u", base, commit])
    if (updated.code !== 0) {
      // Put the branch back: the user's files and index were not touched by the failed read-tree.
      await git(top, ["update-ref", "-m", `${reason} (rolled back)`, `refs/heads/${integration}`, base, commit])
      const detail = (updated.stderr || updated.stdout).trim()
      const locked = indexLockOf(detail)
      if (locked) throw new IndexLocked(taskId, locked)
      const files = [...detail.matchAll(/^\s+(\S.*)$/gm)].map((m) => m[1]!.trim())
      if (files.length > 0) throw new LocalChangesInTheWay(taskId, checkout, files)
      throw new MergeError(taskId, `could not update the checkout ${checkout}: ${detail}; nothing was merged`)
    }
  }
  return true
}

/**
 * After a crash between moving the branch and updating the user's checkout, the checkout's index still
 * holds the old tree: bring it to `commit` when (and only when) it is exactly at the parent.
 */
export async function finishCheckout(top: string, integration: string, commit: string, taskId: string): Promise<void> {
  const checkout = await Worktrees.checkoutOf(top, integration)
  if (!checkout) return
  const head = await revParse(checkout, "HEAD")
  if (head !== commit) return
  const parent = await revParse(top, `${commit}^1`)
  if (!parent) return
  const atParent = await gitYes(checkout, ["diff-index", "--cached", "--quiet", parent])
  const atCommit = await gitYes(checkout, ["diff-index", "--cached", "--quiet", commit])
  if (atParent && !atCommit) {
    const updated = await gitTry(checkout, ["read-tree", "-m", "-u", parent, commit])
    if (updated.code !== 0) {
      const locked = indexLockOf(updated.stderr)
      if (locked) throw new IndexLocked(taskId, locked)
      throw new MergeError(
        taskId,
        `${integration} holds the merge, but the checkout ${checkout} could not be brought up to date: ` +
          `${(updated.stderr || updated.stdout).trim()}`,
      )
    }
    await gitTry(checkout, ["update-index", "-q", "--refresh"])
  }
}
