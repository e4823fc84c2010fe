import { commandId, type Command, type Consultant, type ConsultOption } from "./command"
import { tasksConflict } from "./conflicts"
import type { Event, WorkerRole } from "./event.schema"
import { graphIndex, isLive, type GraphIndex } from "./graph-index"
import { ACTIVE_STATUSES, baselineHolds, type Failure, type Question, type SchedulerState, type TaskRuntime } from "./state"
import { stepStarted } from "./steps"
import { askRunCost, reserveSession, sessionFits, sessionRoleOf } from "./money-rules"
import type { TaskGraph, TaskNode, TaskStatus } from "./task.schema"

/**
 * Rounds of fixes a milestone review may ask for before the user is asked: a review that keeps failing
 * (the Architect and the workers disagreeing about done) must not loop for ever.
 */
export const MILESTONE_FIX_ROUNDS = 3

/** History notes are for people scanning a task's story; whole reports and gate logs live in the evidence. */
const NOTE_LIMIT = 160

/**
 * The next state while one event is being applied. The previous state is never written to: arrays are
 * copied the first time they change, so a refused event simply drops its draft, and the cost of an event
 * is the tasks it touches plus one copy of the task array (a pointer copy, not a deep one).
 */
export class Draft {
  readonly s: SchedulerState
  readonly commands: Command[] = []
  private tasksCopied = false
  private activeCopied = false
  private readyCopied = false
  private queueCopied = false
  private notices = 0

  /**
   * `owned`: the arrays of `prev` belong to this fold alone (see Folder), so they are written in place
   * instead of copied.
   */
  constructor(
    prev: SchedulerState,
    readonly event: Event,
    private readonly owned = false,
  ) {
    if (owned) {
      this.s = prev
      this.s.eventCount++
      this.s.lastAt = event.at
      this.tasksCopied = this.activeCopied = this.readyCopied = this.queueCopied = true
    } else this.s = { ...prev, eventCount: prev.eventCount + 1, lastAt: event.at }
  }

  get graph(): TaskGraph {
    if (!this.s.graph) throw new Error("no graph")
    return this.s.graph
  }

  private indexedGraph: TaskGraph | null = null
  private index: GraphIndex | null = null

  private lastId: string | null = null
  private lastIndex: number | undefined = undefined

  indexOf(id: string): number | undefined {
    const graph = this.s.graph
    if (!graph) return undefined
    if (graph !== this.indexedGraph) {
      this.indexedGraph = graph
      this.index = graphIndex(graph)
      this.lastId = null
    }
    // An event asks about the same task many times in a row.
    if (id === this.lastId) return this.lastIndex
    this.lastId = id
    this.lastIndex = this.index!.indexOf.get(id)
    return this.lastIndex
  }

  node(id: string): TaskNode {
    return this.graph.tasks[this.indexOf(id)!]!
  }

  task(id: string): TaskRuntime | undefined {
    const i = this.indexOf(id)
    return i === undefined ? undefined : this.s.tasks[i]
  }

  /**
   * The task at index i as an object this draft may write to: copied (with its history) the first time it
   * is touched in this event, then written in place, so an event costs one copy per task it changes.
   */
  private writable(i: number): TaskRuntime {
    if (this.owned) return this.s.tasks[i]!
    if (!this.tasksCopied) {
      this.s.tasks = this.s.tasks.slice()
      this.tasksCopied = true
    }
    const current = this.s.tasks[i]!
    if (this.fresh?.has(current)) return current
    const copy = { ...current, history: current.history.slice() }
    ;(this.fresh ??= new Set()).add(copy)
    this.s.tasks[i] = copy
    return copy
  }

  /** Task objects this draft made, and may therefore write to. */
  private fresh: Set<TaskRuntime> | null = null

  /** Replaces fields of one task; a status change goes through setStatus so the indexes follow. */
  patch(id: string, fields: Partial<Omit<TaskRuntime, "id" | "status" | "history">>): TaskRuntime {
    return Object.assign(this.writable(this.indexOf(id)!), fields)
  }

  setStatus(id: string, to: TaskStatus, note: string | null = null): void {
    const task = this.writable(this.indexOf(id)!)
    const from = task.status
    task.status = to
    task.history.push({ at: this.event.at, event: this.event.type, from, to, note: note === null || note.length <= NOTE_LIMIT ? note : `${note.slice(0, NOTE_LIMIT - 1)}…` })
    const wasActive = ACTIVE_STATUSES.has(from)
    const isActive = ACTIVE_STATUSES.has(to)
    if (wasActive && !isActive) this.activeList().splice(this.s.active.indexOf(id), 1)
    if (!wasActive && isActive) this.activeList().push(id)
    if (from === "pending" && to !== "pending") this.dropReady(id)
    if (from === "merge_queued" && to !== "merge_queued") {
      const at = this.s.mergeQueue.indexOf(id)
      if (at >= 0) this.queue().splice(at, 1)
    }
  }

  private activeList(): string[] {
    if (!this.activeCopied) {
      this.s.active = this.s.active.slice()
      this.activeCopied = true
    }
    return this.s.active
  }

  private readyList(): string[] {
    if (!this.readyCopied) {
      this.s.ready = this.s.ready.slice()
      this.readyCopied = true
    }
    return this.s.ready
  }

  queue(): string[] {
    if (!this.queueCopied) {
      this.s.mergeQueue = this.s.mergeQueue.slice()
      this.queueCopied = true
    }
    return this.s.mergeQueue
  }

  private dropReady(id: string): void {
    const at = this.s.ready.indexOf(id)
    if (at >= 0) this.readyList().splice(at, 1)
  }

  /** Puts a pending task with no unmerged dependency into the ready list, keeping dispatch order. */
  offerReady(id: string): void {
    const task = this.task(id)!
    if (task.status !== "pending" || task.waitingOn !== null) return
    // Counted afresh: a dependency may have been reset by a plan delta while this task was away.
    const { indexOf } = graphIndex(this.graph)
    let remainingDeps = 0
    for (const dep of this.node(id).deps) if (this.s.tasks[indexOf.get(dep)!]?.status !== "merged") remainingDeps++
    if (remainingDeps !== task.remainingDeps) this.patch(id, { remainingDeps })
    if (remainingDeps > 0) return
    if (this.s.merging.includes(id)) return // its branch is still being merged; it may start once that settles
    const { rank } = graphIndex(this.graph)
    const mine = rank[this.indexOf(id)!]!
    const list = this.s.ready
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (rank[this.indexOf(list[mid]!)!]! < mine) lo = mid + 1
      else hi = mid
    }
    if (list[lo] === id) return // already offered
    this.readyList().splice(lo, 0, id)
  }

  /** Rebuilds the ready list and the dependency counts from scratch: after a graph change only. */
  rebuildReady(): void {
    const graph = this.graph
    const { indexOf } = graphIndex(graph)
    const ready: string[] = []
    graph.tasks.forEach((node, i) => {
      const task = this.s.tasks[i]!
      if (task.status !== "pending") return
      let remaining = 0
      for (const dep of node.deps) if (this.s.tasks[indexOf.get(dep)!]?.status !== "merged") remaining++
      if (remaining !== task.remainingDeps) this.patch(task.id, { remainingDeps: remaining })
      if (remaining === 0 && task.waitingOn === null && !this.s.merging.includes(task.id)) ready.push(task.id)
    })
    const { rank } = graphIndex(graph)
    ready.sort((a, b) => rank[indexOf.get(a)!]! - rank[indexOf.get(b)!]!)
    this.s.ready = ready
    this.readyCopied = true
  }

  emit(command: Command): void {
    this.commands.push(command)
  }

  notify(text: string): void {
    this.emit({ type: "notify", id: commandId.notify(this.s.eventCount, this.notices++), text })
  }

  // ── the moves the rules are made of ─────────────────────────────────────────────────────────────

  dispatch(id: string, role: WorkerRole, reason: string): void {
    const task = this.task(id)!
    const attempt = task.attempts + 1
    this.setStatus(id, role === "executor" ? "running" : "debugging", reason)
    this.patch(id, { attempts: attempt, role, sessionId: null, gatesStarted: false, resume: null, waitingOn: null, deadline: null, nudges: 0 })
    reserveSession(this, id, role)
    this.emit({ type: "dispatch", id: commandId.dispatch(id, role, attempt), taskId: id, role, attempt, reason })
  }

  runGates(id: string, note: string | null): void {
    const run = this.task(id)!.gateRuns + 1
    this.setStatus(id, "gating", note)
    this.patch(id, { gateRuns: run, sessionId: null, gatesStarted: false, resume: null })
    this.emit({ type: "runGates", id: commandId.runGates(id, run), taskId: id })
  }

  review(id: string, note: string | null): void {
    const run = this.task(id)!.reviewRuns + 1
    this.setStatus(id, "reviewing", note)
    this.patch(id, { reviewRuns: run, reviewSessionId: null, resume: null, nudges: 0 })
    reserveSession(this, id, "reviewer")
    this.emit({ type: "review", id: commandId.review(id, run), taskId: id, run })
  }

  /** Repairs spend the task's budget; when it is spent a rule can no longer decide, so the model is consulted. */
  repairOrConsult(id: string, role: WorkerRole, reason: string, failure: Failure, fallback: ConsultOption[]): void {
    const task = this.task(id)!
    this.patch(id, { lastFailure: failure })
    if (task.repairs < this.s.config!.repairBudget) {
      this.patch(id, { repairs: task.repairs + 1 })
      this.dispatch(id, role, reason)
      return
    }
    this.consult(id, `task ${id}: repair budget of ${this.s.config!.repairBudget} spent; last failure: ${reason}`, fallback)
  }

  /** Asks the scheduler agent (or, when it could not settle it, the Architect) to pick one of the options. */
  consult(id: string, question: string, options: ConsultOption[], agent: Consultant = "scheduler"): void {
    const n = this.task(id)!.consults + 1
    this.setStatus(id, "consulting", question)
    this.patch(id, { consults: n, consultOptions: options, consultBy: agent, sessionId: null, reviewSessionId: null })
    this.emit({ type: "consult", id: commandId.consult(id, n), taskId: id, agent, options, question })
  }

  /** Blocks a task and asks the user, through Main, the one question that would unblock it. */
  block(id: string, reason: string, resume: NonNullable<TaskRuntime["resume"]>, ask?: Pick<Question, "cause" | "answers"> & { text: string }): void {
    const blocks = this.task(id)!.blocks + 1
    const questionId = `${id}:blocked:${blocks}`
    this.setStatus(id, "blocked", reason)
    this.patch(id, { blocks, resume, sessionId: null, reviewSessionId: null, consultOptions: null, consultBy: null, deadline: null })
    // `ask`: a question that names its cause and the answers it accepts (step-rules.ts).
    const text = ask?.text ?? `Task ${id} (${this.node(id).title}) is blocked: ${reason}. How should it continue?`
    this.s.questions = [...this.s.questions, { questionId, taskId: id, text, ...(ask ? { cause: ask.cause, answers: ask.answers } : {}) }]
    this.emit({ type: "ask", id: commandId.ask(questionId), questionId, text })
    this.notify(`task ${id} blocked: ${reason}`)
  }

  /** Stops whatever session works on the task now. */
  abortSessions(id: string): void {
    const { sessionId, reviewSessionId } = this.task(id)!
    if (sessionId) this.emit({ type: "abort", id: commandId.abort(id, sessionId), taskId: id, sessionId })
    if (reviewSessionId) this.emit({ type: "abort", id: commandId.abort(id, reviewSessionId), taskId: id, sessionId: reviewSessionId })
    if (sessionId || reviewSessionId) this.patch(id, { sessionId: null, reviewSessionId: null })
  }

  enqueueMerge(id: string): void {
    this.setStatus(id, "merge_queued", null)
    this.queue().push(id)
    this.pumpMerge()
  }

  /**
   * One batch in flight at a time: the next starts only when every task of the last one has its outcome. A
   * batch is the halves of a failed batch first (bisection), else the head of the queue, up to the run's
   * batch size (one in logs written before batches).
   */
  pumpMerge(): void {
    if (this.s.merging.length > 0 || this.s.mergeQueue.length === 0) return
    let batch: string[] = []
    while (batch.length === 0 && this.s.mergeSplits.length > 0) {
      const [group, ...rest] = this.s.mergeSplits
      this.s.mergeSplits = rest
      // A task of the group that left the queue meanwhile (invalidated, its merge blocked) is not waited for.
      batch = group!.filter((id) => this.s.mergeQueue.includes(id))
    }
    if (batch.length === 0) batch = this.s.mergeQueue.slice(0, this.s.config?.mergeBatch ?? 1)
    const tasks = batch.map((id) => {
      const task = this.task(id)!
      this.setStatus(id, "merging", null) // also takes it off the queue
      this.patch(id, { mergeRuns: task.mergeRuns + 1 })
      return { taskId: id, round: task.merges + 1 }
    })
    this.s.merging = batch
    this.emit({ type: "merge", id: commandId.merge(batch[0]!, this.task(batch[0]!)!.mergeRuns), tasks })
  }

  /** The task's merge has its outcome: it leaves the batch in flight (the next batch waits for the rest). */
  leaveBatch(id: string): void {
    this.s.merging = this.s.merging.filter((m) => m !== id)
  }

  /**
   * A batch failed as a whole: nothing landed. Its tasks go back to the front of the queue, split in two
   * halves that are tried in turn, so a failure is narrowed down to the one task that causes it.
   */
  splitBatch(ids: string[]): void {
    const half = Math.ceil(ids.length / 2)
    for (const id of ids) this.leaveBatch(id)
    this.requeueFirst(ids, "its batch failed the merge build: merged again in a smaller batch")
    this.s.mergeSplits = [ids.slice(0, half), ids.slice(half), ...this.s.mergeSplits].filter((group) => group.length > 0)
  }

  /** Tasks whose merge landed nothing go back to the front of the queue, in this order. */
  requeueFirst(ids: string[], note: string): void {
    for (const id of ids) this.setStatus(id, "merge_queued", note)
    this.s.mergeQueue = [...ids, ...this.s.mergeQueue.filter((id) => !ids.includes(id))]
    this.queueCopied = true
  }

  /** Undoes the task's last landing on the integration branch. */
  revert(id: string): void {
    const cmd = { type: "revert" as const, id: commandId.revert(id, this.s.eventCount), taskId: id, round: Math.max(1, this.task(id)!.merges) }
    // Kept until revert.done, so a restart carries it out again (outstanding) with the same id.
    this.s.reverts = [...this.s.reverts.filter((r) => r.taskId !== id || r.round !== cmd.round), { taskId: id, round: cmd.round, commandId: cmd.id }]
    this.emit(cmd)
  }

  markMerged(id: string, commit: string, tag: string, head?: string): void {
    // New work landed: whatever the final review passed is no longer the whole of it.
    if (this.s.finalReviewPassed) this.s.finalReviewPassed = false
    this.setStatus(id, "merged", commit)
    this.patch(id, { merged: { commit, tag, ...(head ? { head } : {}) }, merges: this.task(id)!.merges + 1, sessionId: null, reviewSessionId: null, resume: null, deadline: null })
    const i = this.indexOf(id)!
    for (const d of graphIndex(this.graph).dependents[i]!) {
      const dependent = this.s.tasks[d]!
      if (!isLive(this.graph.tasks[d]!)) continue
      const remainingDeps = Math.max(0, dependent.remainingDeps - 1)
      this.patch(dependent.id, { remainingDeps })
      if (remainingDeps === 0) this.offerReady(dependent.id)
    }
  }

  /**
   * Starts ready tasks while the cap allows: lowest phase first, then id order. A task that conflicts with
   * one in flight is passed over, not dropped: it stays ready for a later turn.
   */
  schedule(): void {
    const s = this.s
    // Before the baseline is known (or while its failure waits for the user) nothing starts, nor settles.
    if (baselineHolds(s)) return
    if (s.stage === "running" && !s.paused && !s.frozen && !s.runBudgetSpent && s.config) {
      // A provider rate limit lowers the cap until calls succeed again (rate.limited / rate.eased).
      const cap = Math.min(s.config.concurrency, s.rateLimit?.cap ?? Infinity)
      let working = workingCount(s)
      let i = 0
      let heldForMoney = false
      while (i < s.ready.length && working < cap) {
        const id = s.ready[i]!
        const node = this.node(id)
        if (node.phase > s.currentPhase) break
        if (!this.conflictsWithActive(node) && !this.waitsOnAdr(node)) {
          // The money budget: a session starts only when its estimate fits beside what is spent and held back.
          const role = sessionRoleOf(this.task(id)!)
          if (role !== null && !sessionFits(s, role)) {
            heldForMoney = true
            break
          }
          this.start(id)
          working++
          continue // start() took it off the ready list, so the same index now holds the next task
        }
        i++
      }
      // Nothing in flight can free what is held back: the budget is spent, and the user is asked once.
      if (heldForMoney && s.active.length === 0 && s.merging.length === 0) askRunCost(this)
    }
    this.settle()
  }

  private conflictsWithActive(node: TaskNode): boolean {
    for (const other of this.s.active) if (tasksConflict(this.node(other), node)) return true
    // A merge still landing for a task the plan dropped holds its files until it lands (and is reverted).
    for (const merging of this.s.merging) if (!this.s.active.includes(merging) && tasksConflict(this.node(merging), node)) return true
    return false
  }

  private start(id: string): void {
    const task = this.task(id)!
    // Work that passed gates and review whose merge could not run: only the merge is tried again (once no
    // conflicting task is in flight, like any start), and it gives its slot back at once.
    if (task.resume === "merge") {
      this.patch(id, { resume: null })
      this.enqueueMerge(id)
    } else if (task.resume === "gates") this.runGates(id, "resumed")
    else if (task.resume === "review") this.review(id, "resumed")
    else if (task.resume === "debugger") this.dispatch(id, "debugger", "resume after the user's answer")
    else this.dispatch(id, "executor", task.attempts === 0 ? "start" : "resume after the user's answer")
  }

  /**
   * When nothing is in flight: the phase is complete (milestone review, the final one after the last phase)
   * or the run is stuck (blocked). The run is done only once the Architect's final review passed.
   */
  settle(): void {
    const s = this.s
    if (s.stage !== "running" || s.paused || s.frozen || s.active.length > 0 || s.merging.length > 0) return
    if (s.runBudgetSpent) return this.finishBlocked()
    // Tasks citing an edited ADR wait for the Architect's classification, which will call schedule again.
    if (s.adrEdits.length > 0) return
    const graph = this.graph
    let phaseOpen = false
    let phaseMerged = false
    let anyMerged = false
    let nextPhase = Infinity
    graph.tasks.forEach((node, i) => {
      if (!isLive(node)) return
      const status = s.tasks[i]!.status
      if (status === "merged") anyMerged = true
      if (node.phase === s.currentPhase) {
        if (status === "merged") phaseMerged = true
        else phaseOpen = true
      } else if (node.phase > s.currentPhase && status !== "merged") nextPhase = Math.min(nextPhase, node.phase)
    })
    if (phaseOpen) return this.finishBlocked()
    // A milestone review that kept failing waits for the user's answer.
    if (s.questions.some((q) => q.milestone !== undefined)) return this.finishBlocked()
    if (nextPhase === Infinity) {
      if (anyMerged && !s.finalReviewPassed && s.config?.finalReview) return this.reviewMilestone(true)
      return this.finish("done")
    }
    if (!phaseMerged) {
      s.currentPhase = nextPhase
      return this.schedule()
    }
    this.reviewMilestone(false, nextPhase)
  }

  private reviewMilestone(final: boolean, nextPhase?: number): void {
    const s = this.s
    const commandIdText = commandId.reviewMilestone(s.currentPhase, s.eventCount)
    s.stage = "milestone"
    s.milestone = { phase: s.currentPhase, reviewing: false, commandId: commandIdText, final }
    s.steps = stepStarted(s, "milestone", this.event.at, 0)
    this.emit({ type: "reviewMilestone", id: commandIdText, phase: s.currentPhase, final })
    this.notify(
      final
        ? `every task is merged; the Architect reviews the whole requirement (final review of phase ${s.currentPhase}) before the run is done`
        : `phase ${s.currentPhase} merged; the Architect reviews the milestone before phase ${nextPhase} starts`,
    )
  }

  /** A milestone review failed MILESTONE_FIX_ROUNDS times: the user is asked instead of another round of fixes. */
  askAboutMilestone(phase: number, fails: number, findings: readonly string[]): void {
    const questionId = `milestone:${phase}:${this.s.eventCount}`
    const found = findings.length > 0 ? ` Last findings: ${findings.join("; ")}.` : ""
    const text = `The Architect's review of phase ${phase} failed ${fails} times.${found} How should it continue?`
    this.s.questions = [...this.s.questions, { questionId, taskId: null, text, milestone: phase }]
    this.emit({ type: "ask", id: commandId.ask(questionId), questionId, text })
    this.notify(`milestone ${phase}: the review failed ${fails} times; the user is asked`)
  }

  /** Tasks citing an edited ADR the Architect has not classified yet do not start. */
  private waitsOnAdr(node: TaskNode): boolean {
    const edits = this.s.adrEdits
    return edits.length > 0 && node.adrRefs.some((ref) => edits.some((e) => e.adr === ref))
  }

  /** Nothing can run: park the tasks that wait on blocked ones, so every task ends merged, blocked or invalidated. */
  finishBlocked(): void {
    const { indexOf } = graphIndex(this.graph)
    this.graph.tasks.forEach((node, i) => {
      const task = this.s.tasks[i]!
      if (!isLive(node) || task.status !== "pending") return
      const dep = node.deps.find((d) => this.s.tasks[indexOf.get(d)!]?.status !== "merged")
      const waitingOn = this.s.runBudgetSpent ? "run budget" : dep ?? `phase ${this.s.currentPhase}`
      this.setStatus(task.id, "blocked", `waits on ${waitingOn}`)
      this.patch(task.id, { waitingOn })
    })
    this.finish("blocked")
  }

  private finish(status: "done" | "blocked"): void {
    const s = this.s
    s.stage = "finished"
    s.finished = { status }
    s.finalCheck = null
    const counts = countStatuses(s.tasks)
    this.emit({ type: "finish", id: commandId.finish(status, s.eventCount), status })
    this.notify(
      status === "done"
        ? `run finished: ${counts.merged ?? 0} tasks merged`
        : `run stopped, blocked: ${counts.merged ?? 0} merged, ${counts.blocked ?? 0} blocked; ${s.questions.length} question(s) wait for an answer`,
    )
  }

  /** Brings parked tasks back when the run can move again (an answer arrived, a change was requested). */
  reopen(budgetRaised = false): void {
    const s = this.s
    // Tasks are parked only when a run stops blocked or its budget runs out: otherwise there is nothing to scan.
    if (s.stage !== "finished" && !budgetRaised) return
    if (s.stage === "finished") {
      s.stage = "running"
      s.finished = null
      s.finalCheck = null
    }
    if (s.runBudgetSpent) return
    s.tasks.forEach((task) => {
      if (task.status !== "blocked" || task.waitingOn === null) return
      this.setStatus(task.id, "pending", "reopened")
      this.patch(task.id, { waitingOn: null })
      this.offerReady(task.id)
    })
  }
}

/**
 * Tasks that count against the concurrency cap. A task waiting for its merge, or being merged, keeps its
 * worktree and its files (conflicts still see it) but gives its slot back: merges go one at a time and cost
 * no model, so they must not keep the next tasks from starting. At most `cap` of them do so — beyond that
 * they hold slots again, so worktrees cannot pile up behind a slow merge queue. A merge conflict sends its
 * task back to work at once, even when that takes the count over the cap (it was in flight already and is
 * closest to done); no new task starts until the count is under the cap again.
 */
export function workingCount(s: SchedulerState): number {
  const merging = s.merging.filter((id) => s.active.includes(id)).length
  const cap = s.config?.concurrency ?? 0
  return s.active.length - Math.min(s.mergeQueue.length + merging, cap)
}

function countStatuses(tasks: readonly TaskRuntime[]): Partial<Record<TaskStatus, number>> {
  const counts: Partial<Record<TaskStatus, number>> = {}
  for (const task of tasks) counts[task.status] = (counts[task.status] ?? 0) + 1
  return counts
}
