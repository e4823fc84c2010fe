import { DeployRules } from "./deploy/rules"
import { join, relative, resolve, sep } from "node:path"
import type { PluginInput } from "@opencode-ai/plugin"
import { Language } from "../../agent/language"
import type { PlanDelta } from "../core/delta.schema"
import type { Event } from "../core/event.schema"
import type { Checklist, DebugReport, PlanIssue } from "../core/report.schema"
import { DebugSteps } from "../../agent/debug-steps"
import { Evidence } from "../../agent/evidence"
import { Vocabulary } from "../../agent/vocabulary"
import type { Looks } from "../../agent/looks"
import { WorkerLook } from "./looks/worker-look"
import { Inbox } from "./sessions/inbox"
import { Settings } from "./settings"
import { Supervisor } from "./sessions/supervisor"
import { Clock } from "./sessions/clock"
import { Interpreter } from "./interpreter"
import { resume } from "./recovery"
import { realPorts, traceparentOf, type Applied, type EventInput } from "./ports"
import { interpreterPorts, type InterpreterPorts } from "./interpreter-ports"
import type { SchedulerState } from "../core/state"
import { sweepStaleProgress } from "./gates/progress"
import { Store } from "./store/store"
import { SCHEMA_VERSION, type TaskGraph, type TaskNode } from "../core/task.schema"
import { boundErrors, validateDelta, validateGraph } from "../core/validate"
import { PlanPaths } from "./plan-paths"
import { Watchdog } from "./watchdog"
import { programProblems } from "./gates/registry"
import { Preflight } from "./preflight"
import { writeFileAtomic } from "./store/atomic"
import { Worktrees } from "./git/worktree"
import { git } from "./git/git"
import { Toolchain } from "./toolchain/index"
import { RunReport } from "./report/run-report"
import { MainWake } from "./sessions/main-wake"
import { ContextPack } from "./sessions/context-pack"
import { PlanFiles, Proposal } from "./sessions/proposal"
import { Adrs } from "./adrs"
import { HouseRules } from "./house/rules"
import { ModuleDirs } from "./house/module-dirs"
import { LibraryUse } from "./house/library-use"
import { UiSkill } from "./sessions/ui-skill"
import { AirPaths } from "../core/air-paths"

type Client = PluginInput["client"]

export type Orchestrator = InstanceType<typeof OrchestratorImpl>

/** Hooks the plugin gives the runtime so the guard knows each session's role and worktree. */
type SessionHooks = {
  onSessionStarted(sessionID: string, info: { agent: string; directory: string; worktree?: string; taskId?: string }): void
}

/** How long a second air_listen in one turn of Main's, in the TUI, waits for news that needs the user. */
const LISTEN_REPEAT_WAIT_MS = 10_000

class OrchestratorImpl {
  readonly inbox = new Inbox()
  private store?: Store
  private queue: Promise<unknown> = Promise.resolve()
  private integration?: string
  private readonly ports: InterpreterPorts
  private readonly supervisor: Supervisor
  private readonly clock: Clock
  private readonly interpreter: Interpreter
  /** The TUI: Main is woken with the news instead of waiting in air_listen (see MainWake). */
  private readonly interactive = process.env.AIRCODING_INTERACTIVE === "1"
  /** In the TUI: air_listen already answered in Main's current turn (see `listen`); its turn's end clears it. */
  private listenedThisTurn = false
  /** The Main session that last used a coordinator tool: the one the user talks to. */
  private mainSession?: string
  readonly wake: MainWake

  constructor(
    readonly root: string,
    client: Client,
    hooks: SessionHooks,
  ) {
    const log = { apply: (e: EventInput) => this.apply(e), state: () => this.store?.state, opened: async () => (await this.open()).state }
    this.ports = interpreterPorts(realPorts(root, client, this.inbox, log, (id, info) => hooks.onSessionStarted(id, info)))
    this.clock = new Clock(this.ports, () => this.supervisor)
    this.supervisor = new Supervisor(this.ports, (id) => Orchestrators.bindSession(id, this), (ids) => this.clock.reportUsage(ids))
    this.interpreter = new Interpreter(this.ports, this.supervisor, this.clock, () => this.integrationBranch())
    this.wake = new MainWake(
      () => this.mainSession,
      () => this.inbox.take(),
      async (id, text) => {
        // Synthetic: Main reads the news, the TUI does not show it as if the user had typed it (Main relays it).
        // Main's turn on the news hangs under the run's span in the trace (the header: TraceSpans.traceparent).
        const traceparent = traceparentOf(this.store?.state, id)
        const res = await client.session.promptAsync({
          path: { id },
          query: { directory: root },
          body: { agent: "main", parts: [{ type: "text", text, synthetic: true }] },
          ...(traceparent ? { headers: { traceparent } } : {}),
        })
        // The client answers an HTTP error with `error`, not a throw: the wake must know the news did not go.
        if (res.error) throw new Error(`the engine refused the wake of ${id}: ${JSON.stringify(res.error)}`)
      },
    )
    if (this.interactive) this.inbox.onAttention = () => this.wake.poke()
  }

  /** A session started or ended a turn (the engine's session.status and session.idle events). */
  sessionStatus(sessionID: string, busy: boolean): void {
    if (!busy && sessionID === this.mainSession) this.listenedThisTurn = false
    this.wake.status(sessionID, busy)
  }

  /** Main's session, as the tools see it (the TUI may open a new one at any time). */
  noteMain(sessionID: string | undefined): void {
    if (!sessionID) return
    if (sessionID !== this.mainSession) this.listenedThisTurn = false
    this.mainSession = sessionID
    this.wake.status(sessionID, true)
  }

  private get settings() {
    return Settings.load(this.root)
  }

  private opening?: Promise<Store>

  /** Opens the store once per process (concurrent callers share the opening); a run in progress resumes. */
  private open(): Promise<Store> {
    if (this.store) return Promise.resolve(this.store)
    this.opening ??= (async () => {
      // The launcher says how to resume this run should this process die (`aircoding run … --resume`, the TUI's
      // reopen command); the views print it for a run whose process is gone (src/read/run-liveness.ts).
      const restart = process.env.AIRCODING_RESUME_COMMAND
      const store = await Store.open(AirPaths.air(this.root), { runHolder: restart ? { restart } : {} })
      this.store = store
      // Holding the store, this process is the run's only one: progress left by a dead one is nobody's now.
      sweepStaleProgress(this.root, { unnamed: true })
      for (const w of store.warnings) this.inbox.push(`Warning from the Scheduler's store: ${w}`)
      // The plan's files derive from the log: a crash before one was written leaves it to be written now.
      this.syncPlanFiles(store.state)
      resume(this.ports, this.interpreter, this.clock, store.state)
      // Behind every rule, the watchdog: a run with nothing in flight, nothing asked and work left is asked about.
      Watchdog.start(this.ports, () => this.interpreter.inFlightCount())
      return store
    })()
    this.opening.catch(() => (this.opening = undefined))
    return this.opening
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
    const lang = Language.catalogOf(this.settings.language)
    const say = (key: Language.Key, params: Record<string, string> = {}) => Language.t(lang, key, params)
    const progress = RunReport.progressLine(state, lang)
    if (state.finished) return say("tui.reopen.ended", { runId: state.runId ?? "", status: say(`status.${state.finished.status}` as Language.Key), progress })
    const waits =
      state.stage === "confirming"
        ? say("tui.reopen.confirm")
        : state.questions.length
          ? say("tui.reopen.question", { question: state.questions[0]!.text })
          : state.paused
            ? say("tui.reopen.paused")
            : say("tui.reopen.running")
    return say("tui.reopen.resumed", { runId: state.runId ?? "", progress, waits })
  }

  get state(): SchedulerState | undefined {
    return this.store?.state
  }

  /** Events are applied one at a time, in order, whatever session or timer produced them. */
  private apply(event: EventInput): Promise<Applied> {
    const run = async () => {
      const store = await this.open()
      const full = { ...event, at: event.at ?? new Date().toISOString() } as Event
      const result = store.append(full)
      if ("refused" in result) return { ok: false as const, reason: result.refused }
      // Written after the event is stored, never before: the log is the truth the files show.
      if (PlanFiles.EVENTS.has(full.type)) this.syncPlanFiles(store.state)
      for (const cmd of result.commands) this.interpreter.execute(cmd)
      return { ok: true as const }
    }
    const next = this.queue.then(run, run)
    this.queue = next.catch(() => undefined)
    return next
  }

  /** A checked compaction of Main's or the Architect's conversation (sessions/compaction-guard.ts), for the log. */
  async compacted(event: Extract<EventInput, { type: "context.compacted" }>): Promise<Applied> {
    return this.apply(event)
  }

  private syncPlanFiles(state: SchedulerState): void {
    try {
      PlanFiles.sync(this.root, state)
    } catch (err) {
      this.inbox.push(`Could not write the plan's files under ${AirPaths.PLAN}: ${(err as Error).message}; the event log has the plan.`)
    }
  }

  // ——— Main ———

  async submit(requirement: string, mainSessionID: string): Promise<string> {
    const store = await this.open()
    if (store.state.stage !== "idle" && !store.state.finished)
      return "A run is already in progress in this project. Use air_status to see it, or air_change to change its requirement."
    // Refused at the door (not a repository, no commit, detached HEAD, dirty tracked files, bad config): nothing starts.
    const refused = await Preflight.refusal(this.root)
    if (refused) return refused
    for (const note of await Preflight.submoduleNotes(this.root)) this.inbox.push(`Before the work starts: ${note}`, true)
    const settings = this.settings
    this.supervisor.mainSessionID = mainSessionID
    this.integration = (await git(this.root, ["rev-parse", "--abbrev-ref", "HEAD"])).trim()
    const runId = `run-${Date.now().toString(36)}`
    await writeFileAtomic(
      AirPaths.state(this.root, "run.json"),
      JSON.stringify({ runId, integration: this.integration, mainSessionID }, null, 2),
    )
    const started = await this.apply({ type: "run.started", runId, requirement, config: { ...Settings.runConfig(settings), baseline: await this.wantsBaseline(), ...DeployRules.runConfig(this.root), ...(await this.sessionCost(settings)) }, integration: this.integration })
    if (!started.ok) return `The Scheduler refused the requirement: ${started.reason}`
    // The machine's plan command starts the Architect.
    this.clock.start(settings.inactivityMs)
    return [
      `Submitted as ${runId}. The Architect is studying the requirement and will propose a plan.`,
      settings.autoConfirm ? "Plans are confirmed automatically in this run (--yes)." : "You will be asked to confirm the plan.",
      this.interactive
        ? "AirCoding writes to you in this chat when the plan is ready: tell the user the work has started and end your turn."
        : "Call air_listen now, and again after each answer, until it says RUN ENDED.",
    ].join(" ")
  }

  /** The first estimate of a session's cost (the context it starts with times the model's input price), for the money budget. */
  private async sessionCost(settings: Settings.Settings): Promise<{ sessionCostUsd?: number }> {
    const price = await this.ports.sessions.inputPrice?.().catch(() => null)
    return price ? { sessionCostUsd: (price * settings.costEstimateTokens) / 1_000_000 } : {}
  }

  /** What the user did in the TUI's dialogs, so Main never relays a proposal or question already answered there. */
  private readonly doneInTui = new Set<string>()

  heardFromTui(
    request: { verb: "confirm" } | { verb: "change"; text: string } | { verb: "answer"; questionId: string; answer: string } | { verb: "pause" } | { verb: "resume" },
  ): void {
    if (request.verb === "confirm" || (request.verb === "change" && this.store?.state.stage === "planning")) {
      this.inbox.drop((text) => text.startsWith("PLAN PROPOSED"))
      this.doneInTui.add("plan")
      this.inbox.push(
        request.verb === "confirm"
          ? "The user confirmed the plan in AirCoding's dialog (not in this chat): the Architect writes the task graph and the work starts. Do not call air_confirm."
          : `The user asked for changes to the plan in AirCoding's dialog: "${request.text}". The Architect revises it; do not call air_change for it.`,
        // With attention: Main's chat must say now what the dialog did; queued quietly, it waited for the next
        // wake (the run's end, a minute later) and the chat sat on Main's last line meanwhile (issue 39 item 2).
        true,
      )
    } else if (request.verb === "answer") {
      this.inbox.drop((text) => text.startsWith(`QUESTION ${request.questionId} `))
      this.doneInTui.add(`question:${request.questionId}`)
      this.inbox.push(`The user answered ${request.questionId} in AirCoding's dialog: "${request.answer}". Do not call air_answer for it.`, true)
    }
  }

  async confirm(notes?: string): Promise<string> {
    const r = await this.apply({ type: "plan.confirmed" })
    if (!r.ok && this.doneInTui.has("plan"))
      return "The user already confirmed the plan in AirCoding's dialog; nothing to do. Tell them the work is under way and end your turn."
    if (!r.ok) return `Nothing to confirm: ${r.reason}`
    const state = (await this.open()).state
    await this.supervisor.toArchitect(ContextPack.confirmedText(notes), ContextPack.architectAgain(state.requirement, state.planSummary ?? "", { confirmed: true, notes }))
    return "Confirmation recorded. The Architect now writes the task graph and the Scheduler starts the work. Call air_listen."
  }

  async listen(abort?: AbortSignal): Promise<string> {
    const store = await this.open()
    if (store.state.stage === "idle") return "No run in this project yet. Submit a requirement with air_submit."
    // The state as the call found it: a run whose tasks are done is "finished" before its final check ends;
    // the news of the end (RUN ENDED) is told only once the check is in (RunReport.endNews).
    const state = store.state
    if (this.interactive) {
      // In the TUI air_listen answers at once and Main ends its turn (news wakes it in a new one). A model that
      // calls it again in the same turn loops on instant answers (measured: a scripted Main made 8 requests a
      // second and kept the engine at 1.7 cores): that call waits, bounded, for news that needs the user.
      const items = this.listenedThisTurn ? await this.inbox.drain(LISTEN_REPEAT_WAIT_MS, abort) : this.inbox.take()
      this.listenedThisTurn = true
      items.push(...RunReport.endNews(this.root, state, items))
      return [
        ...(items.length ? items : [`No news that needs the user now. ${RunReport.progressLine(state)}`]),
        "End your turn now: AirCoding writes to you in this chat when the run needs the user, and the user can type at any time.",
      ].join("\n\n")
    }
    const items = await this.inbox.drain(this.settings.listenMs, abort)
    const parts = items.length ? items : [`No news yet. ${RunReport.progressLine(state)}`]
    parts.push(...RunReport.endNews(this.root, state, items))
    return parts.join("\n\n")
  }

  async answer(questionId: string, answer: string): Promise<string> {
    const r = await this.apply({ type: "question.answered", questionId, answer })
    if (!r.ok && this.doneInTui.has(`question:${questionId}`))
      return `The user already answered ${questionId} in AirCoding's dialog; nothing to do. End your turn.`
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
  /**
   * A baseline runs when the toolchain has something to build or test (detected or toolchain.json); a file
   * that cannot be read asks for one all the same: the baseline's own error then reaches the user.
   */
  private async wantsBaseline(): Promise<boolean> {
    try {
      const { rules } = await Toolchain.load(this.root)
      return rules.build.length > 0 || rules.test.length > 0
    } catch {
      return true
    }
  }

  private async revise(text: string): Promise<string> {
    const r = await this.apply({ type: "plan.revision.requested", text })
    if (!r.ok) return `Change refused: ${r.reason}`
    const state = (await this.open()).state
    await this.supervisor.toArchitect(ContextPack.revisionText(text), ContextPack.architectAgain(state.requirement, state.planSummary ?? "", { confirmed: false, revision: text }))
    return "Change sent to the Architect: it revises the plan and proposes it again. Call air_listen and show the user the revised plan."
  }

  async pause(): Promise<string> {
    const r = await this.apply({ type: "run.paused" })
    return r.ok ? "Run paused: tasks in flight finish, no new task starts until air_resume." : `Cannot pause: ${r.reason}`
  }

  async resumeRun(): Promise<string> {
    const r = await this.apply({ type: "run.resumed" })
    return r.ok ? "Run resumed: the Scheduler dispatches ready tasks again." : `Cannot resume: ${r.reason}`
  }

  /** What air_status words (src/read/status-text.ts, called by the tool: the runtime does not import the read model). */
  async statusFacts(): Promise<{ state: SchedulerState; lang: Language.Catalog }> {
    const store = await this.open()
    return { state: store.state, lang: Language.catalogOf(this.settings.language) }
  }

  // ——— Architect ———

  async propose(sessionID: string, summary: string, tasks?: unknown[]): Promise<string> {
    // The draft tasks are checked as a graph is: the person confirms tasks that can be written as they read.
    let graph: TaskGraph | undefined
    if (tasks?.length) {
      const checked = validateGraph({ schemaVersion: SCHEMA_VERSION, tasks })
      if (!checked.ok) return formatErrors("The proposal's tasks were refused; nothing changed.", checked.errors)
      graph = checked.graph
    }
    const r = await this.apply({ type: "plan.proposed", summary, ...(graph ? { graph } : {}) })
    if (!r.ok) return `Proposal refused: ${r.reason}`
    this.supervisor.architectSessionID = sessionID
    if ((await this.open()).state.stage === "confirmed")
      return "Proposal recorded and confirmed automatically (headless run). Now write the task graph with air_plan."
    this.inbox.push(Proposal.text(this.root, summary), true)
    return "Proposal sent to the user through Main. End your turn now; you will be prompted again once they confirm or ask for changes."
  }

  async plan(sessionID: string, args: { tasks: unknown[]; requirement?: string; deployable?: boolean; deployPhases?: number[] }): Promise<string> {
    const store = await this.open()
    if (store.state.stage !== "confirmed")
      return store.state.stage === "confirming" || store.state.stage === "planning"
        ? "Refused: the user has not confirmed a plan yet. Propose with air_propose and wait for the confirmation."
        : `Refused: the run is in stage "${store.state.stage}"; a new graph is not accepted now (use air_delta for changes).`
    // The house rules' library, when the integration branch does not use it yet: the plan must integrate it first.
    const house = HouseRules.load(this.root)
    const missing = await LibraryUse.missing(this.root, this.integrationBranch(), house)
    // Tests at every module boundary, judged against the directories the integration branch already has.
    const boundaries = await ModuleDirs.rules(this.root, this.integrationBranch(), house)
    const checked = validateGraph(
      { schemaVersion: SCHEMA_VERSION, requirement: args.requirement, tasks: args.tasks, ...(args.deployable !== undefined ? { deployable: args.deployable } : {}), ...(args.deployPhases !== undefined ? { deployPhases: args.deployPhases } : {}) },
      { ...(missing ? { integrationFirst: missing } : {}), ...(boundaries ? { boundaries } : {}) },
    )
    if (!checked.ok) return formatErrors("The task graph was refused; nothing changed.", checked.errors)
    const outside = [...PlanPaths.writeSetProblems(this.root, checked.graph.tasks, (i) => `tasks[${i}]`), ...programProblems(checked.graph.tasks)]
    if (outside.length > 0) return formatErrors("The task graph was refused; nothing changed.", boundErrors(outside))
    const r = await this.apply({ type: "graph.accepted", graph: checked.graph })
    if (!r.ok) return `The task graph was refused: ${r.reason}`
    this.supervisor.architectSessionID = sessionID
    return `Task graph accepted: ${checked.graph.tasks.length} tasks. The Scheduler dispatches them now; your planning work is done — end your turn.`
  }

  async delta(sessionID: string, delta: PlanDelta): Promise<string> {
    const store = await this.open()
    const graph = store.state.graph
    if (!graph) return "Refused: there is no task graph yet; write one with air_plan."
    const statusOf = (id: string) => store.state.tasks.find((t) => t.id === id)?.status
    const boundaries = await ModuleDirs.rules(this.root, this.integrationBranch(), HouseRules.load(this.root))
    const checked = validateDelta(graph, delta, statusOf, boundaries ? { boundaries } : {})
    if (!checked.ok) return formatErrors("The plan delta was refused; nothing changed.", checked.errors)
    const outside = [...PlanPaths.deltaProblems(this.root, checked.delta), ...programProblems(checked.delta.add)]
    if (outside.length > 0) return formatErrors("The plan delta was refused; nothing changed.", boundErrors(outside))
    // The Architect consulted on a task (a worker's plan issue, a reviewer's block-release) answers with this delta.
    const purpose = this.supervisor.purposes.get(sessionID)
    const consulted = purpose?.kind === "consult" && purpose.agent === "architect" ? purpose.taskId : null
    const r = await this.apply(consulted ? { type: "consult.replanned", taskId: consulted, delta: checked.delta } : { type: "delta.accepted", delta: checked.delta })
    if (r.ok && consulted) {
      this.supervisor.purposes.delete(sessionID)
      this.inbox.push(`The Architect answered task ${consulted} with a plan delta: ${checked.delta.add.length} added, ${checked.delta.modify.length} modified, ${checked.delta.remove.length} removed.`)
    }
    if (!r.ok) return `The plan delta was refused: ${r.reason}`
    const reverify = checked.result.impacts.filter((impact) => impact.change === "reverify").map((impact) => impact.id)
    return (
      `Plan delta accepted: ${checked.result.impacts.length} task(s) impacted.` +
      (reverify.length > 0 ? ` The Scheduler added ${reverify.join(", ")} to re-verify merged work next to the change.` : "") +
      " Dispatch resumes."
    )
  }

  async adr(_sessionID: string, args: { id: string; title: string; status: string; body: string; supersedes?: string[] }): Promise<string> {
    const file = AirPaths.adrs(this.root, `${args.id}.md`)
    const supersedes = args.supersedes?.length ? `\nSupersedes: ${args.supersedes.join(", ")}\n` : ""
    await writeFileAtomic(file, `# ${args.id}: ${args.title}\n\nStatus: ${args.status}\n${supersedes}\n${args.body.trim()}\n`)
    return `${args.id} written to ${relative(this.root, file)}. Cite it in the tasks' adrRefs.`
  }

  async milestone(sessionID: string, args: { phase?: number; verdict: "pass" | "fail"; findings: string[]; fixTasks?: TaskNode[] }): Promise<string> {
    const purpose = this.supervisor.purposes.get(sessionID)
    if (purpose?.kind !== "milestone") return "Refused: this session was not asked for a milestone review."
    // The phase under review is known from the session; one given must agree (the machine checks it).
    const phase = args.phase ?? purpose.phase
    args = { ...args, phase }
    // A passing final review is followed at once by the end of the run: Main hears both in one wake.
    const quiet = this.state?.milestone?.final === true && args.verdict === "pass"
    const r = await this.apply({ type: "milestone.reviewed", phase, verdict: args.verdict, fixTasks: args.fixTasks, ...(args.findings.length ? { findings: args.findings } : {}) })
    if (!r.ok) return `Milestone report refused: ${r.reason}`
    this.supervisor.purposes.delete(sessionID)
    this.inbox.push(
      `MILESTONE phase ${args.phase}: ${args.verdict}${args.findings.length ? `\n${args.findings.map((f) => `- ${f}`).join("\n")}` : ""}`,
      !quiet,
    )
    return "Milestone report recorded."
  }

  // ——— Workers ———

  async report(sessionID: string, input: { summary: string; blocked?: string; planIssue?: PlanIssue; debug?: DebugReport }): Promise<string> {
    const purpose = this.supervisor.purposes.get(sessionID)
    if (purpose?.kind !== "worker") return "Refused: air_report is for the executor or debugger session of a task."
    let args = input
    if (purpose.role === "debugger" && !input.blocked && !input.planIssue) {
      // The Debugger's steps, held against what the guard saw the session run and edit; kept as evidence.
      const dir = this.interpreter.evidenceDir(purpose.taskId)
      const verdict = DebugSteps.check(input.debug, DebugSteps.of(sessionID), Evidence.failureOf(dir), Worktrees.pathFor(this.root, purpose.taskId))
      await writeFileAtomic(join(dir, `debug-${sessionID.replace(/[^\w.-]/g, "_")}.json`), DebugSteps.evidence(sessionID, input.debug, verdict)).catch(() => undefined)
      if (!verdict.ok) return `Report refused at the ${verdict.step} step: ${verdict.message}. Nothing was recorded; report again.`
      if (verdict.route === "architect" && input.debug?.notReproducible)
        args = { ...input, blocked: `not reproducible: ${input.debug.symptom}; tried ${input.debug.notReproducible.tried.map((c) => `\`${c}\``).join(", ")}${input.debug.notReproducible.note ? `: ${input.debug.notReproducible.note}` : ""}` }
    }
    const r = await this.apply({
      type: "worker.reported",
      taskId: purpose.taskId,
      sessionId: sessionID,
      result: {
        taskId: purpose.taskId,
        role: purpose.role,
        summary: args.summary,
        ...(args.blocked ? { blocked: { reason: args.blocked } } : {}),
        ...(args.planIssue ? { planIssue: args.planIssue } : {}),
        ...(args.debug ? { debug: args.debug } : {}),
      },
    })
    if (!r.ok) return `Report refused: ${r.reason}`
    this.supervisor.purposes.delete(sessionID)
    return args.blocked || args.planIssue
      ? "Recorded: the Architect hears it first and answers with a plan change, a decision, or a question to the user. End your turn."
      : `Report received. The Scheduler now runs the gates itself (${Vocabulary.gates()}). End your turn.`
  }

  /**
   * A worker's look at its task's program (air_capture, air_probe): the caller is known by its session, the executor
   * or Debugger the Scheduler started for the task; the look builds its worktree and runs the gate's capture or probe
   * there (looks/worker-look.ts). A look is not a report: nothing of the run's state changes.
   */
  async look(sessionID: string, tool: Looks.Tool, override: WorkerLook.Override, signal?: AbortSignal): Promise<WorkerLook.Result> {
    const purpose = this.supervisor.purposes.get(sessionID)
    if (purpose?.kind !== "worker") throw new Error(`${tool} is for the executor or debugger session of a task`)
    const task = (await this.open()).state.graph?.tasks.find((t) => t.id === purpose.taskId)
    if (!task) throw new Error(`task ${purpose.taskId} is not in the plan`)
    return WorkerLook.look(tool, {
      root: this.root,
      task,
      worktree: Worktrees.pathFor(this.root, purpose.taskId),
      evidenceDir: this.interpreter.evidenceDir(purpose.taskId),
      base: this.integrationBranch(),
      override,
      ...(signal ? { signal } : {}),
    })
  }

  async diffForReview(sessionID: string): Promise<string> {
    const purpose = this.supervisor.purposes.get(sessionID)
    if (purpose?.kind !== "reviewer") return "Refused: air_diff is for the reviewer of a task."
    const rt = this.interpreter.runtimeOf(purpose.taskId)
    const diff = await Worktrees.diff(this.root, purpose.taskId, this.integrationBranch())
    const evidence = Object.entries(rt?.evidence ?? {})
      .map(([k, v]) => `- ${k}: ${v}`)
      .join("\n")
    return [`Diff of task ${purpose.taskId} against ${this.integrationBranch()}:`, "```diff", diff, "```", "", "Gate evidence:", evidence || "(none)"].join("\n")
  }

  async review(sessionID: string, args: { verdict: "pass" | "fail" | "block-release"; rows: any[]; findings: string[]; checklist: Checklist }): Promise<string> {
    const purpose = this.supervisor.purposes.get(sessionID)
    if (purpose?.kind !== "reviewer") return "Refused: air_review is for the reviewer of a task."
    const report = { taskId: purpose.taskId, verdict: args.verdict, rows: args.rows, findings: args.findings, checklist: args.checklist }
    await writeFileAtomic(join(this.interpreter.evidenceDir(purpose.taskId), "review.json"), JSON.stringify(report, null, 2))
    // The skill's sections, as the reviewer's first message gave them (ContextPack.reviewer): the core refuses a ui review without a row for each.
    const kind = this.store?.state.graph?.tasks.find((t) => t.id === purpose.taskId)?.kind
    const uiSkillSections = kind === "ui" ? UiSkill.sections(this.root) : undefined
    const r = await this.apply({ type: "review.reported", taskId: purpose.taskId, report, ...(uiSkillSections ? { uiSkillSections } : {}) })
    if (!r.ok) return `Review refused: ${r.reason}`
    this.supervisor.purposes.delete(sessionID)
    return "Review recorded. End your turn."
  }

  async decide(sessionID: string, choice: string, reason: string): Promise<string> {
    const purpose = this.supervisor.purposes.get(sessionID)
    if (purpose?.kind === "adr") return this.classifyAdr(sessionID, purpose, choice, reason)
    if (purpose?.kind !== "consult") return "Refused: you were not consulted."
    if (!purpose.options.includes(choice)) return `Refused: "${choice}" is not one of the options: ${purpose.options.join(", ")}.`
    const r = await this.apply({ type: "consult.answered", taskId: purpose.taskId, choice, by: purpose.agent, reason })
    if (!r.ok) return `Decision refused: ${r.reason}`
    this.supervisor.purposes.delete(sessionID)
    this.inbox.push(`The ${purpose.agent === "architect" ? "Architect" : "scheduler agent"} chose "${choice}" for task ${purpose.taskId}: ${reason}`)
    return "Decision recorded."
  }

  /** The Architect's reading of an edited ADR: the machine records it (and cascades a decision change). */
  private async classifyAdr(sessionID: string, purpose: { adr: string; hash: string }, choice: string, reason: string): Promise<string> {
    if (choice !== "clarification" && choice !== "decision-change") return `Refused: "${choice}" is not one of the options: clarification, decision-change.`
    const r = await this.apply({ type: "adr.classified", adr: purpose.adr, hash: purpose.hash, kind: choice, note: reason })
    if (!r.ok) return `Classification refused: ${r.reason}`
    this.supervisor.purposes.delete(sessionID)
    // What was classified becomes the accepted text the next edit is compared with.
    const text = Adrs.textWithHash(this.root, purpose.adr, purpose.hash)
    if (text !== null) await Adrs.keep(this.root, purpose.adr, text)
    this.inbox.push(`The Architect read the edit of ${purpose.adr} as a ${choice}: ${reason}`)
    return "Classification recorded. End your turn."
  }

  private integrationBranch(): string {
    return this.integration ?? this.store?.state.integration ?? RunReport.runInfo(this.root)?.integration ?? "main"
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
    const marker = `${sep}${AirPaths.partsOf(AirPaths.WORKTREES).join(sep)}${sep}`
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

  /** Session turns starting and ending, for the TUI's wake of Main (only for a run this process already has). */
  export function observe(directory: string, event: { type: string; properties?: any }): void {
    const o = byRoot.get(projectRoot(directory))
    const sessionID = event.properties?.sessionID
    if (!o || typeof sessionID !== "string") return
    if (event.type === "session.idle") o.sessionStatus(sessionID, false)
    else if (event.type === "session.status") o.sessionStatus(sessionID, event.properties?.status?.type !== "idle")
  }

  export function forSession(sessionID: string): OrchestratorImpl | undefined {
    return bySession.get(sessionID)
  }

  export function bindSession(sessionID: string, o: OrchestratorImpl): void {
    bySession.set(sessionID, o)
  }
}
