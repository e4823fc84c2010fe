import { Submodules } from "./git/submodules.ts"
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs"
import { Worktrees } from "./git/worktree"
import { hostname } from "node:os"
import { join, relative } from "node:path"
import { git, gitTry, identityConfig } from "./git/git"
import { Settings } from "./settings"
import { readLockFile } from "./store/run-holder"
import { ProcessIdentity } from "./store/process-identity"
import { Toolchain } from "./toolchain/index"
import { HouseRules } from "./house/rules"
import { AirPaths } from "../core/air-paths"

/**
 * What must hold before a run starts, checked before anything is dispatched (issue 12 item 5, issue 15
 * item 6): the project is a git repository with a commit, on a branch, its
 * AirCoding files readable, no live process holding its locks. Each problem comes with the exact fix.
 * A missing git identity is not a problem: commits then use AirCoding's own, as the Scheduler's merges do.
 */
export namespace Preflight {
  export type Code = "config" | "toolchain" | "not-a-repo" | "no-commit" | "detached-head" | "lock-held" | "run-open"

  export interface Problem {
    code: Code
    /** One line: what is wrong, naming the file (and key) when there is one. */
    message: string
    /** The exact command or edit that fixes it. */
    fix: string
  }

  export interface Report {
    ok: boolean
    problems: Problem[]
    /** Worth saying, not worth stopping for (no git identity: AirCoding's is used). */
    notes: string[]
  }

  /** The commands that give a directory a repository and a first commit to build on (design 002 §3.2.13). */
  export const INIT_FIX = "git init && git add -A && git commit -m baseline && git tag air/baseline"
  export const INIT_FLAG_FIX = "or run `aircoding run --init-git`, which does exactly that"
  /** Where AirCoding writes in the project; never counted as the user's uncommitted work. */
  const OWN_PATHS = [`${AirPaths.AIR}/`]
  /** At most this many dirty files are named; the rest are counted. */
  const MAX_LISTED = 10

  /** The identity AirCoding commits with when the user has none. */
  export const FALLBACK_NAME = "AirCoding"
  export const FALLBACK_EMAIL = "aircoding@localhost"

  /** Every check, in order; git checks stop at the first that makes the rest meaningless. */
  export async function check(dir: string, env: NodeJS.ProcessEnv = process.env, lockWaitMs?: number): Promise<Report> {
    const problems: Problem[] = [...files(dir, env), ...(await repository(dir)), ...(await locks(dir, lockWaitMs))]
    const notes: string[] = []
    const who = await identity(dir)
    if (!who.configured)
      notes.push(
        `no git identity: commits in this run are made as ${FALLBACK_NAME} <${FALLBACK_EMAIL}>; to use yours: git config --global user.name "Your Name" && git config --global user.email you@example.com`,
      )
    notes.push(...(await submoduleNotes(dir)))
    notes.push(...houseWarnings(dir))
    notes.push(...(await dirtyNotes(dir)))
    return { ok: problems.length === 0, problems, notes }
  }

  /** Submodules the user never initialised: said once, before anything is dispatched, with the fix. */
  export async function submoduleNotes(dir: string): Promise<string[]> {
    const missing = await Submodules.problems(dir).catch(() => [])
    return missing.map((m) => `${m.problem}; fix: ${m.fix}`)
  }

  /** AirCoding's own files: config.json and toolchain.json must parse, or nothing starts. */
  export function files(dir: string, env: NodeJS.ProcessEnv = process.env): Problem[] {
    const problems: Problem[] = []
    try {
      Settings.load(dir, env)
    } catch (err) {
      problems.push({ code: "config", message: shortPaths(dir, (err as Error).message), fix: `fix ${rel(dir, Settings.path(dir))}, or delete it to use the defaults` })
    }
    const rules = join(dir, Toolchain.RULES_PATH)
    if (existsSync(rules)) {
      try {
        Toolchain.parseBytes(readFileSync(rules), Toolchain.RULES_PATH)
      } catch (err) {
        problems.push({ code: "toolchain", message: (err as Error).message.replace(/\. Fix the file.*$/, ""), fix: `fix ${Toolchain.RULES_PATH} (schemaVersion 1: build[], test[], analysis.cppcheck, timeoutMs), or delete it to use detection` })
      }
    }
    try {
      HouseRules.load(dir)
    } catch (err) {
      if (!(err instanceof HouseRules.Invalid)) throw err
      problems.push({ code: "config", message: shortPaths(dir, err.message.replace(/\. Fix the file.*$/, "")), fix: `fix ${HouseRules.RULES_PATH} (see "House rules" in the README), or delete it (no house rules)` })
    }
    return problems
  }

  /** House rules that are valid but probably not meant (an exemption matching every path): said before the work. */
  function houseWarnings(dir: string): string[] {
    try {
      return HouseRules.load(dir)?.warnings.map((w) => `${HouseRules.RULES_PATH}: ${w}`) ?? []
    } catch {
      return [] // an invalid file is a problem of files(), said there
    }
  }

  /**
   * The user's uncommitted changes to tracked files are theirs, and no reason to refuse a run: the merge queue
   * holds back only a task whose files meet them (its question names the file). Said once, before the work.
   */
  export async function dirtyNotes(dir: string): Promise<string[]> {
    const dirty = await dirtyTracked(dir).catch(() => [])
    if (dirty.length === 0) return []
    const listed = dirty.slice(0, MAX_LISTED).join(", ") + (dirty.length > MAX_LISTED ? ` and ${dirty.length - MAX_LISTED} more` : "")
    return [`${dirty.length} tracked file(s) have uncommitted changes: ${listed}; they stay as they are, and a task that must change one of them waits to merge until you commit or stash it`]
  }

  /** A repository, with a commit, on a branch. (Uncommitted changes are the user's: see `dirtyNotes`.) */
  export async function repository(dir: string): Promise<Problem[]> {
    const inside = await gitTry(dir, ["rev-parse", "--is-inside-work-tree"])
    if (inside.code !== 0 || inside.stdout.trim() !== "true")
      return [{ code: "not-a-repo", message: `${dir} is not a git repository: AirCoding works on branches and merges commits`, fix: `${INIT_FIX} (${INIT_FLAG_FIX})` }]
    const head = await gitTry(dir, ["rev-parse", "--verify", "-q", "HEAD"])
    if (head.code !== 0)
      return [{ code: "no-commit", message: `the repository in ${dir} has no commit yet: tasks branch from a commit`, fix: `git add -A && git commit -m baseline && git tag air/baseline (${INIT_FLAG_FIX})` }]
    const problems: Problem[] = []
    const branch = await gitTry(dir, ["symbolic-ref", "-q", "--short", "HEAD"])
    if (branch.code !== 0) {
      const at = (await gitTry(dir, ["rev-parse", "--short", "HEAD"])).stdout.trim()
      problems.push({
        code: "detached-head",
        message: `HEAD is detached (at ${at}): the run needs a branch to merge its work into`,
        fix: "git switch <your-branch>, or make one here: git switch -c aircoding",
      })
    }
    return problems
  }

  /** Tracked files changed in the worktree or the index, AirCoding's own files left out; paths from the top. */
  export async function dirtyTracked(dir: string): Promise<string[]> {
    const out = await git(dir, ["status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=dirty"])
    const paths: string[] = []
    const fields = out.split("\0")
    for (let i = 0; i < fields.length; i++) {
      const entry = fields[i]!
      if (entry.length < 4) continue
      const status = entry.slice(0, 2)
      const path = entry.slice(3)
      // A rename or copy is followed by its source path in the next field.
      if (status[0] === "R" || status[0] === "C") i++
      if (OWN_PATHS.some((own) => path.startsWith(own) || path.includes(`/${own}`))) continue
      paths.push(path)
    }
    return paths
  }

  /** Whether git has an author and committer it can use (configured or exported); else AirCoding's is used. */
  export async function identity(dir: string): Promise<{ configured: boolean }> {
    return { configured: (await identityConfig(dir)).length === 0 }
  }

  /** For `aircoding doctor`: who commits here. No identity is not a failure (AirCoding's is used), but it is said. */
  export async function identityCheck(dir: string): Promise<{ name: string; ok: boolean; detail: string }> {
    if ((await identityConfig(dir)).length > 0)
      return {
        name: "git identity",
        ok: true,
        detail: `none configured: commits are made as ${FALLBACK_NAME} <${FALLBACK_EMAIL}>; to use yours: git config --global user.name "Your Name" && git config --global user.email you@example.com`,
      }
    const ident = (await gitTry(dir, ["var", "GIT_COMMITTER_IDENT"])).stdout.trim().replace(/\s+\d+\s+[-+]\d{4}$/, "")
    return { name: "git identity", ok: true, detail: ident || "configured" }
  }

  /**
   * Environment for the engine so that workers' own `git commit`s work on a machine with no identity:
   * AirCoding's identity, only for what the user has not set (their configured name or email wins).
   */
  export async function identityEnv(dir: string): Promise<Record<string, string>> {
    const config = await identityConfig(dir)
    const env: Record<string, string> = {}
    for (const pair of config) {
      if (pair.startsWith("user.name=")) env.GIT_AUTHOR_NAME = env.GIT_COMMITTER_NAME = FALLBACK_NAME
      if (pair.startsWith("user.email=")) env.GIT_AUTHOR_EMAIL = env.GIT_COMMITTER_EMAIL = FALLBACK_EMAIL
    }
    return env
  }

  /** How long a live holder is given to let go: a run killed a moment ago may still be exiting (as the store waits). */
  export const LOCK_WAIT_MS = 5_000

  /** Locks of a run held by another live process on this host: the run would wait on them, then fail. */
  export async function locks(dir: string, waitMs = LOCK_WAIT_MS): Promise<Problem[]> {
    const problems: Problem[] = []
    const live = (file: string) => {
      const holder = holderOf(join(dir, file))
      // That very process, judged by its start time too: a killed engine's pid handed to another process holds nothing.
      return holder && holder.pid !== process.pid && holder.host === hostname() && ProcessIdentity.judge(holder) === "alive" ? holder : undefined
    }
    const deadline = Date.now() + waitMs
    for (const file of [AirPaths.RUN_LOCK, AirPaths.MERGE_LOCK]) {
      let holder = live(file)
      while (holder && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        holder = live(file)
      }
      if (!holder) continue
      problems.push({
        code: "lock-held",
        message: `${file} is held by process ${holder.pid}${holder.since ? ` since ${holder.since}` : ""}: another AirCoding run is working in this project`,
        fix: `wait for it to end (aircoding status shows it), or stop it: kill ${holder.pid}`,
      })
    }
    return problems
  }

  function holderOf(file: string): { pid: number; host: string; started?: number; since?: string } | undefined {
    const info = readLockFile(file)
    if (!info) return undefined
    return { pid: info.pid, host: info.host, ...(info.started !== undefined ? { started: info.started } : {}), ...(info.at !== "?" ? { since: info.at } : {}) }
  }

  /**
   * `--init-git`: a repository with everything in the directory as its first commit, tagged air/baseline.
   * Only for a directory that is not a repository yet, or one without a commit.
   */
  export async function initGit(dir: string): Promise<string> {
    const inside = await gitTry(dir, ["rev-parse", "--is-inside-work-tree"])
    if (inside.code !== 0) await git(dir, ["init", "-q"])
    else if ((await gitTry(dir, ["rev-parse", "--verify", "-q", "HEAD"])).code === 0) return "already a git repository with commits; nothing done"
    const config = await identityConfig(dir)
    await git(dir, ["add", "-A"])
    await git(dir, ["commit", "-q", "--allow-empty", "-m", "baseline"], { config })
    await git(dir, ["tag", "air/baseline"], { config })
    return `made ${dir} a git repository: commit "baseline", tagged air/baseline`
  }

  /**
   * A new run where the last one waits for the user or was interrupted (issue 21 item 3): refused, so a new
   * requirement never silently continues — or buries — the old run. The fix names both ways on: answer it
   * (or just resume it), or archive it with --new and start again. `what` is what it waits for, in words.
   */
  export function openRun(dir: string, run: { runId: string; waits: boolean; confirm: boolean; what: string }, command = "aircoding"): Problem {
    const answer = run.confirm ? '--answer "yes" (or --answer "change: <what to change>")' : '--answer "<your answer>"'
    return {
      code: "run-open",
      message: run.waits
        ? `the run ${run.runId} in ${dir} waits for your answer: ${run.what}; a new requirement would not reach it`
        : `the run ${run.runId} in ${dir} was interrupted (${run.what}); a new requirement would not reach it`,
      fix: [
        run.waits ? `answer it: ${command} run ${dir} --resume ${answer}` : `go on with it: ${command} run ${dir} --resume`,
        `or archive it and start again: ${command} run ${dir} --new < requirement.txt (its log and evidence are kept under ${AirPaths.ARCHIVE}/${run.runId}/)`,
      ].join("\n  "),
    }
  }

  /**
   * `aircoding run --new`: the old run out of the way, nothing of it lost. Its log, snapshot and evidence
   * move to `.air/local/archive/<run-id>/`; its task worktrees are removed (their commits stay on their
   * branches) and its task branches are renamed `air/archive/<run-id>/<task-id>`, so the new run's tasks
   * start on fresh branches. Returns what was done, in one line.
   */
  export async function archiveRun(dir: string, runId: string, taskIds: readonly string[]): Promise<string> {
    const local = AirPaths.local(dir)
    const target = AirPaths.archive(dir, runId)
    mkdirSync(target, { recursive: true })
    for (const name of ["state", "evidence"]) if (existsSync(join(local, name))) renameSync(join(local, name), join(target, name))
    for (const tree of await Worktrees.list(dir)) await gitTry(dir, ["worktree", "remove", "--force", tree.path])
    await gitTry(dir, ["worktree", "prune"])
    for (const id of taskIds) await gitTry(dir, ["branch", "-m", `air/${id}`, `air/archive/${runId}/${id}`])
    return `archived the run ${runId} under ${rel(dir, target)}/ (its task branches as air/archive/${runId}/<task-id>)`
  }

  /** The problems as the CLI prints them: one line each, then its fix. */
  export function describe(problems: readonly Problem[]): string {
    return problems.map((p) => `${p.message}\n  fix: ${p.fix}`).join("\n")
  }

  /** The refusal the runtime's submit returns to Main, or undefined when the run may start. */
  export async function refusal(dir: string): Promise<string | undefined> {
    const problems = [...files(dir), ...(await repository(dir))]
    if (problems.length === 0) return undefined
    return `The run cannot start in ${dir}; nothing was dispatched. Tell the user:\n${describe(problems)}`
  }

  function rel(dir: string, file: string): string {
    const r = relative(dir, file)
    return r && !r.startsWith("..") ? r : file
  }

  function shortPaths(dir: string, text: string): string {
    return text.split(dir + "/").join("")
  }
}
