import type { Consultant } from "../../core/command"
import type { WorkerRole } from "../../core/vocabulary"
import { failureEvent, SESSION_RULES, type FailedOutcome, type PurposeKind, type PurposeRef, type SessionFailure } from "../../core/session-outcome"
import type { ChildSessions } from "./sessions"
import type { Applied, EventInput, Ports } from "../ports"
import type { ModelInput } from "./model-input"
import { ProviderError } from "./provider-error"

/** What a session the Scheduler started is for; decided by code when it starts the session. */
export type Purpose =
  | { kind: "worker"; taskId: string; role: WorkerRole; nudged: boolean; attempt?: number }
  | { kind: "reviewer"; taskId: string; nudged: boolean; run?: number }
  | { kind: "architect"; nudged: boolean }
  | { kind: "change"; nudged: boolean }
  | { kind: "milestone"; phase: number; nudged: boolean }
  | { kind: "consult"; taskId: string; agent: Consultant; options: string[]; nudged: boolean }
  /** The Architect classifies an edit of an accepted ADR (through air_decide). */
  | { kind: "adr"; adr: string; hash: string; nudged: boolean }

/** `images`: pictures sent with the first prompt (only to a model that takes them: the caller asked `takesImages`). */
export type SessionSpec = { agent: string; directory: string; worktree?: string; title: string; prompt: string; taskId?: string; images?: readonly ModelInput.Image[] }

/**
 * The sessions the Scheduler started: what each is for, and what its outcome means. Silence about a
 * result is never success: a session that stops without its report is nudged once, then failed.
 */
export class Supervisor {
  readonly purposes = new Map<string, Purpose>()
  mainSessionID?: string
  architectSessionID?: string

  constructor(
    private ports: Ports,
    /** Called with each session it starts, so tool calls from that session find this run. */
    private bind: (sessionID: string) => void,
    /** Reports the model use of the sessions named (usage.recorded), read before they are let go. */
    private reportUsage: (sessionIDs: string[]) => Promise<void>,
  ) {}

  purposeOf(sessionID: string): Purpose | undefined {
    return this.purposes.get(sessionID)
  }

  forget(sessionID: string): void {
    this.purposes.delete(sessionID)
  }

  /**
   * Starts a child session of Main's. `record` runs after the session exists and before its first
   * prompt, so the Scheduler knows a session before the session can act (report, call tools).
   */
  async spawn(purpose: Purpose, spec: SessionSpec, record?: (sessionID: string) => Promise<unknown>): Promise<string> {
    const { sessions } = this.ports
    const sessionID: string = await sessions.create(
      { parentID: this.mainSessionID, agent: spec.agent, directory: spec.directory, title: spec.title },
      (outcome) => void this.onOutcome(sessionID, outcome),
    )
    this.purposes.set(sessionID, purpose)
    this.bind(sessionID)
    this.ports.onSessionStarted(sessionID, { agent: spec.agent, directory: spec.directory, worktree: spec.worktree, taskId: spec.taskId })
    const recorded = (await record?.(sessionID)) as { ok: boolean; reason?: string } | undefined
    if (recorded && recorded.ok === false) {
      // The state no longer waits for this session (e.g. a command re-issued after a restart): never let it work.
      this.purposes.delete(sessionID)
      await sessions.abort(sessionID).catch(() => undefined)
      throw new Error(`the ${spec.agent} session was not started: ${recorded.reason}`)
    }
    await sessions.prompt(sessionID, spec.prompt, spec.images)
    return sessionID
  }

  /**
   * The user's answer to a proposal goes to the Architect who made it (its session watched again), or,
   * when that session is gone (a restart), to a new Architect started with `fresh` (the proposal and the answer).
   */
  async toArchitect(text: string, fresh: string): Promise<void> {
    const { sessions, root, inbox } = this.ports
    const id = this.architectSessionID
    if (id) {
      try {
        sessions.adopt({ sessionID: id, agent: "architect", directory: root }, (outcome) => void this.onOutcome(id, outcome))
        this.purposes.set(id, { kind: "architect", nudged: false })
        await sessions.prompt(id, text)
        return
      } catch (err) {
        this.purposes.delete(id)
        sessions.release(id)
        inbox.push(`The Architect's session could not be prompted (${(err as Error).message}); a new Architect takes over.`)
      }
    }
    const purpose = { kind: "architect" as const, nudged: false }
    try {
      this.architectSessionID = await this.spawn(purpose, { agent: "architect", directory: root, title: "Architect: plan", prompt: fresh })
    } catch (err) {
      // No Architect could take the answer: the machine hears it as the plan step's spawn failure.
      const r = await this.fail(purpose, "", "spawn-failed", { message: (err as Error).message })
      if (!r.ok) throw err
    }
  }

  /** Ends a session the state no longer waits on. */
  async abort(sessionID: string): Promise<void> {
    const reported = this.reportUsage([sessionID])
    this.purposes.delete(sessionID)
    await this.ports.sessions.abort(sessionID)
    await reported
  }

  /** A child stopped. Silence about its result is never success: nudge once, then fail it. */
  async onOutcome(sessionID: string, outcome: ChildSessions.Outcome): Promise<void> {
    const { log, sessions } = this.ports
    // The turn's model use first (one event at most per turn): the machine may find a budget spent.
    await this.reportUsage([sessionID])
    const purpose = this.purposes.get(sessionID)
    if (!purpose) return sessions.release(sessionID)
    if (outcome.kind !== "idle") {
      this.letGo(sessionID)
      // An abort the Scheduler did not order (its own aborts stop watching first): the TUI closing, or the
      // user stopping the session. The work is not at fault: the same step starts again, as after a crash.
      if (outcome.kind === "aborted" && (purpose.kind === "worker" || purpose.kind === "reviewer"))
        await log.apply({ type: "session.lost", taskId: purpose.taskId, sessionId: sessionID })
      else if (outcome.kind === "aborted") await this.fail(purpose, sessionID, "errored", { message: `its session was aborted: ${ProviderError.oneLine(outcome.message)}` })
      else {
        // Given up after the engine's retries ran past the run's bound: the class is known, the message its own.
        const fault = outcome.retryClass
          ? { class: outcome.retryClass, retryable: true, message: ProviderError.oneLine(outcome.message) }
          : ProviderError.classify(outcome.error ?? outcome.message, this.ports.clock.now())
        await this.fail(purpose, sessionID, "errored", { message: fault.message, fault: { class: fault.class, retryable: fault.retryable, message: fault.message, ...("status" in fault && fault.status !== undefined ? { status: fault.status } : {}) } })
      }
      return
    }
    const state = log.state()
    if ((purpose.kind === "architect" && state?.stage !== "planning" && state?.stage !== "confirmed") || (purpose.kind === "change" && !state?.frozen)) {
      sessions.release(sessionID)
      this.purposes.delete(sessionID)
      return
    }
    const { kind } = refOf(purpose, sessionID)
    const tool = kind === "consult" && purpose.kind === "consult" && purpose.agent === "architect" ? "air_decide (or air_delta)" : SESSION_RULES[kind].tool
    const nudge = `You ended your turn without calling ${tool}. The Scheduler only acts on that tool: call it now.`
    if (purpose.kind === "worker" || purpose.kind === "reviewer") {
      // Counted in the task's state: one nudge per session, whatever this process remembers.
      const task = state?.tasks.find((t) => t.id === purpose.taskId)
      if (task && task.nudges === 0) {
        const r = await log.apply({ type: "session.nudged", taskId: purpose.taskId, sessionId: sessionID })
        if (!r.ok) {
          // The state no longer waits on this session: let it go.
          this.purposes.delete(sessionID)
          sessions.release(sessionID)
          return
        }
        await sessions.prompt(sessionID, nudge)
        return
      }
    } else if (!purpose.nudged) {
      purpose.nudged = true
      await sessions.prompt(sessionID, nudge)
      return
    }
    this.letGo(sessionID)
    await this.fail(purpose, sessionID, "no-report", { message: "" })
  }

  /** The session failed: the event the table (core/session-outcome.ts) gives for its purpose and outcome. */
  async fail(purpose: Purpose, sessionID: string, outcome: FailedOutcome, failure: SessionFailure): Promise<Applied> {
    const { kind, ref } = refOf(purpose, sessionID)
    return this.ports.log.apply(failureEvent(kind, ref, outcome, failure) as EventInput)
  }

  /** Stops watching a session whose outcome is being reported (and forgets it as the Architect to answer). */
  private letGo(sessionID: string): void {
    this.purposes.delete(sessionID)
    this.ports.sessions.release(sessionID)
    if (this.architectSessionID === sessionID) this.architectSessionID = undefined
  }

  /**
   * Before a fresh session of a step (a plan, a change, a milestone review) starts: a session of the same
   * step still watched (one past its wall-clock cap) is aborted, so two never work on one step.
   */
  async endStep(kind: "architect" | "change" | "milestone"): Promise<void> {
    for (const [id, purpose] of [...this.purposes]) {
      if (purpose.kind !== kind) continue
      this.letGo(id)
      await this.ports.sessions.abort(id).catch(() => undefined)
    }
  }

  /** Sessions silent for longer than `inactivityMs`: each goes to the machine as its purpose's `stalled` event. */
  async checkStalled(inactivityMs: number): Promise<void> {
    const { sessions } = this.ports
    for (const sessionID of sessions.stalled(inactivityMs)) {
      const purpose = this.purposes.get(sessionID)
      if (!purpose) continue
      this.purposes.delete(sessionID)
      // A task's sessions are aborted by the machine's order (timer.fired); the others here, first.
      if (purpose.kind !== "worker" && purpose.kind !== "reviewer") {
        this.letGo(sessionID)
        await sessions.abort(sessionID)
      }
      await this.fail(purpose, sessionID, "stalled", { message: `no activity for ${inactivityMs} ms` })
    }
  }
}

/** The purpose as the table knows it: its kind and the ids its events carry. */
function refOf(purpose: Purpose, sessionId: string): { kind: PurposeKind; ref: PurposeRef[PurposeKind] } {
  switch (purpose.kind) {
    case "worker":
      return { kind: purpose.role, ref: { taskId: purpose.taskId, sessionId, attempt: purpose.attempt ?? 1 } }
    case "reviewer":
      return { kind: "reviewer", ref: { taskId: purpose.taskId, sessionId, run: purpose.run ?? 1 } }
    case "consult":
      return { kind: "consult", ref: { taskId: purpose.taskId, agent: purpose.agent } }
    case "milestone":
      return { kind: "milestone", ref: { phase: purpose.phase } }
    case "adr":
      return { kind: "adr", ref: { adr: purpose.adr, hash: purpose.hash } }
    case "architect":
    case "change":
      return { kind: purpose.kind, ref: {} }
  }
}
