import { Budget } from "./budget"
import { Settings } from "./settings"
import { Usage } from "./usage"
import type { Ports } from "./ports"
import type { Supervisor } from "./supervisor"

/**
 * Timers are code: inactivity and wall-clock caps arrive at the machine as timer.fired events, a spent
 * budget as budget.spent. Nothing here decides what they mean; the machine does.
 */
export class Clock {
  private stop?: () => void
  /** Deadlines already reported (task and deadline), so a refused or slow timer is not fired on every tick. */
  private fired = new Set<string>()
  /** Tokens each session used, as the engine reported them; on disk, so a restart does not forget them. */
  private sessionTokens?: Usage.SessionTokens

  constructor(
    private ports: Ports,
    private supervisor: () => Supervisor,
  ) {}

  start(inactivityMs: number): void {
    if (this.stop) return
    const every = Math.max(250, Math.min(30_000, Math.floor(inactivityMs / 4)))
    this.stop = this.ports.clock.every(every, () => void this.tick(inactivityMs))
  }

  stopTimers(): void {
    this.stop?.()
    this.stop = undefined
  }

  async tick(inactivityMs: number): Promise<void> {
    const { log, inbox } = this.ports
    await this.supervisor().checkStalled(inactivityMs)
    await this.checkBudgets().catch((err) => inbox.push(`Budget check failed: ${(err as Error).message}`))
    await this.checkDeadlines()
  }

  /** Wall-clock caps: each task's deadline is in the state (set when its worker was dispatched), so a restart keeps it. */
  async checkDeadlines(): Promise<void> {
    const state = this.ports.log.state()
    if (!state) return
    const now = this.ports.clock.now()
    for (const t of state.tasks) {
      if (t.deadline === null || Date.parse(t.deadline) >= now) continue
      if (t.status !== "running" && t.status !== "debugging" && t.status !== "reviewing") continue
      const key = `${t.id}@${t.deadline}`
      if (this.fired.has(key)) continue
      this.fired.add(key)
      await this.ports.log.apply({ type: "timer.fired", taskId: t.id, kind: "wallclock" })
    }
  }

  /** Brings tokens.json up to date with the sessions this process watches (or the ones named, before they are let go). */
  recordTokens(sessionIDs: Iterable<string> = this.ports.sessions.ids()): void {
    const { root, sessions } = this.ports
    const known = (this.sessionTokens ??= Usage.readTokens(root))
    let changed = false
    for (const sessionID of sessionIDs) {
      const stats = sessions.stats(sessionID)
      if (!stats || known[sessionID]?.tokens === stats.tokens) continue
      known[sessionID] = { at: known[sessionID]?.at ?? new Date(this.ports.clock.now()).toISOString(), tokens: stats.tokens }
      changed = true
    }
    if (changed) Usage.writeTokens(root, known)
  }

  /** A spent budget goes to the machine once; it blocks (the task, or the run) and asks the user. */
  private async checkBudgets(): Promise<void> {
    const { log, inbox, root } = this.ports
    const state = log.state()
    if (!state || (state.stage !== "running" && state.stage !== "milestone") || state.runBudgetSpent) return
    // The limits the run started with (run.started); the live settings only for a log from before they were recorded.
    const limits = state.config?.budgets ?? Settings.budgets(this.ports.settings())
    if (!Object.values(limits).some((v) => v > 0)) return
    this.recordTokens()
    const events = Budget.readEvents(root)
    const spent = Budget.spent(root, events, this.ports.clock.now())
    for (const over of Budget.over(limits, spent, events, state.active)) {
      const r = await log.apply({ type: "budget.spent", ...(over.taskId ? { taskId: over.taskId } : {}), kind: over.kind })
      if (r.ok) inbox.push(over.taskId ? `task ${over.taskId}: its ${over.kind} budget is spent` : `the run's ${over.kind} budget is spent`, true)
      if (!over.taskId) return
    }
  }
}
