import { join, relative, resolve, sep } from "node:path"
import type { PluginInput } from "@opencode-ai/plugin"
import type { Command, Consultant } from "./command"
import { Language } from "../agent/language"
import { statusText } from "../cli/status"
import { ContextPack } from "./context-pack"
import type { PlanDelta } from "./delta.schema"
import type { Event } from "./event.schema"
import { Inbox } from "./inbox"
import { Settings } from "./settings"
import { ChildSessions } from "./sessions"
import type { SchedulerState, TaskRuntime } from "./state"
import { Store } from "./store"
import { outstanding } from "./outstanding"
import { KIND_RULES, SCHEMA_VERSION, type TaskNode } from "./task.schema"
import { validateDelta, validateGraph } from "./validate"
import { writeFileAtomic } from "./atomic"
import { Worktrees } from "./worktree"
import { git } from "./git"
import { Gates } from "./gates"
import { MergeQueue } from "./merge"
import { RunReport } from "./run-report"
import { Budget } from "./budget"
import { FinalCheck } from "./final-check"
import { Usage } from "./usage"
import { Adrs } from "./adrs"

type Client = PluginInput["client"]
/** An event before the runtime stamps its time. */
type EventInput = Event extends infer E ? (E extends Event ? Omit<E, "at"> & { at?: string } : never) : never

/** What a session the Scheduler started is for; decided by code when it starts the session. */
type Purpose =
  | { kind: "worker"; taskId: string; role: "executor" | "debugger"; nudged: boolean }
  | { kind: "reviewer"; taskId: string; nudged: boolean }
  | { kind: "architect"; nudged: boolean }
  | { kind: "change"; nudged: boolean }
  | { kind: "milestone"; phase: number; nudged: boolean }
  | { kind: "consult"; taskId: string; agent: Consultant; options: string[]; nudged: boolean }

export type Orchestrator = InstanceType<typeof OrchestratorImpl>

/** Hooks the plugin gives the runtime so the guard knows each session's role and worktree. */
export type SessionHooks = {
  onSessionStarted(sessionID: string, info: { agent: string; directory: string; worktree?: string; taskId?: string }): void
}

class OrchestratorImpl {
  readonly inbox = new Inbox()
  private store?: Store
  private queue: Promise<unknown> = Promise.resolve()
  private purposes = new Map<string, Purpose>()
  private mainSessionID?: string
  private architectSessionID?: string
  private integration?: string
  private timer?: ReturnType<typeof setInterval>
  private inFlight = new Set<string>()
  /** When each task's current worker started, for the wall-clock cap. */
  private taskStarted = new Map<string, number>()

  constructor(
    readonly root: string,
    private client: Client,
    private hooks: SessionHooks,
  ) {}

  private get settings() {
    return Settings.load(this.root)
  }

  private opening?: Promise<Store>

  /** Opens the store once per process (concurrent callers share the opening); a run in progress resumes. */
  private open(): Promise<Store> {
    if (this.store) return Promise.resolve(this.store)
    this.opening ??= (async () => {
      const store = await Store.open(join(this.root, ".air"))
      this.store = store
      for (const w of store.warnings) this.inbox.push(`Warning from the Scheduler's store: ${w}`)
      this.resume(store.state)
      return store
    })()
    this.opening.catch(() => (this.opening = undefined))
    return this.opening
  }

  /**
   * A run that was in progress when the last process died: carry out again what the state still waits
   * on (command ids make that safe), and report the sessions of the old process as lost.
   */
  private resume(state: SchedulerState): void {
    if (state.stage === "idle") return
    if (state.finished) {
      // The process may have died between the last merge and the final build of the integration branch.
      if (state.finished.status === "done" && !FinalCheck.read(this.root))
        void FinalCheck.run(this.root).catch((err) => this.inbox.push(`The final build of the integration branch could not run: ${(err as Error).message}`))
      return
    }
    this.integration = RunReport.runInfo(this.root)?.integration
    this.inbox.push(`Resuming run ${state.runId} from the event log (stage ${state.stage}).`)
    for (const cmd of outstanding(state)) this.execute(cmd)
    void this.resumeReverts(state).catch((err) => this.inbox.push(`Could not finish a revert after the restart: ${(err as Error).message}`, true))
    for (const t of state.tasks) {
      // Sessions of the dead process: lost, not failed — the same step starts again at no cost to the budgets.
      if ((t.status === "running" || t.status === "debugging") && t.sessionId) void this.apply({ type: "session.lost", taskId: t.id, sessionId: t.sessionId })
      if (t.status === "reviewing" && t.reviewSessionId) void this.apply({ type: "session.lost", taskId: t.id, sessionId: t.reviewSessionId })
    }
    // A milestone review whose session died with the old process: review again (it was recorded as started).
    if (state.stage === "milestone" && state.milestone?.reviewing) {
      const phase = state.milestone.phase
      void this.reviewMilestone(phase, true).catch((err) => this.inbox.push(`Could not restart the milestone review: ${(err as Error).message}`, true))
    }
    // The Architect's session died with the old process: a new one is told where the plan stands.
    if (state.stage === "planning" || state.stage === "confirmed")
      void this.restartArchitect(state).catch((err) => this.inbox.push(`Could not restart the Architect: ${(err as Error).message}`, true))
    // The user had not answered the proposal yet: ask again.
    if (state.stage === "confirming") this.inbox.push(this.proposalText(state.planSummary ?? ""), true)
    this.startTimers(state.config?.inactivityMs ?? Settings.load(this.root).inactivityMs)
  }

  /**
   * Opens the run's store now instead of on first use: a run in progress resumes at once (lost sessions
   * dispatched again, outstanding commands carried out). For the TUI on start; headless runs resume when
   * Main first listens.
   */
  async start(): Promise<void> {
    await this.open()
  }

  /** Where a run stands and what it waits for, in one message for the user (the TUI says it on reopening). */
  whereItStands(): string | undefined {
    const state = this.state
    if (!state || state.stage === "idle") return undefined
    if (state.finished) return `AirCoding: run ${state.runId} ended ${state.finished.status}. ${RunReport.progressLine(state)}`
    const waits =
      state.stage === "confirming"
        ? "It waits for you: tell Main yes to confirm the plan, or what to change."
        : state.questions.length
          ? `It waits for your answer: ${state.questions[0]!.text}`
          : state.paused
            ? "It is paused: /air-resume goes on."
            : "It goes on by itself; ask Main for news."
    return `AirCoding: run ${state.runId} resumed. ${RunReport.progressLine(state)} ${waits}`
  }

  get state(): SchedulerState | undefined {
    return this.store?.state
  }

  /** Events are applied one at a time, in order, whatever session or timer produced them. */
  private apply(event: EventInput): Promise<{ ok: true } | { ok: false; reason: string }> {
    const run = async () => {
      const store = await this.open()
      const full = { ...event, at: event.at ?? new Date().toISOString() } as Event
      const result = store.append(full)
      if ("refused" in result) return { ok: false as const, reason: result.refused }
      for (const cmd of result.commands) this.execute(cmd)
      return { ok: true as const }
    }
    const next = this.queue.then(run, run)
    this.queue = next.catch(() => undefined)
    return next
  }

  // ——— Main ———

  async submit(requirement: string, mainSessionID: string): Promise<string> {
    const store = await this.open()
    if (store.state.stage !== "idle" && !store.state.finished)
      return "A run is already in progress in this project. Use air_status to see it, or air_change to change its requirement."
    const settings = this.settings
    this.mainSessionID = mainSessionID
    this.integration = (await git(this.root, ["rev-parse", "--abbrev-ref", "HEAD"])).trim()
    await writeFileAtomic(join(this.root, ".air", "shared", "plan", "requirements.md"), `# Requirement\n\n${requirement}\n`)
    const runId = `run-${Date.now().toString(36)}`
    await writeFileAtomic(
      join(this.root, ".air", "local", "state", "run.json"),
      JSON.stringify({ runId, integration: this.integration, mainSessionID }, null, 2),
    )
    const started = await this.apply({ type: "run.started", runId, requirement, config: Settings.runConfig(settings) })
    if (!started.ok) return `The Scheduler refused the requirement: ${started.reason}`
    await this.spawnArchitect(requirement, settings.autoConfirm)
    this.startTimers(settings.inactivityMs)
    return [
      `Submitted as ${runId}. The Architect is studying the requirement and will propose a plan.`,
      settings.autoConfirm ? "Plans are confirmed automatically in this run (--yes)." : "You will be asked to confirm the plan.",
      "Call air_listen now, and again after each answer, until it says RUN ENDED.",
    ].join(" ")
  }

  async confirm(notes?: string): Promise<string> {
    const r = await this.apply({ type: "plan.confirmed" })
    if (!r.ok) return `Nothing to confirm: ${r.reason}`
    await this.toArchitect(ContextPack.confirmedText(notes), { confirmed: true, notes })
    return "Confirmation recorded. The Architect now writes the task graph and the Scheduler starts the work. Call air_listen."
  }

  async listen(abort?: AbortSignal): Promise<string> {
    const store = await this.open()
    if (store.state.stage === "idle") return "No run in this project yet. Submit a requirement with air_submit."
    const items = await this.inbox.drain(this.settings.listenMs, abort)
    const state = store.state
    const parts = items.length ? items : [`No news yet. ${RunReport.progressLine(state)}`]
    if (state.finished && !items.some((i) => i.startsWith("RUN ENDED"))) parts.push(RunReport.endText(this.root, state))
    return parts.join("\n\n")
  }

  async answer(questionId: string, answer: string): Promise<string> {
    const r = await this.apply({ type: "question.answered", questionId, answer })
    return r.ok ? "Answer recorded; the blocked work resumes. Call air_listen." : `Answer refused: ${r.reason}`
  }

  async change(text: string): Promise<string> {
    const stage = (await this.open()).state.stage
    if (stage === "confirming") return this.revise(text)
    if (stage === "planning")
      return "The Architect has not proposed a plan yet. Tell the user their change will be passed on; call air_listen, and once the proposal arrives, call air_change again with the change."
    const r = await this.apply({ type: "change.requested", text })
    return r.ok
      ? "Change recorded: dispatch is frozen while the Architect prepares a plan delta. Call air_listen."
      : `Change refused: ${r.reason}`
  }

  /** The user's change to a proposed plan: back to the Architect, who proposes again (as many rounds as needed). */
  private async revise(text: string): Promise<string> {
    const r = await this.apply({ type: "plan.revision.requested", text })
    if (!r.ok) return `Change refused: ${r.reason}`
    await this.toArchitect(ContextPack.revisionText(text), { confirmed: false, revision: text })
    return "Change sent to the Architect: it revises the plan and proposes it again. Call air_listen and show the user the revised plan."
  }

  /**
   * The user's answer to a proposal goes to the Architect who made it (its session is watched again), or,
   * when that session is gone (a restart), to a new Architect shown the proposal and the answer.
   */
  private async toArchitect(text: string, answer: Parameters<typeof ContextPack.architectAgain>[2]): Promise<void> {
    const id = this.architectSessionID
    if (id) {
      try {
        ChildSessions.adopt({ sessionID: id, agent: "architect", directory: this.root }, (outcome) => void this.onOutcome(id, outcome))
        this.purposes.set(id, { kind: "architect", nudged: false })
        await ChildSessions.prompt(this.client, id, text)
        return
      } catch (err) {
        this.purposes.delete(id)
        ChildSessions.release(id)
        this.inbox.push(`The Architect's session could not be prompted (${(err as Error).message}); a new Architect takes over.`)
      }
    }
    const state = (await this.open()).state
    this.architectSessionID = await this.spawn(
      { kind: "architect", nudged: false },
      { agent: "architect", directory: this.root, title: "Architect: plan", prompt: ContextPack.architectAgain(state.requirement, state.planSummary ?? "", answer) },
    )
  }

  private async restartArchitect(state: SchedulerState): Promise<void> {
    if (state.stage === "confirmed" && state.planSummary !== null && !state.config?.autoConfirm)
      return this.toArchitect(ContextPack.confirmedText(), { confirmed: true })
    if (state.stage === "planning" && state.planRevision !== null && state.planSummary !== null)
      return this.toArchitect(ContextPack.revisionText(state.planRevision), { confirmed: false, revision: state.planRevision })
    return this.spawnArchitect(state.requirement, state.config?.autoConfirm ?? false)
  }

  /** What Main is given to show the user: the proposal itself and the decisions recorded with it. */
  private proposalText(summary: string): string {
    const adrs = Adrs.list(this.root)
    return [
      "PLAN PROPOSED — show the user this plan (tasks, dependencies, decisions) and ask whether to go ahead. If they agree, call air_confirm; if they want changes, pass their words on with air_change (the Architect revises and proposes again).",
      "",
      summary,
      ...(adrs.length ? ["", "Decisions (ADRs):", ...adrs.map((a) => `- ${a}`)] : []),
    ].join("\n")
  }

  async pause(): Promise<string> {
    const r = await this.apply({ type: "run.paused" })
    return r.ok ? "Run paused: tasks in flight finish, no new task starts until air_resume." : `Cannot pause: ${r.reason}`
  }

  async resumeRun(): Promise<string> {
    const r = await this.apply({ type: "run.resumed" })
    return r.ok ? "Run resumed: the Scheduler dispatches ready tasks again." : `Cannot resume: ${r.reason}`
  }

  async statusText(): Promise<string> {
    const store = await this.open()
    return statusText(this.root, Language.catalogOf(this.settings.language), store.state)
  }

  // ——— Architect ———

  async propose(sessionID: string, summary: string): Promise<string> {
    await writeFileAtomic(join(this.root, ".air", "shared", "plan", "plan.md"), `# Plan\n\n${summary}\n`)
    const r = await this.apply({ type: "plan.proposed", summary })
    if (!r.ok) return `Proposal refused: ${r.reason}`
    this.architectSessionID = sessionID
    if ((await this.open()).state.stage === "confirmed")
      return "Proposal recorded and confirmed automatically (headless run). Now write the task graph with air_plan."
    this.inbox.push(this.proposalText(summary), true)
    return "Proposal sent to the user through Main. End your turn now; you will be prompted again once they confirm or ask for changes."
  }

  async plan(sessionID: string, args: { tasks: unknown[]; requirement?: string }): Promise<string> {
    const store = await this.open()
    if (store.state.stage !== "confirmed")
      return store.state.stage === "confirming" || store.state.stage === "planning"
        ? "Refused: the user has not confirmed a plan yet. Propose with air_propose and wait for the confirmation."
        : `Refused: the run is in stage "${store.state.stage}"; a new graph is not accepted now (use air_delta for changes).`
    const checked = validateGraph({ schemaVersion: SCHEMA_VERSION, requirement: args.requirement, tasks: args.tasks })
    if (!checked.ok) return formatErrors("The task graph was refused; nothing changed.", checked.errors)
    await writeFileAtomic(join(this.root, ".air", "shared", "plan", "task-graph.json"), JSON.stringify(checked.graph, null, 2))
    const r = await this.apply({ type: "graph.accepted", graph: checked.graph })
    if (!r.ok) return `The task graph was refused: ${r.reason}`
    this.architectSessionID = sessionID
    return `Task graph accepted: ${checked.graph.tasks.length} tasks. The Scheduler dispatches them now; your planning work is done — end your turn.`
  }

  async delta(_sessionID: string, delta: PlanDelta): Promise<string> {
    const store = await this.open()
    const graph = store.state.graph
    if (!graph) return "Refused: there is no task graph yet; write one with air_plan."
    const statusOf = (id: string) => store.state.tasks.find((t) => t.id === id)?.status
    const checked = validateDelta(graph, delta, statusOf)
    if (!checked.ok) return formatErrors("The plan delta was refused; nothing changed.", checked.errors)
    const r = await this.apply({ type: "delta.accepted", delta: checked.delta })
    if (!r.ok) return `The plan delta was refused: ${r.reason}`
    const after = (await this.open()).state.graph
    if (after) await writeFileAtomic(join(this.root, ".air", "shared", "plan", "task-graph.json"), JSON.stringify(after, null, 2))
    const reverify = checked.result.impacts.filter((impact) => impact.change === "reverify").map((impact) => impact.id)
    return (
      `Plan delta accepted: ${checked.result.impacts.length} task(s) impacted.` +
      (reverify.length > 0 ? ` The Scheduler added ${reverify.join(", ")} to re-verify merged work next to the change.` : "") +
      " Dispatch resumes."
    )
  }

  async adr(_sessionID: string, args: { id: string; title: string; status: string; body: string; supersedes?: string[] }): Promise<string> {
    const file = join(this.root, ".air", "shared", "plan", "adr", `${args.id}.md`)
    const supersedes = args.supersedes?.length ? `\nSupersedes: ${args.supersedes.join(", ")}\n` : ""
    await writeFileAtomic(file, `# ${args.id}: ${args.title}\n\nStatus: ${args.status}\n${supersedes}\n${args.body.trim()}\n`)
    return `${args.id} written to ${relative(this.root, file)}. Cite it in the tasks' adrRefs.`
  }

  async milestone(sessionID: string, args: { phase: number; verdict: "pass" | "fail"; findings: string[]; fixTasks?: TaskNode[] }): Promise<string> {
    const purpose = this.purposes.get(sessionID)
    if (purpose?.kind !== "milestone") return "Refused: this session was not asked for a milestone review."
    const r = await this.apply({ type: "milestone.reviewed", phase: args.phase, verdict: args.verdict, fixTasks: args.fixTasks })
    if (!r.ok) return `Milestone report refused: ${r.reason}`
    this.purposes.delete(sessionID)
    this.inbox.push(
      `MILESTONE phase ${args.phase}: ${args.verdict}${args.findings.length ? `\n${args.findings.map((f) => `- ${f}`).join("\n")}` : ""}`,
      true,
    )
    return "Milestone report recorded."
  }

  // ——— Workers ———

  async report(sessionID: string, args: { summary: string; blocked?: string }): Promise<string> {
    const purpose = this.purposes.get(sessionID)
    if (purpose?.kind !== "worker") return "Refused: air_report is for the executor or debugger session of a task."
    const r = await this.apply({
      type: "worker.reported",
      taskId: purpose.taskId,
      sessionId: sessionID,
      result: {
        taskId: purpose.taskId,
        role: purpose.role,
        summary: args.summary,
        ...(args.blocked ? { blocked: { reason: args.blocked } } : {}),
      },
    })
    if (!r.ok) return `Report refused: ${r.reason}`
    this.purposes.delete(sessionID)
    return args.blocked
      ? "Recorded as blocked; the Scheduler takes it from here. End your turn."
      : "Report received. The Scheduler now runs the gates itself (commit, diff, build, tests, cppcheck). End your turn."
  }

  async diffForReview(sessionID: string): Promise<string> {
    const purpose = this.purposes.get(sessionID)
    if (purpose?.kind !== "reviewer") return "Refused: air_diff is for the reviewer of a task."
    const rt = this.runtimeOf(purpose.taskId)
    const diff = await Worktrees.diff(this.root, purpose.taskId, this.integrationBranch())
    const evidence = Object.entries(rt?.evidence ?? {})
      .map(([k, v]) => `- ${k}: ${v}`)
      .join("\n")
    return [`Diff of task ${purpose.taskId} against ${this.integrationBranch()}:`, "```diff", diff, "```", "", "Gate evidence:", evidence || "(none)"].join("\n")
  }

  async review(sessionID: string, args: { verdict: "pass" | "fail"; rows: any[]; findings: string[] }): Promise<string> {
    const purpose = this.purposes.get(sessionID)
    if (purpose?.kind !== "reviewer") return "Refused: air_review is for the reviewer of a task."
    const report = { taskId: purpose.taskId, verdict: args.verdict, rows: args.rows, findings: args.findings }
    await writeFileAtomic(join(this.evidenceDir(purpose.taskId), "review.json"), JSON.stringify(report, null, 2))
    const r = await this.apply({ type: "review.reported", taskId: purpose.taskId, report })
    if (!r.ok) return `Review refused: ${r.reason}`
    this.purposes.delete(sessionID)
    return "Review recorded. End your turn."
  }

  async decide(sessionID: string, choice: string, reason: string): Promise<string> {
    const purpose = this.purposes.get(sessionID)
    if (purpose?.kind !== "consult") return "Refused: you were not consulted."
    if (!purpose.options.includes(choice)) return `Refused: "${choice}" is not one of the options: ${purpose.options.join(", ")}.`
    const r = await this.apply({ type: "consult.answered", taskId: purpose.taskId, choice, by: purpose.agent, reason })
    if (!r.ok) return `Decision refused: ${r.reason}`
    this.purposes.delete(sessionID)
    this.inbox.push(`The ${purpose.agent === "architect" ? "Architect" : "scheduler agent"} chose "${choice}" for task ${purpose.taskId}: ${reason}`)
    return "Decision recorded."
  }

  // ——— Command interpreter ———

  private execute(cmd: Command): void {
    if (this.inFlight.has(cmd.id)) return
    this.inFlight.add(cmd.id)
    this.run(cmd)
      .catch((err) => this.inbox.push(`Scheduler error while carrying out ${cmd.type} (${cmd.id}): ${(err as Error).message}`))
      .finally(() => this.inFlight.delete(cmd.id))
  }

  private async run(cmd: Command): Promise<void> {
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
        this.recordTokens([cmd.sessionId])
        this.purposes.delete(cmd.sessionId)
        return ChildSessions.abort(this.client, cmd.sessionId)
      case "notify":
        return this.inbox.push(cmd.text)
      case "ask":
        return this.inbox.push(`QUESTION ${cmd.questionId} — ask the user, then call air_answer with this id:\n${cmd.text}`, true)
      case "consult":
        return this.consult(cmd.taskId, cmd.agent, cmd.question, [...cmd.options])
      case "reviewMilestone":
        return this.reviewMilestone(cmd.phase, false)
      case "replan":
        return this.replan(cmd.text)
      case "revert":
        return this.revert(cmd.taskId, cmd.round)
      case "finish": {
        this.stopTimers()
        const state = (await this.open()).state
        if (cmd.status === "done") await FinalCheck.run(this.root).catch((err) => this.inbox.push(`The final build of the integration branch could not run: ${(err as Error).message}`))
        return this.inbox.push(RunReport.endText(this.root, state), true)
      }
    }
  }

  private integrationBranch(): string {
    return this.integration ?? RunReport.runInfo(this.root)?.integration ?? "main"
  }

  private evidenceDir(taskId: string): string {
    return join(this.root, ".air", "local", "evidence", taskId)
  }

  private task(taskId: string): TaskNode {
    const t = this.state?.graph?.tasks.find((x) => x.id === taskId)
    if (!t) throw new Error(`task ${taskId} is not in the graph`)
    return t
  }

  private runtimeOf(taskId: string): TaskRuntime | undefined {
    return this.state?.tasks.find((t) => t.id === taskId)
  }

  /**
   * Starts a child session of Main's. `record` runs after the session exists and before its first
   * prompt, so the Scheduler knows a session before the session can act (report, call tools).
   */
  private async spawn(
    purpose: Purpose,
    spec: { agent: string; directory: string; worktree?: string; title: string; prompt: string; taskId?: string },
    record?: (sessionID: string) => Promise<unknown>,
  ): Promise<string> {
    const sessionID: string = await ChildSessions.create(
      this.client,
      { parentID: this.mainSessionID, agent: spec.agent, directory: spec.directory, title: spec.title },
      (outcome) => void this.onOutcome(sessionID, outcome),
    )
    this.purposes.set(sessionID, purpose)
    Orchestrators.bindSession(sessionID, this)
    this.hooks.onSessionStarted(sessionID, {
      agent: spec.agent,
      directory: spec.directory,
      worktree: spec.worktree,
      taskId: spec.taskId,
    })
    const recorded = (await record?.(sessionID)) as { ok: boolean; reason?: string } | undefined
    if (recorded && recorded.ok === false) {
      // The state no longer waits for this session (e.g. a command re-issued after a restart): never let it work.
      this.purposes.delete(sessionID)
      await ChildSessions.abort(this.client, sessionID).catch(() => undefined)
      throw new Error(`the ${spec.agent} session was not started: ${recorded.reason}`)
    }
    await ChildSessions.prompt(this.client, sessionID, spec.prompt)
    return sessionID
  }

  private async spawnArchitect(requirement: string, autoConfirm: boolean): Promise<void> {
    this.architectSessionID = await this.spawn(
      { kind: "architect", nudged: false },
      { agent: "architect", directory: this.root, title: "Architect: plan", prompt: ContextPack.architect(requirement, autoConfirm) },
    )
  }

  private async dispatch(taskId: string, role: "executor" | "debugger", attempt: number): Promise<void> {
    try {
      const task = this.task(taskId)
      await this.reverting
      const wt = await Worktrees.create(this.root, taskId, this.integrationBranch())
      if (wt.recovered) this.inbox.push(`Task ${taskId}: ${wt.recovered}.`)
      const prompt = ContextPack.worker(this.root, role, task, this.runtimeOf(taskId), wt, attempt)
      await this.spawn(
        { kind: "worker", taskId, role, nudged: false },
        { agent: role, directory: this.root, worktree: wt.path, title: `${role} ${taskId}`, prompt, taskId },
        (sessionId) => this.apply({ type: "task.dispatched", taskId, role, sessionId, attempt }),
      )
    } catch (err) {
      return this.dispatchFailed(taskId, role, attempt, err)
    }
    this.taskStarted.set(taskId, Date.now())
  }

  private async runGates(taskId: string): Promise<void> {
    const task = this.task(taskId)
    const rt = this.runtimeOf(taskId)
    await this.apply({ type: "gates.started", taskId })
    const attempt = rt?.gateRuns ?? 1
    const report = await Gates.run({
      root: this.root,
      worktree: Worktrees.pathFor(this.root, taskId),
      taskId,
      base: this.integrationBranch(),
      kind: task.kind,
      attempt,
      requires: [...KIND_RULES[task.kind].evidence],
      evidenceDir: join(this.evidenceDir(taskId), `attempt-${attempt}`),
    })
    if (report.passed) {
      const evidence: Record<string, string> = {}
      for (const g of report.gates) if (g.logPath) evidence[g.gate] = g.logPath
      evidence.report = join(this.evidenceDir(taskId), `attempt-${attempt}`, "report.json")
      await this.apply({ type: "gates.passed", taskId, evidence })
    } else {
      await this.apply({
        type: "gates.failed",
        taskId,
        gate: report.failedGate ?? "evidence",
        message: report.message,
        evidencePath: join(this.evidenceDir(taskId), `attempt-${attempt}`, "report.json"),
      })
    }
  }

  private async startReview(taskId: string): Promise<void> {
    const task = this.task(taskId)
    const wt = Worktrees.pathFor(this.root, taskId)
    const run = this.runtimeOf(taskId)?.reviewRuns ?? 1
    try {
      await this.spawn(
        { kind: "reviewer", taskId, nudged: false },
        { agent: "reviewer", directory: this.root, worktree: wt, title: `reviewer ${taskId}`, prompt: ContextPack.reviewer(this.root, task, wt), taskId },
        (sessionId) => this.apply({ type: "review.started", taskId, sessionId }),
      )
    } catch (err) {
      await this.dispatchFailed(taskId, "reviewer", run, err)
    }
  }

  /** A session that could not start goes to the machine, which retries or blocks: the task never waits on nothing. */
  private async dispatchFailed(taskId: string, role: "executor" | "debugger" | "reviewer", run: number, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err)
    const r = await this.apply({ type: "dispatch.failed", taskId, role, run, message })
    if (r.ok) this.inbox.push(`task ${taskId}: the ${role} session could not start (${message}); the Scheduler retries or asks you.`)
    else throw err
  }

  private async merge(taskId: string, round: number): Promise<void> {
    const task = this.task(taskId)
    await this.apply({ type: "merge.started", taskId })
    const result = await MergeQueue.merge({ root: this.root, taskId, round, integration: this.integrationBranch(), title: task.title })
    this.taskStarted.delete(taskId)
    if (result.status === "conflict") {
      await this.apply({ type: "merge.conflicted", taskId, files: result.files })
      return
    }
    await this.apply({ type: "merge.succeeded", taskId, commit: result.commit, tag: result.tag })
    // Only now, with the merge confirmed and tagged, may the branch and worktree go.
    await Worktrees.remove(this.root, taskId, { integration: this.integrationBranch(), round }).catch((err) =>
      this.inbox.push(`Worktree of ${taskId} kept: ${(err as Error).message}`),
    )
  }

  /** Undoes a merged task by its air/done tag (idempotent: a revert already made is recognised by its tag). */
  private revert(taskId: string, round: number): Promise<void> {
    // Work dispatched after a plan delta starts from the integration branch without the reverted change.
    const next = this.reverting.then(() => this.revertNow(taskId, round))
    this.reverting = next.catch(() => undefined)
    return next
  }

  /** Reverts in flight: a dispatch waits for them before it branches off the integration branch. */
  private reverting: Promise<void> = Promise.resolve()

  private async revertNow(taskId: string, round: number): Promise<void> {
    const result = await MergeQueue.revert({ root: this.root, taskId, round, integration: this.integrationBranch() })
    if (result.status === "conflict")
      this.inbox.push(
        `The revert of ${taskId} conflicts with later work in ${result.files.join(", ") || "(files not named)"}: ${result.message}. ` +
          `${this.integrationBranch()} still holds ${taskId}'s change; ask the user to revert it by hand (git revert ${await this.doneCommit(taskId, round)}) or to change the plan.`,
        true,
      )
    else this.inbox.push(`task ${taskId} reverted on ${this.integrationBranch()} (${result.tag})`)
  }

  private async doneCommit(taskId: string, round: number): Promise<string> {
    const tag = Worktrees.doneTag(taskId, round)
    return (await git(this.root, ["rev-parse", "--short", `refs/tags/${tag}^{commit}`]).catch(() => tag)).trim()
  }

  /**
   * Reverts are not in the state's outstanding work (the delta already reset the task): after a restart, a task
   * that is no longer merged but still has its air/done tag is reverted now (a finished revert is recognised).
   */
  private async resumeReverts(state: SchedulerState): Promise<void> {
    for (const t of state.tasks) {
      if (t.status === "merged" || t.status === "merging" || t.status === "merge_queued" || t.merges === 0) continue
      const has = (tag: string) => git(this.root, ["rev-parse", "-q", "--verify", `refs/tags/${tag}`]).then(() => true, () => false)
      if ((await has(Worktrees.doneTag(t.id, t.merges))) && !(await has(Worktrees.revertedTag(t.id, t.merges)))) await this.revert(t.id, t.merges)
    }
  }

  private async consult(taskId: string, agent: Consultant, question: string, options: string[]): Promise<void> {
    await this.spawn(
      { kind: "consult", taskId, agent, options, nudged: false },
      { agent, directory: this.root, title: `consult ${taskId} (${agent})`, prompt: ContextPack.consult(taskId, question, options, agent), taskId },
    ).catch((err) => this.apply({ type: "consult.unanswered", taskId, by: agent, reason: `its session could not start: ${(err as Error).message}` }))
  }

  private async reviewMilestone(phase: number, resumed: boolean): Promise<void> {
    const state = (await this.open()).state
    const tasks = (state.graph?.tasks ?? []).filter((t, i) => t.phase === phase && state.tasks[i]?.status === "merged")
    await this.spawn(
      { kind: "milestone", phase, nudged: false },
      { agent: "architect", directory: this.root, title: `Architect: milestone ${phase}`, prompt: ContextPack.milestone(phase, state.requirement, tasks) },
      // Recorded before the first prompt: after a crash the review is known to have started.
      resumed ? undefined : () => this.apply({ type: "milestone.reached", phase }),
    )
    this.inbox.push(`MILESTONE phase ${phase}: every task of the phase is merged; the Architect reviews it against the requirement.`)
  }

  private async replan(text: string): Promise<void> {
    const state = (await this.open()).state
    const prompt = ContextPack.change(this.root, text, state.graph, (id) => state.tasks.find((t) => t.id === id)?.status)
    this.architectSessionID = await this.spawn(
      { kind: "change", nudged: false },
      { agent: "architect", directory: this.root, title: "Architect: change", prompt },
    )
  }

  /** A child stopped. Silence about its result is never success: nudge once, then fail it. */
  private async onOutcome(sessionID: string, outcome: ChildSessions.Outcome): Promise<void> {
    this.recordTokens([sessionID])
    const purpose = this.purposes.get(sessionID)
    if (!purpose) return ChildSessions.release(sessionID)
    if (outcome.kind !== "idle") {
      this.purposes.delete(sessionID)
      ChildSessions.release(sessionID)
      // An abort the Scheduler did not order (its own aborts stop watching first): the TUI closing, or the
      // user stopping the session. The work is not at fault: the same step starts again, as after a crash.
      if (outcome.kind === "aborted" && (purpose.kind === "worker" || purpose.kind === "reviewer"))
        await this.apply({ type: "session.lost", taskId: purpose.taskId, sessionId: sessionID })
      else if (purpose.kind === "worker")
        await this.apply({ type: "worker.failed", taskId: purpose.taskId, sessionId: sessionID, reason: "error", message: outcome.message })
      else if (purpose.kind === "reviewer") await this.apply({ type: "timer.fired", taskId: purpose.taskId, kind: "inactivity" })
      else if (purpose.kind === "consult") await this.apply({ type: "consult.unanswered", taskId: purpose.taskId, by: purpose.agent, reason: `its session ${outcome.kind === "aborted" ? "was aborted" : "failed"}: ${outcome.message}` })
      else this.inbox.push(`The ${purpose.kind} session ${sessionID} failed: ${outcome.message}`, true)
      return
    }
    if ((purpose.kind === "architect" && this.state?.stage !== "planning" && this.state?.stage !== "confirmed") || (purpose.kind === "change" && !this.state?.frozen)) {
      ChildSessions.release(sessionID)
      return this.purposes.delete(sessionID) as unknown as void
    }
    if (!purpose.nudged) {
      purpose.nudged = true
      const expected = { worker: "air_report", reviewer: "air_review", architect: "air_propose or air_plan", change: "air_delta (until it is accepted)", milestone: "air_milestone", consult: "air_decide" }[purpose.kind]
      await ChildSessions.prompt(this.client, sessionID, `You ended your turn without calling ${expected}. The Scheduler only acts on that tool: call it now.`)
      return
    }
    this.purposes.delete(sessionID)
    ChildSessions.release(sessionID)
    if (purpose.kind === "worker")
      await this.apply({ type: "worker.failed", taskId: purpose.taskId, sessionId: sessionID, reason: "error", message: "the session ended twice without calling air_report" })
    else if (purpose.kind === "reviewer") await this.apply({ type: "timer.fired", taskId: purpose.taskId, kind: "inactivity" })
    else if (purpose.kind === "consult") await this.apply({ type: "consult.unanswered", taskId: purpose.taskId, by: purpose.agent, reason: "the session ended twice without calling air_decide" })
    else if (purpose.kind === "change")
      this.inbox.push(
        "The Architect ended twice without an accepted plan delta: dispatch stays frozen and the run needs attention (air_status). Tell the user.",
        true,
      )
    else this.inbox.push(`The ${purpose.kind} session ended without its report; the run needs attention (air_status).`, true)
  }

  /** Timers are code: inactivity and wall-clock caps arrive at the machine as timer.fired events. */
  private startTimers(inactivityMs: number): void {
    if (this.timer) return
    const every = Math.max(250, Math.min(30_000, Math.floor(inactivityMs / 4)))
    this.timer = setInterval(() => void this.checkTimers(inactivityMs), every)
    this.timer.unref?.()
  }

  private async checkTimers(inactivityMs: number): Promise<void> {
    for (const sessionID of ChildSessions.stalled(inactivityMs)) {
      const purpose = this.purposes.get(sessionID)
      if (!purpose) continue
      this.purposes.delete(sessionID)
      if (purpose.kind === "worker" || purpose.kind === "reviewer") {
        await this.apply({ type: "timer.fired", taskId: purpose.taskId, kind: "inactivity" })
      } else if (purpose.kind === "consult") {
        await ChildSessions.abort(this.client, sessionID)
        await this.apply({ type: "consult.unanswered", taskId: purpose.taskId, by: purpose.agent, reason: `no activity for ${inactivityMs} ms; the session was aborted` })
      } else {
        await ChildSessions.abort(this.client, sessionID)
        this.inbox.push(`The ${purpose.kind} session stalled (no activity for ${inactivityMs} ms) and was aborted.`, true)
      }
    }
    await this.checkBudgets().catch((err) => this.inbox.push(`Budget check failed: ${(err as Error).message}`))
    const cap = this.state?.config?.wallClockMs
    if (!cap) return
    const now = Date.now()
    for (const [taskId, since] of this.taskStarted) {
      if (now - since <= cap) continue
      this.taskStarted.delete(taskId)
      await this.apply({ type: "timer.fired", taskId, kind: "wallclock" })
    }
  }

  /** Tokens each session used, as the engine reported them; on disk, so a restart does not forget them. */
  private sessionTokens?: Usage.SessionTokens

  /** Brings tokens.json up to date with the sessions this process watches (or the ones named, before they are let go). */
  private recordTokens(sessionIDs: Iterable<string> = ChildSessions.ids()): void {
    const known = (this.sessionTokens ??= Usage.readTokens(this.root))
    let changed = false
    for (const sessionID of sessionIDs) {
      const stats = ChildSessions.stats(sessionID)
      if (!stats || known[sessionID]?.tokens === stats.tokens) continue
      known[sessionID] = { at: known[sessionID]?.at ?? new Date().toISOString(), tokens: stats.tokens }
      changed = true
    }
    if (changed) Usage.writeTokens(this.root, known)
  }

  /** A spent budget goes to the machine once; it blocks (the task, or the run) and asks the user. */
  private async checkBudgets(): Promise<void> {
    const state = this.state
    if (!state || (state.stage !== "running" && state.stage !== "milestone") || state.runBudgetSpent) return
    const limits = Settings.budgets(this.settings)
    if (!Object.values(limits).some((v) => v > 0)) return
    this.recordTokens()
    const events = Budget.readEvents(this.root)
    const spent = Budget.spent(this.root, events, Date.now())
    for (const over of Budget.over(limits, spent, events, state.active)) {
      const r = await this.apply({ type: "budget.spent", ...(over.taskId ? { taskId: over.taskId } : {}), kind: over.kind })
      if (r.ok) this.inbox.push(over.taskId ? `task ${over.taskId}: its ${over.kind} budget is spent` : `the run's ${over.kind} budget is spent`, true)
      if (!over.taskId) return
    }
  }

  private stopTimers(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }
}

function formatErrors(head: string, errors: { path: string; taskId?: string; message: string; fix: string }[]): string {
  return [head, ...errors.map((e) => `- ${e.path}${e.taskId ? ` (task ${e.taskId})` : ""}: ${e.message} Fix: ${e.fix}`)].join("\n")
}

/** One orchestrator per project root, shared by every engine instance in the process. */
export namespace Orchestrators {
  const byRoot = new Map<string, OrchestratorImpl>()
  const bySession = new Map<string, OrchestratorImpl>()
  const clients = new Map<string, Client>()
  let hooks: SessionHooks = { onSessionStarted() {} }

  export function configure(h: SessionHooks): void {
    hooks = h
  }

  /** Called by each engine instance at start-up: remembers a client able to reach that directory. */
  export function attach(directory: string, client: Client): void {
    if (!clients.has(directory)) clients.set(directory, client)
  }

  /** A task worktree lives under <root>/.air/local/worktrees/<id>: its project is the root above. */
  export function projectRoot(directory: string): string {
    const marker = `${sep}.air${sep}local${sep}worktrees${sep}`
    const abs = resolve(directory)
    const at = abs.indexOf(marker)
    return at >= 0 ? abs.slice(0, at) : abs
  }

  export function forRoot(directory: string): OrchestratorImpl {
    const root = projectRoot(directory)
    let o = byRoot.get(root)
    if (!o) {
      const client = clients.get(root) ?? clients.get(directory) ?? [...clients.values()][0]
      if (!client) throw new Error(`AirCoding is not attached to ${root}`)
      o = new OrchestratorImpl(root, client, hooks)
      byRoot.set(root, o)
    }
    return o
  }

  export function forSession(sessionID: string): OrchestratorImpl | undefined {
    return bySession.get(sessionID)
  }

  export function bindSession(sessionID: string, o: OrchestratorImpl): void {
    bySession.set(sessionID, o)
  }
}
