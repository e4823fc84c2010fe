/**
 * A make-believe runtime: it carries out the machine's commands by producing plausible outcome events in a
 * random order (successes, failures, stale echoes), the way a real runtime with many sessions would.
 * Used by the property tests, the crash test's child process and the benchmark.
 */
import type { Command } from "../../src/scheduler/core/command"
import type { RunConfig, Event } from "../../src/scheduler/core/event.schema"
import { transition, type TransitionResult } from "../../src/scheduler/core/machine"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import { TASK_KINDS, type TaskGraph, type TaskNode, type WriteEntry } from "../../src/scheduler/core/task.schema"
import type { WorkerRole } from "../../src/scheduler/core/vocabulary"
import { requiredEvidence } from "../../src/scheduler/core/required-evidence"

export type Rng = () => number

/** mulberry32: small, fast, seedable. */
export function rngFrom(seed: number): Rng {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const pick = <T,>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!

export interface GraphShape {
  tasks: number
  phases: number
  files: number
  maxDeps: number
  regions?: readonly (string | undefined)[]
}

/** A random DAG: each task depends only on earlier tasks of the same or an earlier phase. */
export function randomGraph(rng: Rng, shape: GraphShape): TaskGraph {
  const regions = shape.regions ?? [undefined, "A", "B", "L1-L10", "L5-L20", "L30-L40"]
  const tasks: TaskNode[] = []
  for (let i = 0; i < shape.tasks; i++) {
    const phase = 1 + Math.floor((i * shape.phases) / shape.tasks)
    const deps = new Set<string>()
    const depCount = Math.floor(rng() * (shape.maxDeps + 1))
    for (let k = 0; k < depCount && i > 0; k++) deps.add(`T-${Math.floor(rng() * i)}`)
    const writeSet: WriteEntry[] = []
    const fileCount = 1 + Math.floor(rng() * 2)
    for (let k = 0; k < fileCount; k++) {
      const r = rng()
      const action = r < 0.8 ? "modify" : r < 0.9 ? "create" : r < 0.95 ? "keep" : "delete"
      const region = action === "modify" || action === "keep" ? pick(rng, regions) : undefined
      writeSet.push({ path: `src/f${Math.floor(rng() * shape.files)}.cpp`, action, ...(region ? { region } : {}) })
    }
    const unique = writeSet.filter((e, j) => writeSet.findIndex((o) => o.path === e.path && o.region === e.region) === j)
    const kind = pick(rng, TASK_KINDS.filter((k) => k !== "verify"))
    tasks.push({
      id: `T-${i}`,
      title: `Add feature ${i}`,
      kind,
      // A program task says how to start it; the machine never reads what (its gate does).
      ...(kind === "ui" ? { ui: { command: "build/app" } } : kind === "service" ? { service: { service: { command: "build/server" }, ports: [7000] } } : {}),
      phase,
      deps: [...deps],
      writeSet: unique,
      keep: [],
      doneWhen: `feature ${i} is covered by a passing test`,
      validation: [],
      adrRefs: rng() < 0.3 ? ["ADR-1"] : [],
    })
  }
  return { schemaVersion: 1, tasks }
}

export const TEST_CONFIG: RunConfig = {
  concurrency: 3,
  repairBudget: 2,
  stallRetries: 1,
  inactivityMs: 1000,
  wallClockMs: 10_000,
  autoConfirm: false,
  finalReview: true,
  mergeBatch: 3,
}

/** Something the simulated runtime still owes the machine: a command in progress, or a live session. */
type Open =
  | { kind: "command"; command: Command; stage: number }
  | { kind: "session"; taskId: string; sessionId: string; role: WorkerRole }
  | { kind: "reviewer"; taskId: string; sessionId: string }
  | { kind: "resume" }

export interface SimulatorOptions {
  /** Chance that a worker, gate, review or merge goes wrong. */
  trouble: number
  /** How many user answers and requirement changes the simulated user gives before going quiet. */
  answers: number
  changes: number
  milestoneFixes: number
  /** Pauses and spent budgets, now and then. */
  extras?: boolean
}

export const DEFAULT_SIM: SimulatorOptions = { trouble: 0.25, answers: 6, changes: 1, milestoneFixes: 1, extras: true }

export class Simulator {
  state: SchedulerState
  readonly accepted: Event[] = []
  readonly refused: { event: Event; reason: string }[] = []
  private open: Open[] = []
  private clock = 0
  private sessions = 0
  private answers: number
  private changes: number
  private fixes: number
  private fixCount = 0
  private runBudgets = 1
  private usageReports = 0
  private adrEdits = 1

  constructor(
    private readonly rng: Rng,
    private readonly options: SimulatorOptions = DEFAULT_SIM,
    /** Called after every accepted event with the states before and after, and the commands. */
    private readonly observe?: (before: SchedulerState, event: Event, after: SchedulerState, commands: Command[]) => void,
    state: SchedulerState = initialState(),
    /** Where events go; by default straight into the machine, in the crash test through a Store. */
    private readonly sink: (state: SchedulerState, event: Event) => TransitionResult = transition,
  ) {
    this.state = state
    this.answers = options.answers
    this.changes = options.changes
    this.fixes = options.milestoneFixes
  }

  at(): string {
    return new Date(Date.UTC(2026, 0, 1) + this.clock++ * 1000).toISOString()
  }

  /** Applies an event; returns the refusal reason, if any. */
  apply(event: Event): string | null {
    const before = this.state
    const result = this.sink(before, event)
    if ("refused" in result) {
      this.refused.push({ event, reason: result.refused })
      return result.refused
    }
    this.state = result.state
    this.accepted.push(event)
    this.observe?.(before, event, result.state, result.commands)
    for (const command of result.commands) this.open.push({ kind: "command", command, stage: 0 })
    return null
  }

  /** Plans and starts a run, or finishes starting one a killed process began. */
  start(graph: TaskGraph, config: RunConfig = TEST_CONFIG): void {
    const stage = this.state.stage
    if (stage === "idle") this.apply({ type: "run.started", at: this.at(), runId: "run-1", requirement: "make it work", config })
    if (stage === "idle" || stage === "planning") this.apply({ type: "plan.proposed", at: this.at(), summary: "a plan" })
    if (this.state.stage === "confirming") this.apply({ type: "plan.confirmed", at: this.at() })
    const refusal = this.apply({ type: "graph.accepted", at: this.at(), graph })
    if (refusal) throw new Error(`graph refused: ${refusal}`)
  }

  /** Adds the commands a restarted runtime must carry out again. */
  resume(commands: readonly Command[]): void {
    for (const command of commands) this.open.push({ kind: "command", command, stage: 0 })
  }

  /**
   * Takes over a state left by a process that died: re-issues what it still waits on, and treats the
   * sessions it had running as still alive (a real runtime would find them, or report them failed).
   */
  adopt(commands: readonly Command[]): void {
    this.resume(commands)
    for (const t of this.state.tasks) {
      if ((t.status === "running" || t.status === "debugging") && t.sessionId && t.role) this.open.push({ kind: "session", taskId: t.id, sessionId: t.sessionId, role: t.role })
      if (t.status === "reviewing" && t.reviewSessionId) this.open.push({ kind: "reviewer", taskId: t.id, sessionId: t.reviewSessionId })
      if (t.status === "gating" || t.status === "merging") {
        // outstanding() re-issues these from their start; a started gate or merge simply starts again.
      }
    }
    this.clock = this.state.eventCount + 1
    this.sessions = this.state.eventCount * 10
  }

  get idle(): boolean {
    return this.open.length === 0
  }

  /** Delivers one outcome, chosen at random among everything in flight. Returns false when nothing is left. */
  step(): boolean {
    if (this.open.length === 0) return false
    // Now and then the user changes the requirement in the middle of things.
    if (this.changes > 0 && this.state.stage === "running" && !this.state.frozen && this.rng() < 0.02) {
      this.changes--
      this.apply({ type: "change.requested", at: this.at(), text: "also support tabs" })
      return true
    }
    // And now and then the user pauses the run, or a budget runs out.
    if (this.options.extras && (this.state.stage === "running" || this.state.stage === "milestone")) {
      const r = this.rng()
      if (r < 0.01 && !this.state.paused) {
        this.apply({ type: "run.paused", at: this.at() })
        this.open.push({ kind: "resume" })
        return true
      }
      if (r < 0.015 && this.state.active.length > 0) {
        const taskId = this.state.active[Math.floor(this.rng() * this.state.active.length)]!
        this.apply({ type: "budget.spent", at: this.at(), taskId, kind: "tokens" })
        return true
      }
      if (r < 0.0165 && this.runBudgets-- > 0) {
        this.apply({ type: "budget.spent", at: this.at(), kind: "cost" })
        return true
      }
      // ADR-1 is accepted, and later edited by hand once: the Architect classifies the edit.
      if (r < 0.02 && this.state.adrs["ADR-1"] === undefined) {
        this.apply({ type: "adr.recorded", at: this.at(), adr: "ADR-1", hash: "h0" })
        return true
      }
      if (r < 0.025 && this.adrEdits > 0 && this.state.adrs["ADR-1"] !== undefined && this.state.adrEdits.length === 0) {
        this.apply({ type: "adr.edited", at: this.at(), adr: "ADR-1", hash: `h${this.adrEdits--}` })
        return true
      }
    }
    const i = Math.floor(this.rng() * this.open.length)
    const item = this.open[i]!
    const done = this.deliver(item)
    if (done) this.open.splice(i, 1)
    return true
  }

  runToEnd(maxSteps = 100_000): void {
    for (let n = 0; n < maxSteps && this.step(); n++);
  }

  /** Produces the next event for an open item; true when the item has nothing more to say. */
  private deliver(item: Open): boolean {
    const rng = this.rng
    const trouble = this.options.trouble
    const at = this.at()
    if (item.kind === "session") {
      const r = rng()
      const { taskId, sessionId, role } = item
      // The session's model use so far, now and then (totals only grow).
      if (this.options.extras && rng() < 0.2) this.apply({ type: "usage.recorded", at, taskId, sessionId, role, requests: ++this.usageReports, tokens: 100 * this.usageReports })
      if (r < 1 - trouble) {
        if (rng() < 0.1) this.apply({ type: "session.nudged", at, taskId, sessionId })
        this.apply({ type: "worker.reported", at, taskId, sessionId, result: { taskId, role, summary: "done, please check" } })
      } else if (r < 1 - trouble * 0.8) {
        this.apply({ type: "session.errored", at, taskId, sessionId, cause: "the model answered 500" })
      } else if (r < 1 - trouble * 0.6) {
        this.apply({ type: "worker.failed", at, taskId, sessionId, reason: pick(rng, ["error", "stalled", "timeout"] as const), message: "boom" })
      } else if (r < 1 - trouble * 0.3) {
        this.apply({ type: "timer.fired", at, taskId, kind: pick(rng, ["inactivity", "wallclock"] as const) })
      } else if (r < 1 - trouble * 0.1) {
        this.apply({ type: "worker.reported", at, taskId, sessionId, result: { taskId, role, summary: "stuck", ...(rng() < 0.5 ? { blocked: { reason: "needs a decision" } } : { planIssue: { kind: "missing-dependency" as const, detail: "needs another task first" } }) } })
      } else {
        this.apply({ type: "worker.failed", at, taskId, sessionId, reason: "aborted", message: "user abort" })
      }
      return true
    }
    if (item.kind === "resume") {
      this.apply({ type: "run.resumed", at })
      return true
    }
    if (item.kind === "reviewer") {
      const { taskId } = item
      const r = rng()
      const verdict = r < 1 - trouble ? "pass" : "fail"
      const contradictory = r > 1 - trouble * 0.2
      if (r > 1 - trouble * 0.1) {
        if (rng() < 0.5) this.apply({ type: "timer.fired", at, taskId, kind: "inactivity" })
        else this.apply({ type: "session.errored", at, taskId, sessionId: item.sessionId, cause: "the model answered 500" })
        return true
      }
      this.apply({
        type: "review.reported",
        at,
        taskId,
        report: {
          taskId,
          verdict: contradictory ? "pass" : verdict,
          rows: [{ designRef: "R1", code: "src/x.cpp:f", status: verdict === "pass" && !contradictory ? "match" : "divergent", note: "" }],
          findings: verdict === "pass" ? [] : ["does not follow R1"],
        },
      })
      return true
    }
    const { command } = item
    switch (command.type) {
      case "dispatch": {
        // Now and then someone else commits to the integration branch: the runtime sees it before a dispatch.
        const b = this.state.baseline
        if (b && b.status !== "running" && rng() < 0.05) this.apply({ type: "integration.moved", at, commit: `m${this.clock}` })
        const sessionId = `s-${++this.sessions}`
        const refusal = this.apply({ type: "task.dispatched", at, taskId: command.taskId, role: command.role, sessionId, attempt: command.attempt })
        if (!refusal) this.open.push({ kind: "session", taskId: command.taskId, sessionId, role: command.role })
        return true
      }
      case "runGates": {
        if (item.stage === 0) {
          item.stage = 1
          this.apply({ type: "gates.started", at, taskId: command.taskId })
          return false
        }
        if (rng() < 1 - this.options.trouble) {
          const evidence = Object.fromEntries(["diff", "build", "test", "analysis"].map((k) => [k, `.air/local/evidence/${command.taskId}/${k}.txt`]))
          this.apply({ type: "gates.passed", at, taskId: command.taskId, evidence })
        } else if (rng() < 0.15) {
          this.apply({ type: "gates.errored", at, taskId: command.taskId, tag: pick(rng, ["toolchain", "git", "fs"] as const), message: "the gates could not run" })
        } else {
          const gate = pick(rng, ["build", "test", "analysis", "build", "test", "commit", "diff", "evidence", "tool-missing"] as const)
          this.apply({ type: "gates.failed", at, taskId: command.taskId, gate, message: `${gate} failed`, evidencePath: `.air/local/evidence/${command.taskId}/${gate}.txt` })
        }
        return true
      }
      case "review": {
        const sessionId = `r-${++this.sessions}`
        const refusal = this.apply({ type: "review.started", at, taskId: command.taskId, sessionId })
        if (!refusal) this.open.push({ kind: "reviewer", taskId: command.taskId, sessionId })
        return true
      }
      case "merge": {
        const ids = command.tasks.map((t) => t.taskId)
        if (item.stage === 0) {
          item.stage = 1
          for (const taskId of ids) this.apply({ type: "merge.started", at, taskId })
          return false
        }
        // A batch of several fails together now and then: the Scheduler bisects it.
        if (ids.length > 1 && rng() < this.options.trouble / 2) {
          this.apply({ type: "merge.batch-rejected", at, taskIds: ids, message: "the batch's merge build failed", evidencePath: "build.log" })
          return true
        }
        for (const taskId of ids) {
          if (rng() < 1 - this.options.trouble / 2) this.apply({ type: "merge.succeeded", at, taskId, commit: `c${this.clock}-${taskId}`, tag: `air/done/${taskId}`, ...(ids.length > 1 ? { head: `m${this.clock}` } : {}) })
          else if (rng() < 0.3) this.apply({ type: "merge.blocked", at, taskId, tag: pick(rng, ["lock-timeout", "index-lock", "local-changes", "merge"] as const), message: "the merge could not run" })
          else if (rng() < 0.4) this.apply({ type: "merge.rejected", at, taskId, message: "the merge build failed", evidencePath: "build.log" })
          else if (rng() < 0.6) this.apply({ type: "merge.deferred", at, taskId })
          else this.apply({ type: "merge.conflicted", at, taskId, files: ["src/f0.cpp"] })
        }
        return true
      }
      case "consult":
        if (rng() < this.options.trouble / 4) this.apply({ type: "consult.unanswered", at, taskId: command.taskId, by: command.agent, reason: "no decision" })
        // The Architect may answer with a plan delta instead: here, a sharper done-when for the task.
        else if (command.agent === "architect" && rng() < 0.3)
          this.apply({ type: "consult.replanned", at, taskId: command.taskId, delta: { schemaVersion: 1, add: [], remove: [], modify: [{ id: command.taskId, patch: { doneWhen: `${command.taskId} works, as the Architect clarified at ${this.clock}` } }], supersedesAdrs: [] } })
        else this.apply({ type: "consult.answered", at, taskId: command.taskId, choice: pick(rng, command.options), by: command.agent })
        return true
      case "ask":
        if (this.answers > 0) {
          this.answers--
          // A failed baseline is answered "go on" or "fixed" (which runs it again); other questions in words.
          const baseline = this.state.baseline?.questionId === command.questionId
          const answer = baseline ? (rng() < 0.5 ? "go on" : "fixed") : "try again with more care"
          this.apply({ type: "question.answered", at, questionId: command.questionId, answer })
        }
        return true
      case "runBaseline": {
        // A failing baseline waits for an answer: it fails only while the simulated user still answers.
        if (this.answers >= 3 && rng() < this.options.trouble) {
          const buildFailed = rng() < 0.5
          this.apply({ type: "baseline.done", at, commit: `c${this.clock}`, status: "failed", buildFailed, failingTests: buildFailed ? [] : ["t0"], message: "it failed" })
        } else this.apply({ type: "baseline.done", at, commit: `c${this.clock}`, status: "passed", failingTests: [], message: "" })
        return true
      }
      case "reviewMilestone": {
        if (item.stage === 0) {
          item.stage = 1
          this.apply({ type: "milestone.reached", at, phase: command.phase })
          return false
        }
        if (this.fixes > 0 && rng() < 0.5) {
          this.fixes--
          const id = `FIX-${++this.fixCount}`
          this.apply({
            type: "milestone.reviewed",
            at,
            phase: command.phase,
            verdict: "fail",
            fixTasks: [{ id, title: `Fix the gap ${id}`, kind: "fix", phase: command.phase, deps: [], writeSet: [{ path: "src/fix.cpp", action: "modify", region: id }], keep: [], doneWhen: "the gap is closed", validation: [], adrRefs: [] }],
          })
        } else this.apply({ type: "milestone.reviewed", at, phase: command.phase, verdict: "pass" })
        return true
      }
      case "replan": {
        // An Architect whose delta is refused tries again with a smaller one, as the refusal tells it to.
        const delta = this.randomDelta()
        if (this.apply({ type: "delta.accepted", at, delta }) !== null)
          this.apply({ type: "delta.accepted", at: this.at(), delta: { ...delta, remove: [], modify: [], supersedesAdrs: [] } })
        return true
      }
      case "classifyAdr":
        this.apply({ type: "adr.classified", at, adr: command.adr, hash: command.hash, kind: pick(rng, ["clarification", "decision-change"] as const), note: "" })
        return true
      case "finish":
        this.apply({ type: "finalCheck.done", at, status: pick(rng, ["passed", "failed", "errored"] as const), message: "" })
        return true
      case "revert":
        // Reported done unless a later revert of the same landing took its place.
        if (this.state.reverts.some((r) => r.commandId === command.id)) this.apply({ type: "revert.done", at, taskId: command.taskId, round: command.round, status: "reverted" })
        return true
      case "deploy": {
        // Deploys are tested by the table and the SSH tests; here each one starts and passes.
        const commit = this.state.tasks.find((t) => t.merged)?.merged?.commit ?? "c0"
        this.apply({ type: "deploy.started", at, target: command.target, n: command.n, commit })
        this.apply({ type: "deploy.passed", at, target: command.target, n: command.n, commit, message: "ok", evidencePath: `.air/local/evidence/_deploy/${command.target}/${command.n}`, service: "active" })
        return true
      }
      case "abort":
      case "notify":
      case "plan":
        return true
    }
  }

  /** A delta that removes a task nobody live depends on, modifies another, supersedes ADR-1 or adds one. */
  private randomDelta() {
    const graph = this.state.graph!
    const live = graph.tasks.filter((t) => t.status !== "invalidated")
    const dependedOn = new Set(live.flatMap((t) => t.deps))
    const leaves = live.filter((t) => !dependedOn.has(t.id) && !t.adrRefs.includes("ADR-1"))
    const remove = leaves.length > 0 && this.rng() < 0.5 ? [pick(this.rng, leaves).id] : []
    const modifiable = live.filter((t) => !remove.includes(t.id))
    const modify = modifiable.length > 0 && this.rng() < 0.5 ? [{ id: pick(this.rng, modifiable).id, patch: { title: "Add the feature, second take" } }] : []
    const supersede = this.rng() < 0.3
    // Tasks citing a superseded ADR are invalidated, so nothing live may depend on them.
    const citing = new Set(live.filter((t) => t.adrRefs.includes("ADR-1")).map((t) => t.id))
    const supersedesAdrs = supersede && !live.some((t) => !citing.has(t.id) && t.deps.some((d) => citing.has(d)) && !modify.some((m) => m.id === t.id)) && !modify.some((m) => citing.has(m.id)) ? ["ADR-1"] : []
    const id = `ADD-${this.clock}`
    const add = [{ id, title: `Add the tab support ${id}`, kind: "code" as const, phase: Math.max(1, this.state.currentPhase), deps: [], writeSet: [{ path: "src/tabs.cpp", action: "modify" as const, region: id }], keep: [], doneWhen: "tabs parse", validation: [], adrRefs: [] }]
    return { schemaVersion: 1 as const, add, remove, modify, supersedesAdrs }
  }
}

/** Every status a task may end a run in. */
export const FINAL_STATUSES = new Set(["merged", "blocked", "invalidated"])

export function evidenceFor(kind: TaskNode["kind"]): Record<string, string> {
  return Object.fromEntries(requiredEvidence(undefined, kind).map((k) => [k, `evidence/${k}.txt`]))
}
