import { Budget } from "./budget"
import { Settings } from "../settings"
import { UsageReporter } from "./usage"
import type { Ports } from "../ports"
import type { Supervisor } from "./supervisor"
import { STEPS } from "../../core/steps"

/**
 * Timers are code: inactivity and wall-clock caps arrive at the machine as timer.fired events, the run's
 * minutes as budget.spent, model use as usage.recorded (from which the machine decides the request and
 * token budgets). Nothing here decides what they mean; the machine does.
 */
export class Clock {
  private stop?: () => void
  /** Deadlines already reported (task and deadline), so a refused or slow timer is not fired on every tick. */
  private fired = new Set<string>()
  /** Model use of the sessions the Scheduler started, as events. */
  readonly usage: UsageReporter

  constructor(
    private ports: Ports,
    private supervisor: () => Supervisor,
  ) {
    this.usage = new UsageReporter(ports, (sessionID) => {
      const purpose = this.supervisor().purposeOf(sessionID)
      if (!purpose) return undefined
      if (purpose.kind === "worker") return { role: purpose.role, taskId: purpose.taskId }
      if (purpose.kind === "reviewer") return { role: "reviewer", taskId: purpose.taskId }
      return { role: purpose.kind }
    })
  }

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

  /** Wall-clock caps: each task's and step's deadline is in the state (set when its session started), so a restart keeps it. */
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
    // The steps that belong to no task (plan, change, milestone review) have their deadlines in the state too.
    for (const step of STEPS) {
      const deadline = state.steps[step].deadline
      if (deadline === null || Date.parse(deadline) >= now) continue
      const key = `${step}@${deadline}`
      if (this.fired.has(key)) continue
      this.fired.add(key)
      await this.ports.log.apply({ type: "timer.fired", step, kind: "wallclock" })
    }
  }

  /** Reports the model use of the sessions named (by default every session watched) before they are let go. */
  reportUsage(sessionIDs?: Iterable<string>): Promise<void> {
    return this.usage.report(sessionIDs)
  }

  /** The run's minutes: time decides them, so the clock reports them; requests and tokens go as usage.recorded. */
  private async checkBudgets(): Promise<void> {
    const { log, inbox } = this.ports
    await this.usage.report()
    const state = log.state()
    if (!state || (state.stage !== "running" && state.stage !== "milestone") || state.runBudgetSpent) return
    // The limits the run started with (run.started); the live settings only for a log from before they were recorded.
    const limits = state.config?.budgets ?? Settings.budgets(this.ports.settings())
    if (!Budget.minutesOver(limits, state, this.ports.clock.now())) return
    const r = await log.apply({ type: "budget.spent", kind: "minutes" })
    if (r.ok) inbox.push("the run's minutes budget is spent", true)
  }
}
