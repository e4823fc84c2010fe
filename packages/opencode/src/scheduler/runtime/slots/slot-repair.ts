import { existsSync } from "node:fs"
import { rm } from "node:fs/promises"
import path from "node:path"
import { git, gitTry } from "../git/git.ts"

/**
 * Frees a build slot's checkout that a git command left stuck (issue 38 item 7): a process killed mid-command
 * leaves `index.lock`, and a rebase, merge or cherry-pick started by hand in the slot leaves its state behind.
 * Every later checkout would then fail ("index.lock: File exists") or build on a half-applied tree. The slot is
 * only the gates' cache and no git command of ours runs in it outside `BuildSlot.take` (which holds it), so a
 * lock there is stale by construction.
 */
export namespace SlotRepair {
  const OPERATIONS = ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "BISECT_LOG"] as const

  /** What was done, for the gate's log; nothing when the checkout was not stuck. */
  export async function unstick(slot: string): Promise<string[]> {
    const gitDir = (await git(slot, ["rev-parse", "--absolute-git-dir"])).trim()
    const notes: string[] = []
    const lock = path.join(gitDir, "index.lock")
    if (existsSync(lock)) {
      await rm(lock, { force: true })
      notes.push("a stale index.lock in the slot's checkout removed")
    }
    if (existsSync(path.join(gitDir, "rebase-merge")) || existsSync(path.join(gitDir, "rebase-apply"))) {
      // --quit forgets the rebase without moving HEAD or the files; the checkout that follows sets both.
      const quit = await gitTry(slot, ["rebase", "--quit"])
      if (quit.code !== 0) {
        await rm(path.join(gitDir, "rebase-merge"), { recursive: true, force: true })
        await rm(path.join(gitDir, "rebase-apply"), { recursive: true, force: true })
      }
      notes.push("a half-finished rebase in the slot's checkout abandoned")
    }
    const pending = OPERATIONS.filter((name) => existsSync(path.join(gitDir, name)))
    if (pending.length > 0) {
      // A reset clears a merge's, cherry-pick's or revert's state (and its conflicted index); bisect has its own.
      if (pending.includes("BISECT_LOG")) await gitTry(slot, ["bisect", "reset", "--quiet"])
      await gitTry(slot, ["reset", "--hard", "--quiet"])
      notes.push(`an unfinished ${pending.map((name) => name.replace(/_(HEAD|LOG)$/, "").toLowerCase().replace("_", "-")).join(", ")} in the slot's checkout abandoned`)
    }
    return notes
  }
}
