import { Proc } from "../process.ts"

/**
 * One way to run git for the Scheduler: the git binary, spawned directly.
 *
 * It was simple-git, which waits 50 ms after every command that prints nothing (`rev-parse --verify -q`
 * of a missing tag, `merge-base --is-ancestor`, `update-ref`, `read-tree`, `tag`, a clean `status`): about
 * half of every merge's 0.8 s, measured, on the critical path of every run. What it gave us is kept here:
 *
 * - every non-zero exit is reported with its code (`GitCommandError` from `git`), so a caller can tell
 *   "no" from "yes" (`merge-base --is-ancestor`, `diff --quiet`);
 * - no ambient `GIT_*` variable reaches git (a hook's GIT_DIR or GIT_INDEX_FILE would point every command
 *   at another repository), except the identity variables, so a user (or a test) can set who commits.
 */
export const IDENTITY_ENV: ReadonlySet<string> = new Set([
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_AUTHOR_DATE",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_COMMITTER_DATE",
])

function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("GIT_") || IDENTITY_ENV.has(key)) env[key] = value
  // Never stop to ask: no pager, no editor, no credential prompt.
  return { ...env, GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", GIT_EDITOR: "true" }
}

export class GitCommandError extends Error {
  readonly _tag = "GitCommandError"
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    const detail = (stderr.trim() || stdout.trim() || "no output").split("\n").slice(0, 12).join("\n")
    super(`git ${args.join(" ")} exited with ${exitCode}: ${detail}`)
    this.name = "GitCommandError"
  }
}

interface GitResult {
  code: number
  stdout: string
  stderr: string
}

interface GitOptions {
  /** `-c key=value` pairs put before the command, e.g. a fallback identity. */
  config?: string[]
  /** Stop git (and anything it started) after this long; a stopped git is a non-zero exit. */
  timeoutMs?: number
  signal?: AbortSignal
}

/**
 * `git worktree add` creates a worktree's admin files empty and fills them a moment later. Meanwhile every git
 * that opens all worktrees' refs (`worktree list`, `branch`, `branch -D`, a checkout of a branch) dies at start,
 * before it changes anything: "fatal: failed to read .git/worktrees/T-4/commondir: Success". Dispatches add
 * worktrees while merges run, so the Scheduler met it (a merge blocked at concurrency 1, in the bench); the
 * same command a moment later succeeds.
 */
const HALF_ADDED_WORKTREE = /^fatal: failed to read .*\/worktrees\/[^/\n]+\/(commondir|gitdir): /m
const HALF_ADDED_RETRIES_MS = [10, 30, 100, 300, 1000]

/** Runs git in `dir` and returns the exit code instead of throwing on a non-zero exit. */
export async function gitTry(dir: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  let result = await gitOnce(dir, args, options)
  for (const ms of HALF_ADDED_RETRIES_MS) {
    if (result.code !== 128 || !HALF_ADDED_WORKTREE.test(result.stderr) || options.signal?.aborted) break
    await new Promise((resolve) => setTimeout(resolve, ms))
    result = await gitOnce(dir, args, options)
  }
  return result
}

async function gitOnce(dir: string, args: string[], options: GitOptions): Promise<GitResult> {
  const argv = [...(options.config ?? []).flatMap((pair) => ["-c", pair]), ...args]
  // Through the one process runner: own process group, nothing kept alive past git's exit; all output kept.
  const result = await Proc.run("git", argv, {
    cwd: dir,
    env: gitEnv(),
    outputCap: Infinity,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  })
  if (result.spawnError) throw new Error(`git ${args.join(" ")} could not run in ${dir}: ${result.spawnError}`)
  const stopped = result.timedOut ? `\n(stopped after ${options.timeoutMs} ms)` : result.aborted ? "\n(stopped: aborted)" : ""
  return {
    code: result.code ?? (result.signal ? 128 : -1),
    stdout: result.stdout,
    stderr: result.stderr + (result.signal ? `\n(killed by ${result.signal})` : "") + stopped,
  }
}

/** Runs git in `dir`; resolves with stdout, rejects with `GitCommandError` on any non-zero exit. */
export async function git(dir: string, args: string[], options: GitOptions = {}): Promise<string> {
  const result = await gitTry(dir, args, options)
  if (result.code !== 0) throw new GitCommandError(args, result.code, result.stdout, result.stderr)
  return result.stdout
}

/** The object `rev` names in the repository at `dir` (`refs/tags/x^{commit}`, `HEAD`), or undefined when it names none. */
export async function revParse(dir: string, rev: string): Promise<string | undefined> {
  const result = await gitTry(dir, ["rev-parse", "--verify", "--quiet", rev])
  return result.code === 0 ? result.stdout.trim() : undefined
}

/** True when git exits 0: for questions like `merge-base --is-ancestor a b`. */
export async function gitYes(dir: string, args: string[]): Promise<boolean> {
  const result = await gitTry(dir, args)
  if (result.code === 0) return true
  if (result.code === 1) return false
  throw new GitCommandError(args, result.code, result.stdout, result.stderr)
}

/**
 * `-c` options giving git an identity when the user has none (a fresh machine, a CI runner, a test
 * HOME): commits the Scheduler makes (rebase, squash, revert, tags) must not fail for that reason.
 * An identity the user configured or exported always wins.
 */
export async function identityConfig(dir: string): Promise<string[]> {
  const config: string[] = []
  // Author and committer come from the same settings unless GIT_AUTHOR_*/GIT_COMMITTER_* split them.
  const committer = await gitTry(dir, ["var", "GIT_COMMITTER_IDENT"])
  if (committer.code !== 0 || (await gitTry(dir, ["var", "GIT_AUTHOR_IDENT"])).code !== 0) {
    const name = await gitTry(dir, ["config", "user.name"])
    const email = await gitTry(dir, ["config", "user.email"])
    if (name.code !== 0 || name.stdout.trim() === "") config.push("user.name=AirCoding")
    if (email.code !== 0 || email.stdout.trim() === "") config.push("user.email=aircoding@localhost")
  }
  return config
}
