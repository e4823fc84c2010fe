import { simpleGit, type SimpleGit } from "simple-git"

/**
 * One way to run git for the Scheduler: simple-git, with two of its defaults corrected.
 *
 * - simple-git resolves a command that exits non-zero with an empty stderr as a success
 *   (`merge-base --is-ancestor`, `rev-parse --verify -q`, `diff --quiet`): here every non-zero exit
 *   is a `GitCommandError` carrying the exit code, so a caller can tell "no" from "yes".
 * - simple-git strips every ambient `GIT_*` variable from the child's environment. The identity
 *   variables are let through, so a user (or a test) can set who commits.
 */
const IDENTITY_ENV = [
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_AUTHOR_DATE",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_COMMITTER_DATE",
] as const

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

export interface GitResult {
  code: number
  stdout: string
  stderr: string
}

export interface GitOptions {
  /** `-c key=value` pairs put before the command, e.g. a fallback identity. */
  config?: string[]
}

/** A simple-git instance for `dir`; `failure` receives the exit code and output of a failed command. */
export function gitAt(dir: string, options: GitOptions = {}, failure?: (result: GitResult) => void): SimpleGit {
  return simpleGit({
    baseDir: dir,
    trimmed: false,
    allowEnvironment: [...IDENTITY_ENV],
    config: options.config ?? [],
    errors(error, result) {
      if (result.exitCode === 0 && !error) return undefined
      const stdout = Buffer.concat(result.stdOut).toString("utf8")
      const stderr = Buffer.concat(result.stdErr).toString("utf8")
      failure?.({ code: result.exitCode === 0 ? -1 : result.exitCode, stdout, stderr })
      return error ?? new Error(`git exited with ${result.exitCode}: ${stderr || stdout}`)
    },
  })
}

/** Runs git in `dir` and returns the exit code instead of throwing on a non-zero exit. */
export async function gitTry(dir: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  let failed: GitResult | undefined
  try {
    const stdout = await gitAt(dir, options, (result) => (failed = result)).raw(args)
    return { code: 0, stdout, stderr: "" }
  } catch (error) {
    if (failed) return failed
    throw error
  }
}

/** Runs git in `dir`; resolves with stdout, rejects with `GitCommandError` on any non-zero exit. */
export async function git(dir: string, args: string[], options: GitOptions = {}): Promise<string> {
  const result = await gitTry(dir, args, options)
  if (result.code !== 0) throw new GitCommandError(args, result.code, result.stdout, result.stderr)
  return result.stdout
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
