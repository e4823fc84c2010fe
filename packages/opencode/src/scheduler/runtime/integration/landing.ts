import { git } from "../git/git.ts"
import { oneLine } from "./merge-git.ts"

/** How a landing is recorded and found again after a crash: the annotated tag, and the trailer in the commit message. */

export async function createTag(top: string, tag: string, commit: string, title: string, identity: string[]) {
  await git(top, ["tag", "-a", "-m", oneLine(title) || tag, tag, commit], { config: [...identity, "tag.gpgSign=false"] })
}

/**
 * The newest commit on `branch` (after `since`, when given) whose message has the line `<trailer>: <taskId>`:
 * a first-parent one, or a task's squash commit under a batch's merge commit.
 */
export async function findByTrailer(top: string, branch: string, trailer: string, name: string, since?: string) {
  // A basic regular expression: "+" is literal there ("\\+" would be GNU's one-or-more).
  const pattern = `^${trailer}: ${name.replace(/[.[\]*^$\\]/g, "\\$&")}$`
  const out = await git(top, [
    "log",
    "--format=%H",
    "--max-count=1",
    `--grep=${pattern}`,
    since ? `${since}..refs/heads/${branch}` : `refs/heads/${branch}`,
  ])
  return out.trim() || undefined
}
