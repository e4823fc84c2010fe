import { dirname, join } from "node:path"
import { baselineDone, baselineHolds } from "../core/baseline"
import type { Command, Consultant } from "../core/command"
import { commandFailure } from "../core/command-failure"
import { headlessEnd } from "../../text/run-status"
import type { TaskRuntime } from "../core/state"
import type { OverflowRole, WorkerRole } from "../core/vocabulary"
import type { OverflowCarry } from "./sessions/overflow-carry"
import type { TaskNode } from "../core/task.schema"
import type { Clock } from "./sessions/clock"
import type { Applied, EventInput, Ports } from "./ports"
import type { InterpreterPorts } from "./interpreter-ports"
import type { Supervisor } from "./sessions/supervisor"
import { classifyFault } from "./fault"
import { gatesOutcomeEvent } from "./gates/outcome-event"
import type { MergeBuild } from "./integration/merge-build"
import type { MergeQueue } from "./integration/merge"
import type { DeployStep } from "./deploy/step"
import { recordReservation } from "./sessions/reservation"
import { AirPaths } from "../core/air-paths"

/** How long the failure event of a failed command waits before it is applied again, after a log that threw. */
const RETRY_APPLY_MS = 500

/** The machine refused an event the runtime built as a command's outcome: the command has failed. */
class OutcomeRefused extends Error {
  constructor(
    readonly event: string,
    readonly reason: string,
    /** The task whose outcome it was, in a batch of several. */
    readonly taskId?: string,
  ) {
    super(`${event} was refused: ${reason}`)
  }

  of(taskId: string): OutcomeRefused {
    return new OutcomeRefused(this.event, this.reason, taskId)
  }
}

/** The command as far as it concerns the task whose outcome was refused (one task of a merged batch). */
function narrowed(cmd: Command, err: unknown): Command {
  if (cmd.type !== "merge" || !(err instanceof OutcomeRefused) || !err.taskId) return cmd
  return { ...cmd, tasks: cmd.tasks.filter((t) => t.taskId === err.taskId) }
}

/** The task a command works on, if any (a merge's first task): a `runtime.fault` names it. */
function commandTask(cmd: Command): { taskId?: string } {
  if ("taskId" in cmd && typeof cmd.taskId === "string") return { taskId: cmd.taskId }
  if (cmd.type === "merge") return { taskId: cmd.tasks[0]!.taskId }
  return {}
}

/**
 * Carries out the machine's commands. Each command's outcome goes back to the machine as an event; the
 * interpreter decides nothing itself. A command id already in flight is not carried out twice.
 */
export class Interpreter {
  /** Commands being carried out, by command id: the id keeps a command from running twice, the promise lets `settled` wait. */
  private inFlight = new Map<string, Promise<void>>()
  /** Reverts in flight: a dispatch waits for them before it branches off the integration branch. */
  private reverting: Promise<void> = Promise.resolve()

  constructor(
    private ports: InterpreterPorts,
    private supervisor: Supervisor,
    private clock: Clock,
    /** The branch the run integrates into (from the run's start). */
    readonly integration: () => string,
  ) {}

  /**
   * Starts the command unless the same command is already being carried out. A command that throws, or whose
   * outcome the machine refuses, becomes the event of its own failure (core/command-failure.ts), so the machine
   * decides and nothing waits on it; Main hears of it too.
   */
  execute(cmd: Command): void {
    if (this.inFlight.has(cmd.id)) return
    const done = this.run(cmd)
      .catch((err) => this.failed(cmd, err))
      .finally(() => this.inFlight.delete(cmd.id))
    this.inFlight.set(cmd.id, done)
  }

  /** Commands being carried out now (the watchdog's "nothing in flight" reads it). */
  inFlightCount(): number {
    return this.inFlight.size
  }

  /** Resolves once every command started so far has ended, its failure recorded: for tests. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()])
  }

  /**
   * The one event a failed command still owes the machine: its failure event (a session's spawn-failed, gates.errored,
   * merge.blocked, …), applied even through a log that failed a moment ago. Refused too — the task has moved on, or
   * the machine has no rule for it — the refusal is itself recorded as a `runtime.fault`, whose rule blocks the task
   * with a question when it still waits on this command, and is refused as stale otherwise: never silence.
   */
  private async failed(whole: Command, err: unknown): Promise<void> {
    const cmd = narrowed(whole, err)
    const message =
      err instanceof OutcomeRefused
        ? `the Scheduler refused the outcome of ${cmd.type} (${cmd.id}), ${err.event}: ${err.reason}`
        : `Scheduler error while carrying out ${cmd.type} (${cmd.id}): ${err instanceof Error ? err.message : String(err)}`
    const event = commandFailure(cmd, message)
    const applied = event ? await this.applyRetrying(event) : undefined
    if (applied?.ok) this.ports.inbox.push(`${message}; recorded as ${event!.type}`)
    else if (event || err instanceof OutcomeRefused) {
      const refusal = applied && !applied.ok ? `; ${event!.type} was refused too: ${applied.reason}` : applied === undefined && event ? `; ${event.type} could not be recorded` : ""
      const fault = await this.applyRetrying({ type: "runtime.fault", source: "command", command: cmd.type, commandId: cmd.id, ...commandTask(cmd), message: `${message}${refusal}` })
      this.ports.inbox.push(fault?.ok ? `${message}${refusal}; recorded as runtime.fault` : `${message}${refusal}`)
    } else this.ports.inbox.push(message)
    // air_listen tells the end only once the final check is recorded, and Main sleeps until then: a finish
    // that failed (its check recorded as errored) still ends the run in words, and wakes Main.
    const state = this.ports.log.state()
    if (cmd.type === "finish" && applied?.ok && state && headlessEnd(state) === "ended") this.ports.inbox.push(this.ports.report.endText(this.ports.root, state), true)
  }

  /** Applies an event, trying again after a log that threw (a full disk a moment ago); undefined when it never could. */
  private async applyRetrying(event: EventInput, tries = 3): Promise<Applied | undefined> {
    for (let i = 0; i < tries; i++) {
      try {
        return await this.ports.log.apply(event)
      } catch {
        if (i < tries - 1) await this.ports.clock.sleep(RETRY_APPLY_MS * (i + 1))
      }
    }
    return undefined
  }

  /** An outcome the command exists to report: refused, it becomes the command's failure (`failed`), never a silent end. */
  private async outcome(event: EventInput): Promise<void> {
    const r = await this.ports.log.apply(event)
    if (!r.ok) throw new OutcomeRefused(event.type, r.reason)
  }

  /** The same, awaited: for tests and for callers that must know the command is over. */
  async run(cmd: Command): Promise<void> {
    const { inbox } = this.ports
    switch (cmd.type) {
      case "dispatch":
        await this.checkAdrs()
        await recordReservation(this.ports.log, cmd.taskId, cmd.role)
        return this.dispatch(cmd.taskId, cmd.role, cmd.attempt)
      case "runGates":
        await this.checkAdrs()
        return this.runGates(cmd.taskId)
      case "review":
        await recordReservation(this.ports.log, cmd.taskId, "reviewer")
        return this.startReview(cmd.taskId)
      case "merge":
        return this.merge(cmd.tasks)
      case "abort":
        return this.supervisor.abort(cmd.sessionId)
      case "notify":
        return inbox.push(cmd.text)
      case "ask":
        return inbox.push(`QUESTION ${cmd.questionId} — ask the user, then call air_answer with this id:\n${cmd.text}`, true)
      case "consult":
        return this.consult(cmd.taskId, cmd.agent, cmd.question, [...cmd.options])
      case "reviewMilestone":
        await this.checkAdrs()
        return this.reviewMilestone(cmd.phase, cmd.final)
      case "classifyAdr":
        return this.classifyAdr(cmd.adr, cmd.hash, cmd.tasks)
      case "plan":
        return this.plan(cmd.requirement, cmd.autoConfirm)
      case "replan":
        return this.replan(cmd.text)
      case "revert":
        return this.revert(cmd.taskId, cmd.round)
      case "finish":
        return this.finish()
      case "runBaseline":
        return this.runBaseline()
      case "deploy":
        await this.ports.deploy.step(this.ports, cmd, undefined, (commit) => this.deployBuild(commit))
        // A failed verification sent a task to the Debugger: the run goes on, its sessions timed again.
        if (this.ports.log.state()?.stage === "running") this.clock.start(this.ports.settings().inactivityMs)
        return
    }
  }

  /** One build per merged commit for all the targets deploying it (a phase's deploy has no final check before it). */
  private deployBuilds = new Map<string, ReturnType<DeployStep.Build>>()
  private deployBuild(commit: string): ReturnType<DeployStep.Build> {
    const build = this.ports.finalCheck.build
    if (!build) return Promise.resolve({ passed: true, summary: "", evidenceDir: "" })
    let pending = this.deployBuilds.get(commit)
    if (!pending) {
      pending = build(this.ports.root, AirPaths.evidence(this.ports.root, "_deploy", "_build", commit.slice(0, 12)))
      this.deployBuilds.set(commit, pending)
      // Only a passing build is shared on: a failed one, or one that could not run, runs again for the next deploy of that commit.
      const forget = () => void this.deployBuilds.delete(commit)
      pending.then((r) => (r.passed ? undefined : forget()), forget)
    }
    return pending
  }

  /**
   * The end of a run, done or blocked: the integration branch gets its final check, recorded as an event, while the
   * worktrees of merged tasks and the run's helper trees go (the check reads neither: it builds the root's tracked
   * files, and .air/ is excluded), and only when both are done is the end told (which lets a headless run exit,
   * nothing of theirs left behind).
   */
  async finish(): Promise<void> {
    const { root, inbox, log } = this.ports
    this.clock.stopTimers()
    const cleaned = this.removeMergedWorktrees().then(() => this.removeHelperTrees())
    // Its failure is the command's, once the check is recorded (never an unhandled rejection meanwhile).
    cleaned.catch(() => undefined)
    const before = await log.opened()
    if (before.finished && before.finalCheck === null) {
      let check: { status: "passed" | "failed" | "errored"; message: string }
      try {
        const known = before.baseline?.accepted ? before.baseline.failingTests : []
        const result = await this.ports.finalCheck.run(root, known.length > 0 ? { knownFailingTests: known } : {})
        check = { status: result.passed ? "passed" : "failed", message: result.summary }
      } catch (err) {
        const fault = classifyFault(err)
        check = { status: "errored", message: `${fault.tag}: ${fault.message}` }
        inbox.push(`The final build of the integration branch could not run: ${fault.message}`)
      }
      await this.outcome({ type: "finalCheck.done", ...check })
    }
    await cleaned
    const state = await log.opened()
    // An answer may have reopened the run meanwhile: then this end is not the end.
    if (state.finished) inbox.push(this.ports.report.endText(root, state), true)
  }

  /**
   * Builds and tests the integration head in a baseline worktree (or reads back the record of that commit)
   * and tells the machine; a baseline that cannot run at all is `errored`, which asks the user too.
   */
  private async runBaseline(): Promise<void> {
    const { root, log } = this.ports
    let outcome: Omit<Extract<EventInput, { type: "baseline.done" }>, "type">
    try {
      outcome = baselineDone(await this.ports.baseline.run(root, this.integration()))
    } catch (err) {
      const fault = classifyFault(err)
      const commit = (await this.ports.git(root, ["rev-parse", this.integration()]).catch(() => this.integration())).trim() || this.integration()
      outcome = { commit, status: "errored", buildFailed: false, failingTests: [], message: `${fault.tag}: ${fault.message}` }
    }
    await this.outcome({ type: "baseline.done", ...outcome })
  }

  /**
   * Before a dispatch: a head that is neither the baseline's commit nor one of AirCoding's merges means
   * someone else moved the integration branch; the machine takes the baseline again (a revert AirCoding
   * made also counts as a move: one extra baseline, never a wrong one). Unreadable refs are left alone.
   */
  private async checkIntegration(): Promise<void> {
    const state = this.ports.log.state()
    const b = state?.baseline
    if (!state || !b?.commit || b.status === "running") return
    const head = (await this.ports.git(this.ports.root, ["rev-parse", this.integration()]).catch(() => "")).trim()
    if (!head) return
    // A batch lands as a merge commit over the tasks' own commits: that commit is ours too.
    const ours = new Set([b.commit, ...state.tasks.flatMap((t) => (t.merged ? [t.merged.commit, ...(t.merged.head ? [t.merged.head] : [])] : []))])
    if ([...ours].some((c) => c === head || head.startsWith(c) || c.startsWith(head))) return
    await this.ports.log.apply({ type: "integration.moved", commit: head })
  }

  /**
   * A dispatch the machine sent before the branch moved waits for the new baseline (and for the user's
   * answer when it failed): the task branches off a head whose failures are known, not blamed on it.
   */
  private async baselineSettled(): Promise<void> {
    for (let state = this.ports.log.state(); state && baselineHolds(state) && !state.finished; state = this.ports.log.state())
      await this.ports.clock.sleep(200)
  }

  /** What the test gate judges against: the tests the baseline found failing (the user went on with them). */
  private testBaseline(): { commit: string; failingTests: string[] } | undefined {
    const b = this.ports.log.state()?.baseline
    return b?.commit ? { commit: b.commit, failingTests: b.failingTests } : undefined
  }

  /**
   * The merge build's worktree, the base tree the analysis compares with and the build slots are this run's caches: a
   * finished run leaves in the user's repository only the worktrees of work not merged.
   */
  private async removeHelperTrees(): Promise<void> {
    await this.ports.helperTrees.drop(this.ports.root)
  }

  /** Removes the worktree of every merged task still on disk (one whose removal was cut short by the end of the run). */
  async removeMergedWorktrees(): Promise<void> {
    const { root, log, inbox } = this.ports
    const state = await log.opened()
    for (const t of state.tasks) {
      if (t.status !== "merged" || !this.ports.fs.exists(this.ports.worktrees.pathFor(root, t.id))) continue
      await this.ports.worktrees
        .remove(root, t.id, { integration: this.integration(), round: Math.max(1, t.merges) })
        .catch((err) => inbox.push(`Worktree of ${t.id} kept: ${(err as Error).message}`))
    }
  }

  evidenceDir(taskId: string): string {
    return AirPaths.evidence(this.ports.root, taskId)
  }

  private task(taskId: string): TaskNode {
    const t = this.ports.log.state()?.graph?.tasks.find((x) => x.id === taskId)
    if (!t) throw new Error(`task ${taskId} is not in the graph`)
    return t
  }

  runtimeOf(taskId: string): TaskRuntime | undefined {
    return this.ports.log.state()?.tasks.find((t) => t.id === taskId)
  }

  /** The user's answer to a proposal, to the Architect (see Supervisor.toArchitect). */
  toArchitect(text: string, fresh: string): Promise<void> {
    return this.supervisor.toArchitect(text, fresh)
  }

  /**
   * The Architect's planning session, at the start of a run or again after a restart: a new session is told
   * where the plan stands — confirmed (write the graph), sent back with the user's changes (revise), or
   * nothing yet (study the requirement and propose).
   */
  private async plan(requirement: string, autoConfirm: boolean): Promise<void> {
    // A planning session still watched (one past its wall-clock cap) gives way to the fresh one.
    await this.supervisor.endStep("architect")
    await this.planSession(requirement, autoConfirm).catch((err) => this.stepSpawnFailed({ kind: "architect", nudged: false }, err))
  }

  /**
   * A step's session could not start (the engine refused it, a prompt failed): the machine hears it as that
   * step's `spawn-failed`, and decides (a fresh session, then one question).
   */
  private async stepSpawnFailed(purpose: Parameters<Supervisor["fail"]>[0], err: unknown): Promise<void> {
    const r = await this.supervisor.fail(purpose, "", "spawn-failed", { message: (err as Error)?.message ?? String(err) })
    if (!r.ok) throw err
  }

  private planSession(requirement: string, autoConfirm: boolean): Promise<void> {
    const state = this.ports.log.state()
    const summary = state?.planSummary ?? null
    if (state?.stage === "confirmed" && summary !== null && !autoConfirm)
      return this.toArchitect(this.ports.context.pack.confirmedText(), this.ports.context.pack.architectAgain(requirement, summary, { confirmed: true }))
    if (state?.stage === "planning" && state.planRevision !== undefined && summary !== null)
      return this.toArchitect(this.ports.context.pack.revisionText(state.planRevision), this.ports.context.pack.architectAgain(requirement, summary, { confirmed: false, revision: state.planRevision }))
    return this.spawnArchitect(requirement, autoConfirm)
  }

  async spawnArchitect(requirement: string, autoConfirm: boolean): Promise<void> {
    this.supervisor.architectSessionID = await this.supervisor.spawn(
      { kind: "architect", nudged: false },
      { agent: "architect", directory: this.ports.root, title: "Architect: plan", prompt: this.ports.context.pack.architect(requirement, autoConfirm, this.ports.root) },
    )
  }

  private async dispatch(taskId: string, role: WorkerRole, attempt: number): Promise<void> {
    const { root, worktrees, inbox, log } = this.ports
    try {
      const task = this.task(taskId)
      await this.reverting
      await this.checkIntegration()
      await this.baselineSettled()
      const wt = await worktrees.create(root, taskId, this.integration())
      if (wt.recovered) inbox.push(`Task ${taskId}: ${wt.recovered}.`)
      // A session that died mid-edit left its changes uncommitted: kept as a patch, never built upon.
      const setAside = await worktrees.setAside(wt.path, join(this.evidenceDir(taskId), `uncommitted-before-attempt-${attempt}.patch`))
      // A later attempt is told what the branch already holds: it builds on those commits instead of adding their work again.
      const earlier = attempt > 1 ? await this.commitsSinceBase(wt.path) : []
      const rt = this.runtimeOf(taskId)
      // The session before ran out of the model's context: the fresh one starts from what the worktree holds too.
      const overflow = await this.overflowCarry(rt, role, wt.path)
      const spec = this.ports.context.worker(role, { root, task, rt, worktree: wt, attempt, ...(setAside ? { setAside } : {}), earlier, ...(overflow ? { overflow } : {}) })
      await this.supervisor.spawn(
        { kind: "worker", taskId, role, nudged: false, attempt },
        spec,
        (sessionId) => this.recordStart({ type: "task.dispatched", taskId, role, sessionId, attempt }, role, overflow),
      )
    } catch (err) {
      return this.dispatchFailed(taskId, role, attempt, err)
    }
  }

  /** What a fresh session of `role` carries when the task's last session of that role overflowed (none otherwise). */
  private async overflowCarry(rt: TaskRuntime | undefined, role: OverflowRole, worktree: string): Promise<OverflowCarry.Carry | undefined> {
    const record = rt?.overflow
    if (!record || record.role !== role) return undefined
    return this.ports.context.overflow.gather({ root: this.ports.root, worktree, base: this.integration(), record, rt, git: this.ports.git })
  }

  /** A session's start (task.dispatched, review.started), then, for a fresh session after an overflow, what it carried (session.refreshed). */
  private async recordStart(started: Extract<EventInput, { type: "task.dispatched" | "review.started" }>, role: OverflowRole, overflow: OverflowCarry.Carry | undefined): Promise<Applied> {
    const { log } = this.ports
    const applied = await log.apply(started)
    if (applied.ok && overflow)
      await log.apply({ type: "session.refreshed", taskId: started.taskId, sessionId: started.sessionId, role, from: overflow.from, carried: this.ports.context.overflow.carried(overflow) })
    return applied
  }

  /** The task branch's own commits, newest first, as "<short hash> <subject>" (none when git cannot say). */
  private async commitsSinceBase(worktree: string): Promise<string[]> {
    const out = await this.ports.git(worktree, ["log", "--format=%h %s", "--max-count=20", `${this.integration()}..HEAD`]).catch(() => "")
    return out.split("\n").map((l) => l.trim()).filter(Boolean)
  }

  private async runGates(taskId: string): Promise<void> {
    const { root, worktrees, log, inbox } = this.ports
    const attempt = this.runtimeOf(taskId)?.gateRuns ?? 1
    const reportPath = join(this.evidenceDir(taskId), `attempt-${attempt}`, "report.json")
    let report: Awaited<ReturnType<Ports["gates"]["run"]>>
    try {
      const task = this.task(taskId)
      const started = await log.apply({ type: "gates.started", taskId })
      // A command replayed for a task that has left its gates (a delta reset it, a restart raced it) owes nothing.
      if (!started.ok && this.runtimeOf(taskId)?.status !== "gating") {
        inbox.push(`task ${taskId}: its gates were not run: ${started.reason}`)
        return
      }
      const baseline = this.testBaseline()
      report = await this.ports.gates.run({
        root,
        worktree: worktrees.pathFor(root, taskId),
        taskId,
        base: this.integration(),
        kind: task.kind,
        attempt,
        evidenceDir: join(this.evidenceDir(taskId), `attempt-${attempt}`),
        writeSet: task.writeSet,
        ...(task.ui !== undefined || task.service !== undefined ? { program: { ui: task.ui, service: task.service } } : {}),
        ...(baseline ? { baseline } : {}),
        // The building gates run in a build slot kept between tasks: a task's build costs what its change costs.
        buildIn: "slot",
      })
    } catch (err) {
      // The gates could not reach a verdict (invalid toolchain.json, a git error, a full disk): the task must not
      // stay gating; the machine blocks it with the cause, and the answer runs the gates again.
      await this.outcome({ type: "gates.errored", taskId, ...classifyFault(err) })
      return
    }
    if (report.passed) {
      // The tree the gates built: the merge builds only a candidate that differs from it (merge-build.ts).
      await this.ports.merge.recordGated(root, taskId).catch(() => undefined)
    }
    // A farm host lost mid-build: distcc compiled locally and the gates went on; the user hears of it, the run goes on.
    const degraded = await this.ports.gates.farmDegraded(taskId, dirname(reportPath)).catch(() => undefined)
    if (degraded) await this.applyRetrying(degraded)
    await this.outcome(gatesOutcomeEvent(taskId, report, reportPath))
    if (report.passed) {
      // A Debugger's repair that passed becomes a repair pattern (knowledge/patterns.ts); never in the way of the run.
      try {
        this.ports.knowledge.learn(root, taskId)
      } catch {}
    }
  }

  private async startReview(taskId: string): Promise<void> {
    const { root, worktrees } = this.ports
    const task = this.task(taskId)
    const wt = worktrees.pathFor(root, taskId)
    const rt = this.runtimeOf(taskId)
    const run = rt?.reviewRuns ?? 1
    try {
      const overflow = await this.overflowCarry(rt, "reviewer", wt)
      // A ui or service task's evidence goes with the prompt: pictures only to a model that takes them.
      const attach = task.kind === "ui" && (await this.ports.sessions.takesImages?.("reviewer", root)) === true
      const evidence = this.ports.context.evidence.forReview(root, task, rt?.gateRuns ?? 0, attach)
      await this.supervisor.spawn(
        { kind: "reviewer", taskId, nudged: false, run },
        { agent: "reviewer", directory: root, worktree: wt, title: `reviewer ${taskId}`, prompt: this.ports.context.pack.reviewer(root, task, wt, rt, evidence.lines, overflow), taskId, images: evidence.images },
        (sessionId) => this.recordStart({ type: "review.started", taskId, sessionId }, "reviewer", overflow),
      )
    } catch (err) {
      await this.dispatchFailed(taskId, "reviewer", run, err)
    }
  }

  /** A session that could not start goes to the machine, which retries or blocks: the task never waits on nothing. */
  private async dispatchFailed(taskId: string, role: WorkerRole | "reviewer", run: number, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err)
    const purpose = role === "reviewer" ? { kind: "reviewer" as const, taskId, nudged: false, run } : { kind: "worker" as const, taskId, role, nudged: false, attempt: run }
    const r = await this.supervisor.fail(purpose, "", "spawn-failed", { message })
    if (r.ok) this.ports.inbox.push(`task ${taskId}: the ${role} session could not start (${message}); the Scheduler retries or asks you.`)
    else throw err
  }

  /**
   * Merges one batch and reports each task's outcome. A fault of the whole batch (the lock, the user's
   * checkout) blocks the task it names and sends the others back to the queue: nothing of theirs landed.
   */
  private async merge(tasks: { taskId: string; round: number }[]): Promise<void> {
    const { root, log, inbox } = this.ports
    const ids = tasks.map((t) => t.taskId)
    let result: MergeQueue.BatchResult
    try {
      for (const taskId of ids) await log.apply({ type: "merge.started", taskId })
      const baseline = this.testBaseline()
      const verify: MergeBuild.Verify = (candidate) =>
        this.ports.merge.verify(candidate, { evidenceDir: this.mergeEvidenceDir(candidate), ...(baseline ? { baseline } : {}) })
      result = await this.ports.merge.mergeBatch({
        root,
        integration: this.integration(),
        tasks: tasks.map((t) => ({ taskId: t.taskId, round: t.round, title: this.task(t.taskId).title })),
        lockTimeoutMs: this.ports.settings().mergeLockMs,
        verify,
      })
    } catch (err) {
      // Nothing landed (a lock held, index.lock left, local changes in the way): the queue must not wait on it.
      const named = (err as { taskId?: unknown }).taskId
      const blocked = typeof named === "string" && ids.includes(named) ? named : ids[0]!
      await this.outcome({ type: "merge.blocked", taskId: blocked, ...classifyFault(err) })
      for (const taskId of ids) if (taskId !== blocked) await this.outcome({ type: "merge.deferred", taskId })
      return
    }
    const landed: { taskId: string; round: number }[] = []
    // Each task's outcome is recorded, whatever the machine said of the one before: a refusal fails that task's merge only.
    const refused: OutcomeRefused[] = []
    const record = (event: EventInput & { taskId: string }) => this.outcome(event).then(() => true, (err) => (err instanceof OutcomeRefused ? (refused.push(err.of(event.taskId)), false) : Promise.reject(err)))
    for (const outcome of result.outcomes) {
      const { taskId } = outcome
      switch (outcome.status) {
        case "merged":
        case "already-merged":
          if (await record({ type: "merge.succeeded", taskId, commit: outcome.commit, tag: outcome.tag, ...(outcome.status === "merged" && outcome.head ? { head: outcome.head } : {}) }))
            landed.push(tasks.find((t) => t.taskId === taskId)!)
          break
        case "conflict":
          await record({ type: "merge.conflicted", taskId, files: outcome.files })
          break
        case "rejected":
          await record({ type: "merge.rejected", taskId, message: outcome.message, evidencePath: outcome.evidencePath })
          break
        case "blocked":
          await record({ type: "merge.blocked", taskId, ...classifyFault(outcome.error) })
          break
        case "deferred":
          await record({ type: "merge.deferred", taskId })
          break
      }
    }
    if (result.rejected) await this.outcome({ type: "merge.batch-rejected", taskIds: result.rejected.taskIds, message: result.rejected.summary, evidencePath: result.rejected.evidencePath })
    // Only now, with the merge confirmed and tagged, may the branch and worktree go.
    for (const { taskId, round } of landed) {
      await this.ports.worktrees
        .remove(root, taskId, { integration: this.integration(), round })
        .catch((err) => inbox.push(`Worktree of ${taskId} kept: ${(err as Error).message}`))
    }
    if (refused.length > 0) throw refused[0]
  }

  /** A task's merge evidence goes with its other evidence; a batch's, which blames no task, under `_merge`. */
  private mergeEvidenceDir(candidate: MergeBuild.Candidate): string {
    const run = this.runtimeOf(candidate.taskId)?.mergeRuns ?? 1
    if (!candidate.taskIds || candidate.taskIds.length < 2) return join(this.evidenceDir(candidate.taskId), `merge-${run}`)
    return AirPaths.evidence(this.ports.root, "_merge", `${candidate.taskIds.join("+")}.${run}`)
  }

  /** Undoes a merged task by its air/done tag (idempotent: a revert already made is recognised by its tag). */
  revert(taskId: string, round: number): Promise<void> {
    // Work dispatched after a plan delta starts from the integration branch without the reverted change.
    const next = this.reverting.then(() => this.revertNow(taskId, round))
    this.reverting = next.catch(() => undefined)
    return next
  }

  private async revertNow(taskId: string, round: number): Promise<void> {
    const { root, inbox, log } = this.ports
    const result = await this.ports.merge.revert({ root, taskId, round, integration: this.integration(), lockTimeoutMs: this.ports.settings().mergeLockMs })
    if (result.status === "conflict")
      inbox.push(
        `The revert of ${taskId} conflicts with later work in ${result.files.join(", ") || "(files not named)"}: ${result.message}. ` +
          `${this.integration()} still holds ${taskId}'s change; ask the user to revert it by hand (git revert ${await this.doneCommit(taskId, round)}) or to change the plan.`,
        true,
      )
    else inbox.push(`task ${taskId} reverted on ${this.integration()} (${result.tag})`)
    // The state keeps an ordered revert until this (a restart carries it out again through outstanding()).
    await this.outcome({ type: "revert.done", taskId, round, status: result.status === "conflict" ? "conflicted" : "reverted" })
  }

  private async doneCommit(taskId: string, round: number): Promise<string> {
    const tag = this.ports.worktrees.doneTag(taskId, round)
    return (await this.ports.git(this.ports.root, ["rev-parse", "--short", `refs/tags/${tag}^{commit}`]).catch(() => tag)).trim()
  }

  private async consult(taskId: string, agent: Consultant, question: string, options: string[]): Promise<void> {
    const { root } = this.ports
    const purpose = { kind: "consult" as const, taskId, agent, options, nudged: false }
    await this.supervisor
      .spawn(purpose, { agent, directory: root, title: `consult ${taskId} (${agent})`, prompt: this.ports.context.pack.consult(taskId, question, options, agent), taskId })
      .catch((err) => this.supervisor.fail(purpose, "", "spawn-failed", { message: (err as Error).message }))
  }

  async reviewMilestone(phase: number, final = false): Promise<void> {
    const { root, log, inbox } = this.ports
    const state = await log.opened()
    // A review recorded as started (before a restart) is started again without recording it twice.
    const resumed = state.milestone?.phase === phase && state.milestone.reviewing
    // The final review looks at the whole requirement: every merged task, whatever its phase.
    const tasks = (state.graph?.tasks ?? []).filter((t, i) => (final || t.phase === phase) && state.tasks[i]?.status === "merged")
    // The final review sees every capture of the run (pictures only to a model that takes them, and only a few).
    const programs = final && tasks.some((t) => t.kind === "ui" || t.kind === "service")
    const attach = programs && (await this.ports.sessions.takesImages?.("architect", root)) === true
    const captures = final ? this.ports.context.evidence.forFinalReview(root, tasks, (id) => state.tasks.find((t) => t.id === id)?.gateRuns ?? 0, attach) : { lines: [], images: [] }
    const prompt = this.ports.context.pack.milestone(phase, state.requirement, tasks, { final, adrs: this.ports.adrs.list(root), answer: state.milestoneAnswer, captures: captures.lines })
    await this.supervisor.endStep("milestone")
    const purpose = { kind: "milestone" as const, phase, nudged: false }
    try {
      await this.supervisor.spawn(
        purpose,
        { agent: "architect", directory: root, title: final ? `Architect: final review` : `Architect: milestone ${phase}`, prompt, images: captures.images },
        // Recorded before the first prompt: after a crash the review is known to have started.
        resumed ? undefined : () => log.apply({ type: "milestone.reached", phase }),
      )
    } catch (err) {
      return this.stepSpawnFailed(purpose, err)
    }
    inbox.push(
      final
        ? `FINAL REVIEW: every task is merged; the Architect reviews the whole requirement and the ADRs before the run is done.`
        : `MILESTONE phase ${phase}: every task of the phase is merged; the Architect reviews it against the requirement.`,
    )
  }

  /**
   * Compares the ADR files with the hashes in the log (at each dispatch, gate run and milestone review,
   * and on resume): a new accepted ADR is recorded, an edited one goes to the machine, which asks the Architect.
   */
  async checkAdrs(): Promise<void> {
    const { root, log } = this.ports
    for (const change of this.ports.adrs.changes(root, log.state())) {
      const r = await log.apply({ type: change.type, adr: change.adr, hash: change.hash })
      if (r.ok && change.type === "adr.recorded") await this.ports.adrs.keep(root, change.adr, change.text)
    }
  }

  private async classifyAdr(adr: string, hash: string, tasks: string[]): Promise<void> {
    const { root, log } = this.ports
    const state = await log.opened()
    const current = this.ports.adrs.textWithHash(root, adr, hash) ?? "(the file changed again since; read it)"
    const cited = (state.graph?.tasks ?? []).filter((t) => tasks.includes(t.id)).map((t) => `- ${t.id} · ${state.tasks.find((r) => r.id === t.id)?.status ?? "pending"} · ${t.title}`)
    const prompt = this.ports.context.pack.adrEdit(adr, this.ports.adrs.kept(root, adr), current, cited)
    const purpose = { kind: "adr" as const, adr, hash, nudged: false }
    await this.supervisor
      .spawn(purpose, { agent: "architect", directory: root, title: `Architect: ${adr} edited`, prompt })
      .catch((err) => this.supervisor.fail(purpose, "", "spawn-failed", { message: (err as Error).message }))
  }

  private async replan(text: string): Promise<void> {
    const { root, log } = this.ports
    const state = await log.opened()
    const prompt = this.ports.context.pack.change(root, text, state.graph, (id) => state.tasks.find((t) => t.id === id)?.status)
    await this.supervisor.endStep("change")
    const purpose = { kind: "change" as const, nudged: false }
    try {
      this.supervisor.architectSessionID = await this.supervisor.spawn(purpose, { agent: "architect", directory: root, title: "Architect: change", prompt })
    } catch (err) {
      await this.stepSpawnFailed(purpose, err)
    }
  }
}
