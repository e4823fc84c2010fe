import { git, GitCommandError, revParse } from "../git/git.ts"
import { IndexLocked, MergeError } from "./merge-errors.ts"

/** The merge queue's small git helpers: files between two commits, a ref that must exist, names and messages, git failures tagged. */

export async function namesBetween(top: string, from: string, to: string): Promise<string[]> {
  const out = await git(top, ["diff", "--name-only", "--no-renames", "-z", from, to])
  return out.split("\0").filter((file) => file.length > 0)
}

export async function requireRef(top: string, ref: string, taskId: string, problem: string): Promise<string> {
  const sha = await revParse(top, `${ref}^{commit}`)
  if (!sha) throw new MergeError(taskId, problem)
  return sha
}

export function assertBranchName(name: string, taskId: string): void {
  if (!/^[A-Za-z0-9._/-]+$/.test(name) || name.startsWith("-") || name.includes("..")) {
    throw new MergeError(taskId, `${JSON.stringify(name)} is not a usable integration branch name`)
  }
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim()
}

/** What went wrong in git, tagged: an index.lock left in a checkout is a person's to clear, the rest is GitFailed. */
export async function classified<T>(taskId: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof MergeError) throw error
    if (error instanceof GitCommandError) {
      const locked = indexLockOf(error.stderr)
      if (locked) throw new IndexLocked(taskId, locked, error)
      throw new MergeError(taskId, `git failed while merging: ${error.message}`, "GitFailed", error)
    }
    throw error
  }
}

/** The index.lock path git names when another git process (or a crashed one) holds a checkout's index. */
export function indexLockOf(text: string): string | undefined {
  return /Unable to create '([^']*index\.lock)': File exists/.exec(text)?.[1]
}
