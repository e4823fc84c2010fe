import { existsSync } from "node:fs"
import { mkdir, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { git, gitTry, revParse } from "../git/git.ts"
import { Toolchain } from "../toolchain/index.ts"
import { Sandbox } from "../sandbox/sandbox.ts"
import { SandboxExec } from "../sandbox/exec.ts"
import { BudgetExec } from "../jobs/exec.ts"
import { RunJobs } from "../jobs/run-jobs.ts"
import { Worktrees } from "../git/worktree.ts"
import { runCommands } from "../gates/command.ts"
import { firstError } from "../gates/build.ts"
import { testGate } from "../gates/test.ts"
import { processExec } from "../gates/pipeline.ts"
import type { Exec, GateContext, TestBaseline } from "../gates/gate.ts"
import { TOOL_MISSING } from "../gates/schema.ts"
import { indent, lastLines } from "../gates/text.ts"
import { Results } from "../results/index.ts"

/**
 * The merge build: what lands on the integration branch is what was built and tested. Before the merge
 * queue moves the integration ref, the candidate commit (the task's change on the current head) is checked
 * out in the merge worktree (`.air/local/worktrees/_merge`, never the user's checkout) and the toolchain's
 * build and test commands run there, through the gates' command runner and the OS sandbox. A failure is a
 * verdict on the combined change: the candidate never lands and the task goes back to repair.
 *
 * The build is skipped when the candidate's tree is the tree the task's gates already built: the gates
 * record the branch tip they passed on (`refs/air/gated/<task>`), and a task whose base is still the head
 * merges that very tree (the common case in serial runs, so nothing slows down). A merge redone after a
 * restart compares against that record too, so a rebase made before the crash is still built.
 */
export namespace MergeBuild {
  export const GATED_REF = "refs/air/gated"
  export const WORKTREE = "_merge"
  export const DIFF_FILE = "candidate.diff"
  export const BUILD_LOG = "build.log"
  export const TEST_LOG = "test.log"

  export interface Candidate {
    /** The repository's top directory. */
    top: string
    taskId: string
    /** A batch: every task in it, `taskId` first. */
    taskIds?: string[]
    integration: string
    /** The integration head the candidate sits on. */
    base: string
    /** The candidate commit: the squash commit that would become the integration head. */
    commit: string
  }

  export type Verdict = { passed: true; summary: string } | { passed: false; summary: string; message: string; evidencePath: string }

  /** Builds and tests a candidate; resolves with a verdict, rejects when it could not reach one. */
  export type Verify = (candidate: Candidate) => Promise<Verdict>

  export interface Options {
    /** Where the candidate's diff and logs go (`.air/local/evidence/<task>/merge-<n>/`). */
    evidenceDir: string
    /** Rules to use instead of toolchain.json / detection. */
    toolchain?: Toolchain.RulesInput
    env?: NodeJS.ProcessEnv
    /** As the gates: "on" (default unless the settings allow a fallback), "fallback", "off" (the caller's exec). */
    sandbox?: "on" | "fallback" | "off"
    exec?: Exec
    signal?: AbortSignal
    /** The run's baseline: tests failing there fail no merge. */
    baseline?: TestBaseline
  }

  export function gatedRef(taskId: string): string {
    Worktrees.assertTaskId(taskId)
    return `${GATED_REF}/${taskId}`
  }

  /** Records the task branch's tip as the tree its gates passed on (called when they pass). */
  export async function recordGated(root: string, taskId: string): Promise<void> {
    await git(root, ["update-ref", "-m", `air: gates passed for ${taskId}`, gatedRef(taskId), `refs/heads/${Worktrees.branchName(taskId)}^{commit}`])
  }

  /** Records a tip whose tree the merge build passed: as good as gated. */
  export async function recordBuilt(top: string, taskId: string, tip: string): Promise<void> {
    await git(top, ["update-ref", "-m", `air: merge build passed for ${taskId}`, gatedRef(taskId), tip])
  }

  /** The tree the task's gates last passed on, if recorded. */
  export async function gatedTree(top: string, taskId: string): Promise<string | undefined> {
    return revParse(top, `${gatedRef(taskId)}^{tree}`)
  }

  export async function forgetGated(top: string, taskId: string): Promise<void> {
    await gitTry(top, ["update-ref", "-d", gatedRef(taskId)])
  }

  export function worktreeOf(top: string): string {
    return path.join(Worktrees.worktreesDir(top), WORKTREE)
  }

  /** Removes the merge worktree: it is kept for incremental builds while a run merges, and goes when the run ends. */
  export async function dropWorktree(top: string): Promise<void> {
    await Worktrees.dropDetached(top, worktreeOf(top))
  }

  /** The real check: the toolchain's build then test commands in the merge worktree, sandboxed. */
  export function verifier(options: Options): Verify {
    return (candidate) => verify(candidate, options)
  }

  export const RESULT_FILE = "result.json"

  /** `check`, with its verdict and how long it took kept beside the logs (the dashboard and `bun run bench` read it). */
  export async function verify(candidate: Candidate, options: Options): Promise<Verdict> {
    const started = Date.now()
    const verdict = await check(candidate, options)
    const result = { candidate: candidate.commit, base: candidate.base, passed: verdict.passed, summary: verdict.summary, ms: Date.now() - started }
    await writeFile(path.join(path.resolve(options.evidenceDir), RESULT_FILE), JSON.stringify(result, null, 2) + "\n")
    return verdict
  }

  async function check(candidate: Candidate, options: Options): Promise<Verdict> {
    const { top, taskId, base, commit } = candidate
    const worktree = await checkout(top, commit, taskId)
    const resolved = options.toolchain
      ? { rules: Toolchain.Rules.parse(options.toolchain), note: "toolchain rules given by the caller" }
      : await Toolchain.load(top, worktree)
    const evidenceDir = path.resolve(options.evidenceDir)
    await mkdir(evidenceDir, { recursive: true })
    await Promise.all([BUILD_LOG, TEST_LOG].map((name) => rm(path.join(evidenceDir, name), { force: true })))
    const diffPath = path.join(evidenceDir, DIFF_FILE)
    await writeFile(diffPath, await git(top, ["diff", "--stat", "--patch", base, commit]))

    const mode = options.sandbox ?? SandboxExec.modeOf(top)
    const inner = options.exec ?? processExec
    let exec = inner
    let sandboxed = false
    if (mode !== "off") {
      const check = Sandbox.check()
      if (check.ok) exec = SandboxExec.wrap(inner, { root: top, worktree, network: Toolchain.networkFor(resolved.rules) })
      else if (mode === "on")
        throw new Error(`the OS sandbox cannot start (${check.message})`)
      sandboxed = check.ok
    }
    // The candidate's build inputs passed before (a task's gates on the same tree, another machine): nothing to build.
    const where = { root: top, dir: worktree, rules: resolved.rules, sandboxed, env: options.env ?? process.env, commit }
    const looked = options.exec ? undefined : await Results.lookup(where, `merge build, task ${taskId}`)
    if (looked?.hit) {
      const reused = await Results.reused(where, looked.hit, `merge build, task ${taskId}`)
      await writeFile(path.join(evidenceDir, BUILD_LOG), `# ${Results.describe(reused)}\n`)
      return { passed: true, summary: `merge build of ${commit.slice(0, 12)} on ${base.slice(0, 12)}: ${Results.describe(reused)}` }
    }
    const batch = candidate.taskIds && candidate.taskIds.length > 1 ? candidate.taskIds : undefined
    const label = batch ? `tasks ${batch.join(", ")} together on ${candidate.integration}` : `task ${taskId} on ${candidate.integration}`
    const ctx: GateContext = {
      root: top,
      worktree,
      taskId,
      base,
      kind: "merge",
      rules: RunJobs.rulesFor(top, resolved.rules),
      toolchainNote: resolved.note,
      evidenceDir,
      env: options.env ?? process.env,
      label,
      requires: [],
      ...(options.signal ? { signal: options.signal } : {}),
      gates: [],
      results: [],
      changed: [],
      findings: [],
      inheritedTests: [],
      ...(options.baseline ? { baseline: options.baseline } : {}),
      ...(options.exec ? {} : { sandboxed }),
      // The run's one job budget around the merge build's commands, ahead of the gates': every task waits for the queue.
      exec: BudgetExec.wrap(exec, RunJobs.of(top), label, { first: true }),
      async write(name, data) {
        const file = path.join(evidenceDir, name)
        await writeFile(file, data)
        return file
      },
    }
    const intro = batch
      ? `${label}: the merge build failed. Their changes, applied together on the current head of ${candidate.integration} ` +
        `(${base.slice(0, 12)}), do not pass, though each passed alone. Nothing was merged; the Scheduler merges them ` +
        `again in smaller batches to find which one breaks it. Combined diff: ${diffPath}\n`
      : `${label}: the merge build failed. The task's change, applied on the current head of ${candidate.integration} ` +
      `(${base.slice(0, 12)}), does not pass, though each passed alone: it conflicts in meaning with work that landed since ` +
      `the task branched. Nothing was merged. Your branch air/${taskId} is now rebased on that head: fix it there so ` +
      `both changes work together, commit, and report again. Combined diff: ${diffPath}\n`
    const built = await runCommands(ctx, "build", BUILD_LOG, (command, what, output, logPath) => {
      const first = firstError(output)
      return {
        summary: first ? `merge build failed: ${first.split("\n")[0]}` : `merge build: \`${command}\` ${what}`,
        message:
          intro +
          `\`${command}\` ${what}.\n` +
          (first ? `First error:\n${indent(first)}\n` : `Last lines:\n${indent(lastLines(output, 15))}\n`) +
          `Full log: ${logPath}`,
      }
    })
    // A tool that is not installed is a person's to fix, not the task's: no verdict (the merge is blocked, and asks).
    if (built.failure?.gate === TOOL_MISSING) throw new Error(built.failure.message)
    if (built.failure) return { passed: false, summary: built.failure.summary, message: built.failure.message, evidencePath: built.logPath ?? diffPath }
    // The test gate's own judgement: tests the run's baseline already failed (the user went on with them) are inherited here too.
    const tested = await testGate.run(ctx)
    if (tested.failure && tested.failure.gate !== TOOL_MISSING)
      return { passed: false, summary: `merge ${tested.failure.summary}`, message: intro + tested.failure.message, evidencePath: tested.logPath ?? diffPath }
    if (tested.failure?.gate === TOOL_MISSING) throw new Error(tested.failure.message)
    return { passed: true, summary: `merge build of ${commit.slice(0, 12)} on ${base.slice(0, 12)}: ${built.summary}; tests: ${tested.summary}` }
  }

  /**
   * The merge worktree, detached at `commit`. One worktree kept across merges, so its build directory
   * (ignored by git, kept by checkout) builds incrementally; files of an earlier candidate are cleaned.
   */
  async function checkout(top: string, commit: string, taskId: string): Promise<string> {
    const dir = worktreeOf(top)
    const registered = (await git(top, ["worktree", "list", "--porcelain"])).split("\n").some((line) => line === `worktree ${dir}`)
    if (registered && existsSync(dir)) {
      const moved = await gitTry(dir, ["checkout", "--quiet", "--force", "--detach", commit])
      if (moved.code === 0) {
        await git(dir, ["clean", "-q", "-f", "-d"])
        await Worktrees.checkoutSubmodules(top, dir)
        return dir
      }
    }
    // Missing, half-made or broken: make it again.
    await Worktrees.dropDetached(top, dir)
    const added = await gitTry(top, ["worktree", "add", "--quiet", "--detach", dir, commit])
    if (added.code !== 0) throw new Error(`could not prepare the merge worktree ${dir} for ${taskId}: ${added.stderr.trim()}`)
    // As in task worktrees: a build that needs its submodules finds them (offline, from the user's checkout).
    await Worktrees.checkoutSubmodules(top, dir)
    return dir
  }

}
