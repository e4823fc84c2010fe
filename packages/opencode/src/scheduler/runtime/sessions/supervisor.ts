import type { Consultant } from "../../core/command"
import type { ChildSessions } from "./sessions"
import type { Ports } from "../ports"

/** What a session the Scheduler started is for; decided by code when it starts the session. */
export type Purpose =
  | { kind: "worker"; taskId: string; role: "executor" | "debugger"; nudged: boolean }
  | { kind: "reviewer"; taskId: string; nudged: boolean }
  | { kind: "architect"; nudged: boolean }
  | { kind: "change"; nudged: boolean }
  | { kind: "milestone"; phase: number; nudged: boolean }
  | { kind: "consult"; taskId: string; agent: Consultant; options: string[]; nudged: boolean }
  /** The Architect classifies an edit of an accepted ADR (through air_decide). */
  | { kind: "adr"; adr: string; hash: string; nudged: boolean }

export type SessionSpec = { agent: string; directory: string; worktree?: string; title: string; prompt: string; taskId?: string }

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
    await sessions.prompt(sessionID, spec.prompt)
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
    this.architectSessionID = await this.spawn({ kind: "architect", nudged: false }, { agent: "architect", directory: root, title: "Architect: plan", prompt: fresh })
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
    const { log, inbox, sessions } = this.ports
    // The turn's model use first (one event at most per turn): the machine may find a budget spent.
    await this.reportUsage([sessionID])
    const purpose = this.purposes.get(sessionID)
    if (!purpose) return sessions.release(sessionID)
    if (outcome.kind !== "idle") {
      this.purposes.delete(sessionID)
      sessions.release(sessionID)
      // An abort the Scheduler did not order (its own aborts stop watching first): the TUI closing, or the
      // user stopping the session. The work is not at fault: the same step starts again, as after a crash.
      if (outcome.kind === "aborted" && (purpose.kind === "worker" || purpose.kind === "reviewer"))
        await log.apply({ type: "session.lost", taskId: purpose.taskId, sessionId: sessionID })
      else if (purpose.kind === "worker")
        await log.apply({ type: "worker.failed", taskId: purpose.taskId, sessionId: sessionID, reason: "error", message: outcome.message })
      else if (purpose.kind === "reviewer") await log.apply({ type: "session.errored", taskId: purpose.taskId, sessionId: sessionID, cause: `error: ${outcome.message}` })
      else if (purpose.kind === "consult") await log.apply({ type: "consult.unanswered", taskId: purpose.taskId, by: purpose.agent, reason: `its session ${outcome.kind === "aborted" ? "was aborted" : "failed"}: ${outcome.message}` })
      else if (purpose.kind === "adr") await unclassified(log, purpose, `its session failed: ${outcome.message}`)
      else inbox.push(`The ${purpose.kind} session ${sessionID} failed: ${outcome.message}`, true)
      return
    }
    const state = log.state()
    if ((purpose.kind === "architect" && state?.stage !== "planning" && state?.stage !== "confirmed") || (purpose.kind === "change" && !state?.frozen)) {
      sessions.release(sessionID)
      this.purposes.delete(sessionID)
      return
    }
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
        await sessions.prompt(sessionID, `You ended your turn without calling ${purpose.kind === "worker" ? "air_report" : "air_review"}. The Scheduler only acts on that tool: call it now.`)
        return
      }
    } else if (!purpose.nudged) {
      purpose.nudged = true
      const expected = { worker: "air_report", reviewer: "air_review", architect: "air_propose or air_plan", change: "air_delta (until it is accepted)", milestone: "air_milestone", consult: purpose.kind === "consult" && purpose.agent === "architect" ? "air_decide (or air_delta)" : "air_decide", adr: "air_decide" }[purpose.kind]
      await sessions.prompt(sessionID, `You ended your turn without calling ${expected}. The Scheduler only acts on that tool: call it now.`)
      return
    }
    this.purposes.delete(sessionID)
    sessions.release(sessionID)
    if (purpose.kind === "worker")
      await log.apply({ type: "worker.failed", taskId: purpose.taskId, sessionId: sessionID, reason: "error", message: "the session ended twice without calling air_report" })
    else if (purpose.kind === "reviewer") await log.apply({ type: "session.errored", taskId: purpose.taskId, sessionId: sessionID, cause: "the session ended twice without calling air_review" })
    else if (purpose.kind === "consult") await log.apply({ type: "consult.unanswered", taskId: purpose.taskId, by: purpose.agent, reason: "the session ended twice without calling air_decide" })
    else if (purpose.kind === "adr") await unclassified(log, purpose, "the session ended twice without calling air_decide")
    else if (purpose.kind === "change")
      inbox.push("The Architect ended twice without an accepted plan delta: dispatch stays frozen and the run needs attention (air_status). Tell the user.", true)
    else inbox.push(`The ${purpose.kind} session ended without its report; the run needs attention (air_status).`, true)
  }

  /** Sessions silent for longer than `inactivityMs`: each goes to the machine (task) or is aborted (the rest). */
  async checkStalled(inactivityMs: number): Promise<void> {
    const { log, inbox, sessions } = this.ports
    for (const sessionID of sessions.stalled(inactivityMs)) {
      const purpose = this.purposes.get(sessionID)
      if (!purpose) continue
      this.purposes.delete(sessionID)
      if (purpose.kind === "worker" || purpose.kind === "reviewer") {
        await log.apply({ type: "timer.fired", taskId: purpose.taskId, kind: "inactivity" })
      } else if (purpose.kind === "consult") {
        await sessions.abort(sessionID)
        await log.apply({ type: "consult.unanswered", taskId: purpose.taskId, by: purpose.agent, reason: `no activity for ${inactivityMs} ms; the session was aborted` })
      } else if (purpose.kind === "adr") {
        await sessions.abort(sessionID)
        await unclassified(log, purpose, `no activity for ${inactivityMs} ms`)
      } else {
        await sessions.abort(sessionID)
        inbox.push(`The ${purpose.kind} session stalled (no activity for ${inactivityMs} ms) and was aborted.`, true)
      }
    }
  }
}

/**
 * The Architect gave no classification of an ADR edit: it is taken as a decision change, the safe reading
 * (the work citing the ADR is checked again rather than trusted), so the held tasks never wait on nothing.
 */
function unclassified(log: Ports["log"], purpose: { adr: string; hash: string }, why: string) {
  return log.apply({ type: "adr.classified", adr: purpose.adr, hash: purpose.hash, kind: "decision-change", note: `no classification from the Architect (${why}); treated as a decision change` })
}
