import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { writeFileAtomic } from "../store/atomic.ts"
import { git, GitCommandError } from "../git/git.ts"
import { Toolchain } from "../toolchain/index.ts"
import { Areas } from "../toolchain/areas.ts"
import { BuildSlot } from "../slots/build-slot.ts"
import { SlotPool } from "../slots/slot-pool.ts"
import { Worktrees } from "../git/worktree.ts"
import { GateError } from "../errors.ts"
import { Proc } from "../process.ts"
import { Sandbox } from "../sandbox/sandbox.ts"
import { SandboxExec } from "../sandbox/exec.ts"
import type { WriteSetGate } from "./write-set.ts"
import type { Exec, Failure, Gate, GateContext, TestBaseline } from "./gate.ts"
import { REGISTRY, requiredEvidence, routeOf, TOOL_MISSING } from "./registry.ts"
import { type Finding, type GateReport, type GateResult, Requirement } from "./schema.ts"
import { countBySeverity, indent } from "./text.ts"
import { heldEvidence } from "./held-evidence.ts"
import { BudgetExec } from "../jobs/exec.ts"
import { RunJobs } from "../jobs/run-jobs.ts"
import { SetupSteps } from "../../../knowledge/setup-steps.ts"
import { machineFaultIn, onMachineFault } from "../../core/machine-fault.ts"
import { AirPaths } from "../../core/air-paths"

export const REPORT_FILE = "report.json"

/** The filesystem the pipeline writes evidence through: a seam, so a full disk can be tested. */
export interface EvidenceFs {
  mkdir(dir: string): Promise<void>
  rm(file: string): Promise<void>
  writeFile(file: string, data: string): Promise<void>
  /** Replaces the file whole or not at all (the report: on disk, it always describes a finished run). */
  writeFileAtomic(file: string, data: string): Promise<void>
}

export const nodeEvidenceFs: EvidenceFs = {
  mkdir: async (dir) => void (await mkdir(dir, { recursive: true })),
  rm: (file) => rm(file, { force: true }),
  writeFile: (file, data) => writeFile(file, data),
  writeFileAtomic: (file, data) => writeFileAtomic(file, data, { backup: false }),
}

export const processExec: Exec = (command, args, options) => Proc.run(command, args, options)

export interface RunInput {
  /** The project root (the user's checkout of the integration branch). */
  root: string
  /** The task's worktree: where commands run. */
  worktree: string
  taskId: string
  /** The integration branch the task branched from. */
  base: string
  kind: string
  attempt: number
  /** `<root>/.air/local/evidence/<task-id>/attempt-<n>/` */
  evidenceDir: string
  /** The evidence the task's kind requires; default: what the gates declare (`requiredEvidence(kind, gates)`). */
  requires?: readonly Requirement[]
  /** Rules to use instead of toolchain.json / detection. */
  toolchain?: Toolchain.RulesInput
  /** Environment for build, test and analysis commands; default `process.env`. */
  env?: NodeJS.ProcessEnv
  /** Aborting kills the running gate's processes; the run rejects with `GateError(Aborted)`. */
  signal?: AbortSignal
  /** The gates to run, in order; default the registry. */
  gates?: readonly Gate[]
  /** The task's write-set, for the write-set gate (absent: that gate does not run). */
  writeSet?: readonly WriteSetGate.Entry[]
  /** The run's baseline: the test gate does not blame a task for tests that failed there already. */
  baseline?: TestBaseline
  /** A ui or service task's program fields (the plan's `ui` / `service`): the gate that provides their evidence reads them. */
  program?: { ui?: unknown; service?: unknown }
  /**
   * The OS sandbox around build, test and analysis commands: "on" (default; no sandbox → the run stops,
   * a person is asked), "fallback" (the user allowed running without it), "off" (a caller's own `exec`).
   * Default: "fallback" when the settings say `sandboxFallback`, else "on".
   */
  sandbox?: "on" | "fallback" | "off"
  /**
   * Where the gates that build (`Gate.tree: "build"`) run: the task's worktree (default: a worker's own look at
   * its worktree), or "slot": a build slot moved to the task branch's tip, whose build directory is kept from task
   * to task, so a task's build costs what its change costs (the runtime's gates; `slots/build-slot.ts`).
   */
  buildIn?: "worktree" | "slot"
  /** Seams: how commands run (a sandbox wraps this) and where evidence is written. */
  exec?: Exec
  fs?: EvidenceFs
}

/**
 * Runs the gates in order, stopping at the first failure, and writes report.json last.
 * Resolves with the report (passed or failed: a verdict on the task's work); rejects with a `GateError`
 * when no verdict could be reached (toolchain invalid, git failing, evidence not written, a tool crashed,
 * aborted) — then no report says "passed".
 */
export async function runGates(input: RunInput): Promise<GateReport> {
  Worktrees.assertTaskId(input.taskId)
  const gates: readonly Gate[] = input.gates ?? REGISTRY
  const requires = [...new Set((input.requires ?? requiredEvidence(input.kind, gates)).map((r) => Requirement.parse(r)))]
  const evidenceDir = path.resolve(input.evidenceDir)
  const fs = guarded(input.fs ?? nodeEvidenceFs)
  const aborted = () => {
    if (input.signal?.aborted) throw new GateError("Aborted", `task ${input.taskId}: the gates were stopped (the run was aborted)`)
  }
  aborted()

  const resolved = await tagged(async () => {
    await Worktrees.ensureExcluded(input.root)
    return input.toolchain
      ? { rules: Toolchain.Rules.parse(input.toolchain), source: "file" as const, note: "toolchain rules given by the caller" }
      : await Toolchain.load(input.root, input.worktree)
  })
  // A task builds and tests only the areas its write-set touches (a Python-only task starts no C++ build).
  const scoped = Areas.scope(resolved.rules, input.writeSet?.filter((e) => e.action !== "keep").map((e) => e.path))
  const toolchainNote = scoped.note ? `${resolved.note}; ${scoped.note}` : resolved.note
  await fs.mkdir(evidenceDir)
  const stale = [...new Set([...gates.flatMap((g) => g.logs ?? []), REPORT_FILE])]
  await Promise.all(stale.map((name) => fs.rm(path.join(evidenceDir, name))))

  const results: GateResult[] = []
  const sandboxMode = input.sandbox ?? SandboxExec.modeOf(input.root)
  const sandboxCheck = sandboxMode === "off" ? undefined : Sandbox.check()
  const sandboxed = sandboxCheck?.ok === true
  // The run's one job budget around everything the gates run (the sandbox inside it), writable only in `tree`; every
  // command queues at the place of this gate run's start, so a task's build and tests follow its configure.
  const startedAt = Date.now()
  const execIn = (tree: string): Exec =>
    BudgetExec.wrap(
      sandboxed ? SandboxExec.wrap(input.exec ?? processExec, { root: input.root, worktree: tree, network: Toolchain.networkFor(resolved.rules) }) : (input.exec ?? processExec),
      RunJobs.of(input.root),
      `task ${input.taskId}`,
      { order: startedAt },
    )
  const work: Tree = { path: input.worktree, exec: execIn(input.worktree) }
  let tree = work
  let slot: (Tree & { id: string; notes: string[] }) | undefined
  const ctx: GateContext = {
    root: input.root,
    get worktree() {
      return tree.path
    },
    taskId: input.taskId,
    base: input.base,
    kind: input.kind,
    rules: RunJobs.rulesFor(input.root, scoped.rules),
    toolchainNote,
    evidenceDir,
    env: input.env ?? process.env,
    label: `task ${input.taskId}`,
    requires,
    ...(input.signal ? { signal: input.signal } : {}),
    gates,
    results,
    changed: [],
    findings: [],
    ...(input.writeSet ? { writeSet: input.writeSet } : {}),
    ...(input.program ? { program: input.program } : {}),
    ...(input.baseline ? { baseline: input.baseline } : {}),
    inheritedTests: [],
    // A caller's own exec (a test's fake) makes results that are not the project's: they are neither reused nor recorded.
    ...(input.exec ? {} : { sandboxed }),
    exec: work.exec,
    async write(name, data) {
      const file = path.join(evidenceDir, name)
      await fs.writeFile(file, data)
      return file
    },
  }

  const finish = async (failure?: Failure & { gate: string }): Promise<GateReport> => {
    aborted()
    const report: GateReport = {
      taskId: input.taskId,
      attempt: input.attempt,
      kind: input.kind,
      passed: !failure,
      // The route travels with the failure: the gate that failed declared it, in the registry this run used.
      ...(failure ? { failedGate: failure.gate, failedRoute: routeOf(failure.gate, gates) } : {}),
      message: failure ? failure.message : passMessage(ctx, gates),
      gates: results,
      changedFiles: ctx.changed.map((change) => change.path),
      findings: ctx.findings,
      ...(ctx.inheritedTests.length > 0 ? { inheritedTests: ctx.inheritedTests } : {}),
      requires,
      ...heldEvidence(results, gates, path.join(evidenceDir, REPORT_FILE)),
      toolchain: { source: input.toolchain ? "given" : resolved.source, note: toolchainNote },
      ...(resolved.rules.areas.length > 0 ? { areas: { run: scoped.run, skipped: scoped.skipped } } : {}),
      ...(slot ? { buildTree: { slot: slot.id, notes: slot.notes } } : {}),
      evidenceDir,
    }
    // Written last and atomically: a report.json on disk always describes a finished run.
    await fs.writeFileAtomic(path.join(evidenceDir, REPORT_FILE), JSON.stringify(report, null, 2) + "\n")
    return report
  }

  // The task's own build and tests run only inside the sandbox, unless the user allowed otherwise.
  if (sandboxCheck && !sandboxCheck.ok && sandboxMode === "on")
    return finish({
      gate: TOOL_MISSING,
      missingTool: Sandbox.BINARY,
      summary: "the OS sandbox cannot start",
      message:
        `${ctx.label}: the gates run the task's own build and tests only inside the OS sandbox, and it cannot start here: ` +
        `${sandboxCheck.message}. Install it, or allow running without it ("sandboxFallback": true in ${AirPaths.CONFIG}).`,
    })

  // The project's recorded environment fixes (.air/shared/rules/setup.json), before anything builds here.
  if (gates.some((g) => g.provides === "build" || g.provides === "test")) {
    const setup = await SetupSteps.apply(input.root, input.worktree, ctx.exec, ctx.env, ctx.rules.timeoutMs).catch((error: Error) => {
      throw new GateError("ToolchainInvalid", `${SetupSteps.RULES_FILE}: ${error.message.split("\n")[0]}; fix or delete the file`, { cause: error })
    })
    if (!setup.ok)
      return finish({ gate: TOOL_MISSING, missingTool: setup.step.check ?? setup.step.run!, summary: setup.missing ? `a prerequisite is missing: ${setup.step.reason}` : `a setup step failed: ${setup.step.run}`, message: SetupSteps.message(ctx.label, setup) })
  }
  // A gate that builds takes the build slot at the task branch's tip, the first time one runs.
  const buildTree = async (): Promise<Tree> => {
    if (input.buildIn !== "slot" || ctx.rules.cache.slots === false) return work
    if (slot) return slot
    const head = (await git(input.worktree, ["rev-parse", "HEAD^{commit}"])).trim()
    const id = SlotPool.acquire(input.root, input.taskId)
    try {
      // Every area's commands, not this task's share: a Python-only task must not drop the slot's C++ build.
      const print = await BuildSlot.fingerprint(resolved.rules, ctx.env)
      const taken = await BuildSlot.take(input.root, id, head, print, ctx.rules.detected?.buildDir ?? Toolchain.BUILD_DIR, ctx.env)
      const exec = execIn(taken.path)
      // The project's setup steps, as in every worktree: the slot's clean removed what they made last time.
      const setup = await SetupSteps.apply(input.root, taken.path, exec, ctx.env, ctx.rules.timeoutMs)
      if (!setup.ok) throw new GateError("ToolchainInvalid", SetupSteps.message(`${ctx.label} (build slot ${id})`, setup))
      slot = { id, path: taken.path, exec, notes: taken.notes }
      return slot
    } catch (error) {
      SlotPool.release(input.root, id)
      throw error
    }
  }
  const buildDir = ctx.rules.detected?.buildDir ?? Toolchain.BUILD_DIR
  // A full disk in a building gate is the machine's fault, not the work's: the build tree is reset and the gates run
  // again from the first building gate; a second time, the run stops with one clear message (core/machine-fault.ts).
  let machineRetries = 0
  const firstBuilding = gates.findIndex((g) => g.tree === "build")
  let mark = { results: 0, findings: 0, inherited: 0 }
  let verdict = false
  try {
    for (let i = 0; i < gates.length; i++) {
      const gate = gates[i]!
      if (i === firstBuilding) mark = { results: results.length, findings: ctx.findings.length, inherited: ctx.inheritedTests.length }
      aborted()
      const started = Date.now()
      tree = gate.tree === "build" ? await tagged(buildTree) : work
      ctx.exec = tree.exec
      const outcome = await tagged(() => gate.run(ctx))
      aborted()
      const failure = outcome.failure
      results.push({
        gate: gate.id,
        passed: !failure,
        ran: outcome.ran,
        ms: Date.now() - started,
        ...(outcome.logPath ? { logPath: outcome.logPath } : {}),
        ...(outcome.notApplicable && !outcome.ran && !failure ? { notApplicable: true } : {}),
        summary: outcome.summary,
        ...(failure?.missingTool ? { missingTool: failure.missingTool } : {}),
        ...(outcome.reused ? { reused: outcome.reused } : {}),
      })
      const fault = failure && gate.tree === "build" ? machineFaultIn(await faultText(outcome.logPath, failure.message)) : undefined
      if (fault) {
        const step = onMachineFault(machineRetries, fault, tree.path)
        if (step.do === "stop") throw new GateError("DiskFull", `${ctx.label}: ${step.message}`)
        machineRetries++
        const notes = slot
          ? await BuildSlot.reset(input.root, slot.id, buildDir)
          : (await rm(path.join(tree.path, buildDir), { recursive: true, force: true }), ["build directory dropped: the disk filled during the build"])
        if (slot) slot.notes.push(...notes)
        results.length = mark.results
        ctx.findings.length = mark.findings
        ctx.inheritedTests.length = mark.inherited
        i = firstBuilding - 1
        continue
      }
      if (failure) {
        verdict = true
        return await finish({ ...failure, gate: failure.gate ?? gate.id })
      }
    }
    verdict = true
    return await finish()
  } finally {
    tree = work
    if (slot) {
      // A verdict (pass or fail) leaves a whole build to build on; gates that were stopped or crashed leave the slot
      // marked busy on disk, so its next use drops the build directory they may have left half-written.
      if (verdict) await BuildSlot.release(input.root, slot.id, buildDir).catch(() => undefined)
      SlotPool.release(input.root, slot.id)
    }
  }
}

/** What a failed gate printed, for the machine-fault check: the message and the end of its log. */
async function faultText(logPath: string | undefined, message: string): Promise<string> {
  const log = logPath ? await readFile(logPath, "utf8").catch(() => "") : ""
  return `${message}\n${log.slice(-64_000)}`
}

/** Where a gate runs and how its commands are run there (sandboxed to write only that tree). */
type Tree = { path: string; exec: Exec }


function passMessage(ctx: GateContext, gates: readonly Gate[]): string {
  const toolGate = (id: string) => gates.find((g) => g.id === id)?.reportsNotRun === true
  const ran = ctx.results.filter((g) => g.ran || !toolGate(g.gate))
  const notRun = ctx.results.filter((g) => !g.ran && toolGate(g.gate))
  let message = `${ctx.label}: all gates passed (${ran.map((g) => g.gate).join(", ")})`
  if (notRun.length > 0) message += `; not run: ${notRun.map((g) => `${g.gate} (${g.summary})`).join("; ")}`
  if (ctx.inheritedTests.length > 0)
    message += `; tests failing on the baseline too (inherited, not blamed): ${ctx.inheritedTests.join(", ")}`
  const findings: Finding[] = ctx.findings
  if (findings.length > 0) {
    message +=
      `; the analysis recorded ${countBySeverity(findings)}` +
      (findings.some((f) => f.inherited) ? ` (${findings.filter((f) => f.inherited).length} inherited from the base)` : "") +
      ":\n" +
      indent(findings.slice(0, 10).map((f) => `${f.file}:${f.line}: ${f.severity}: ${f.tool ?? "cppcheck"} ${f.id}: ${f.message}${f.inherited ? " (inherited)" : ""}`).join("\n"))
  }
  return message
}

/** Evidence writes that fail are `EvidenceWriteFailed`: the gates cannot vouch for what they did not keep. */
function guarded(fs: EvidenceFs): EvidenceFs {
  const wrap =
    <A extends unknown[]>(what: string, op: (...args: A) => Promise<void>) =>
    async (...args: A) => {
      try {
        await op(...args)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        throw new GateError(
          "EvidenceWriteFailed",
          `could not ${what} ${String(args[0])}: ${code ? `${code}: ` : ""}${(error as Error).message}. ` +
            `The gates keep every log as evidence; free space or fix the permissions of ${AirPaths.EVIDENCE}, then run the gates again.`,
          { cause: error },
        )
      }
    }
  return {
    mkdir: wrap("create", fs.mkdir),
    rm: wrap("remove", fs.rm),
    writeFile: wrap("write", fs.writeFile),
    writeFileAtomic: wrap("write", fs.writeFileAtomic),
  }
}

/** Gives the errors the interpreter must tell apart their tag; others pass through untouched. */
async function tagged<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof GateError) throw error
    if (error instanceof Toolchain.RulesInvalid) throw new GateError("ToolchainInvalid", error.message, { cause: error })
    if (error instanceof GitCommandError || error instanceof Worktrees.WorktreeError) {
      throw new GateError("GitFailed", `the gates could not read the task's branch: ${error.message}`, { cause: error })
    }
    throw error
  }
}
