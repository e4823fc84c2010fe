import { join } from "node:path"
import type { Command, Consultant } from "../scheduler/command"
import { ContextPack } from "../scheduler/context-pack"
import { RunReport } from "../scheduler/run-report"
import type { TaskRuntime } from "../scheduler/state"
import { KIND_RULES, type TaskNode } from "../scheduler/task.schema"
import { Worktrees } from "../scheduler/worktree"
import type { Clock } from "./clock"
import type { Ports } from "./ports"
import type { Supervisor } from "./supervisor"

/**
 * Carries out the machine's commands. Each command's outcome goes back to the machine as an event; the
 * interpreter decides nothing itself. A command id already in flight is not carried out twice.
 */
export class Interpreter {
  private inFlight = new Set<string>()
  /** Reverts in flight: a dispatch waits for them before it branches off the integration branch. */
  private reverting: Promise<void> = Promise.resolve()

  constructor(
    private ports: Ports,
    private supervisor: Supervisor,
    private clock: Clock,
    /** The branch the run integrates into (from the run's start). */
    readonly integration: () => string,
  ) {}

  /** Starts the command unless the same command is already being carried out; errors go to the inbox. */
  execute(cmd: Command): void {
    if (this.inFlight.has(cmd.id)) return
    this.inFlight.add(cmd.id)
    this.run(cmd)
      .catch((err) => this.ports.inbox.push(`Scheduler error while carrying out ${cmd.type} (${cmd.id}): ${(err as Error).message}`))
      .finally(() => this.inFlight.delete(cmd.id))
  }

  /** The same, awaited: for tests and for callers that must know the command is over. */
  async run(cmd: Command): Promise<void> {
    const { inbox } = this.ports
    switch (cmd.type) {
      case "dispatch":
        return this.dispatch(cmd.taskId, cmd.role, cmd.attempt)
      case "runGates":
        return this.runGates(cmd.taskId)
      case "review":
        return this.startReview(cmd.taskId)
      case "merge":
        return this.merge(cmd.taskId, cmd.round)
      case "abort":
        return this.supervisor.abort(cmd.sessionId)
      case "notify":
        return inbox.push(cmd.text)
      case "ask":
        return inbox.push(`QUESTION ${cmd.questionId} — ask the user, then call air_answer with this id:\n${cmd.text}`, true)
      case "consult":
        return this.consult(cmd.taskId, cmd.agent, cmd.question, [...cmd.options])
      case "reviewMilestone":
        return this.reviewMilestone(cmd.phase, false)
      case "replan":
        return this.replan(cmd.text)
      case "revert":
        return this.revert(cmd.taskId, cmd.round)
      case "finish": {
        this.clock.stopTimers()
        const state = await this.ports.log.opened()
        if (cmd.status === "done")
          await this.ports.finalCheck.run(this.ports.root).catch((err) => inbox.push(`The final build of the integration branch could not run: ${(err as Error).message}`))
        return inbox.push(RunReport.endText(this.ports.root, state), true)
      }
    }
  }

  evidenceDir(taskId: string): string {
    return join(this.ports.root, ".air", "local", "evidence", taskId)
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

  async spawnArchitect(requirement: string, autoConfirm: boolean): Promise<void> {
    this.supervisor.architectSessionID = await this.supervisor.spawn(
      { kind: "architect", nudged: false },
      { agent: "architect", directory: this.ports.root, title: "Architect: plan", prompt: ContextPack.architect(requirement, autoConfirm) },
    )
  }

  private async dispatch(taskId: string, role: "executor" | "debugger", attempt: number): Promise<void> {
    const { root, worktrees, inbox, log } = this.ports
    try {
      const task = this.task(taskId)
      await this.reverting
      const wt = await worktrees.create(root, taskId, this.integration())
      if (wt.recovered) inbox.push(`Task ${taskId}: ${wt.recovered}.`)
      const prompt = ContextPack.worker(root, role, task, this.runtimeOf(taskId), wt, attempt)
      await this.supervisor.spawn(
        { kind: "worker", taskId, role, nudged: false },
        { agent: role, directory: root, worktree: wt.path, title: `${role} ${taskId}`, prompt, taskId },
        (sessionId) => log.apply({ type: "task.dispatched", taskId, role, sessionId, attempt }),
      )
    } catch (err) {
      return this.dispatchFailed(taskId, role, attempt, err)
    }
    this.clock.taskDispatched(taskId)
  }

  private async runGates(taskId: string): Promise<void> {
    const { root, worktrees, log } = this.ports
    const task = this.task(taskId)
    const rt = this.runtimeOf(taskId)
    await log.apply({ type: "gates.started", taskId })
    const attempt = rt?.gateRuns ?? 1
    const report = await this.ports.gates.run({
      root,
      worktree: worktrees.pathFor(root, taskId),
      taskId,
      base: this.integration(),
      kind: task.kind,
      attempt,
      requires: [...KIND_RULES[task.kind].evidence],
      evidenceDir: join(this.evidenceDir(taskId), `attempt-${attempt}`),
    })
    if (report.passed) {
      const evidence: Record<string, string> = {}
      for (const g of report.gates) if (g.logPath) evidence[g.gate] = g.logPath
      evidence.report = join(this.evidenceDir(taskId), `attempt-${attempt}`, "report.json")
      await log.apply({ type: "gates.passed", taskId, evidence })
    } else {
      await log.apply({
        type: "gates.failed",
        taskId,
        gate: report.failedGate ?? "evidence",
        message: report.message,
        evidencePath: join(this.evidenceDir(taskId), `attempt-${attempt}`, "report.json"),
      })
    }
  }

  private async startReview(taskId: string): Promise<void> {
    const { root, worktrees, log } = this.ports
    const task = this.task(taskId)
    const wt = worktrees.pathFor(root, taskId)
    const run = this.runtimeOf(taskId)?.reviewRuns ?? 1
    try {
      await this.supervisor.spawn(
        { kind: "reviewer", taskId, nudged: false },
        { agent: "reviewer", directory: root, worktree: wt, title: `reviewer ${taskId}`, prompt: ContextPack.reviewer(root, task, wt), taskId },
        (sessionId) => log.apply({ type: "review.started", taskId, sessionId }),
      )
    } catch (err) {
      await this.dispatchFailed(taskId, "reviewer", run, err)
    }
  }

  /** A session that could not start goes to the machine, which retries or blocks: the task never waits on nothing. */
  private async dispatchFailed(taskId: string, role: "executor" | "debugger" | "reviewer", run: number, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err)
    const r = await this.ports.log.apply({ type: "dispatch.failed", taskId, role, run, message })
    if (r.ok) this.ports.inbox.push(`task ${taskId}: the ${role} session could not start (${message}); the Scheduler retries or asks you.`)
    else throw err
  }

  private async merge(taskId: string, round: number): Promise<void> {
    const { root, log, inbox } = this.ports
    const task = this.task(taskId)
    await log.apply({ type: "merge.started", taskId })
    const result = await this.ports.merge.merge({ root, taskId, round, integration: this.integration(), title: task.title })
    this.clock.taskSettled(taskId)
    if (result.status === "conflict") {
      await log.apply({ type: "merge.conflicted", taskId, files: result.files })
      return
    }
    await log.apply({ type: "merge.succeeded", taskId, commit: result.commit, tag: result.tag })
    // Only now, with the merge confirmed and tagged, may the branch and worktree go.
    await this.ports.worktrees
      .remove(root, taskId, { integration: this.integration(), round })
      .catch((err) => inbox.push(`Worktree of ${taskId} kept: ${(err as Error).message}`))
  }

  /** Undoes a merged task by its air/done tag (idempotent: a revert already made is recognised by its tag). */
  revert(taskId: string, round: number): Promise<void> {
    // Work dispatched after a plan delta starts from the integration branch without the reverted change.
    const next = this.reverting.then(() => this.revertNow(taskId, round))
    this.reverting = next.catch(() => undefined)
    return next
  }

  private async revertNow(taskId: string, round: number): Promise<void> {
    const { root, inbox } = this.ports
    const result = await this.ports.merge.revert({ root, taskId, round, integration: this.integration() })
    if (result.status === "conflict")
      inbox.push(
        `The revert of ${taskId} conflicts with later work in ${result.files.join(", ") || "(files not named)"}: ${result.message}. ` +
          `${this.integration()} still holds ${taskId}'s change; ask the user to revert it by hand (git revert ${await this.doneCommit(taskId, round)}) or to change the plan.`,
        true,
      )
    else inbox.push(`task ${taskId} reverted on ${this.integration()} (${result.tag})`)
  }

  private async doneCommit(taskId: string, round: number): Promise<string> {
    const tag = Worktrees.doneTag(taskId, round)
    return (await this.ports.git(this.ports.root, ["rev-parse", "--short", `refs/tags/${tag}^{commit}`]).catch(() => tag)).trim()
  }

  private async consult(taskId: string, agent: Consultant, question: string, options: string[]): Promise<void> {
    const { root, log } = this.ports
    await this.supervisor
      .spawn(
        { kind: "consult", taskId, agent, options, nudged: false },
        { agent, directory: root, title: `consult ${taskId} (${agent})`, prompt: ContextPack.consult(taskId, question, options, agent), taskId },
      )
      .catch((err) => log.apply({ type: "consult.unanswered", taskId, by: agent, reason: `its session could not start: ${(err as Error).message}` }))
  }

  async reviewMilestone(phase: number, resumed: boolean): Promise<void> {
    const { root, log, inbox } = this.ports
    const state = await log.opened()
    const tasks = (state.graph?.tasks ?? []).filter((t, i) => t.phase === phase && state.tasks[i]?.status === "merged")
    await this.supervisor.spawn(
      { kind: "milestone", phase, nudged: false },
      { agent: "architect", directory: root, title: `Architect: milestone ${phase}`, prompt: ContextPack.milestone(phase, state.requirement, tasks) },
      // Recorded before the first prompt: after a crash the review is known to have started.
      resumed ? undefined : () => log.apply({ type: "milestone.reached", phase }),
    )
    inbox.push(`MILESTONE phase ${phase}: every task of the phase is merged; the Architect reviews it against the requirement.`)
  }

  private async replan(text: string): Promise<void> {
    const { root, log } = this.ports
    const state = await log.opened()
    const prompt = ContextPack.change(root, text, state.graph, (id) => state.tasks.find((t) => t.id === id)?.status)
    this.supervisor.architectSessionID = await this.supervisor.spawn({ kind: "change", nudged: false }, { agent: "architect", directory: root, title: "Architect: change", prompt })
  }
}
