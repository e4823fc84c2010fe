import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Command } from "../../src/scheduler/core/command"
import type { MergeQueue } from "../../src/scheduler/runtime/integration/merge"
import type { Event } from "../../src/scheduler/core/event.schema"
import { Inbox } from "../../src/scheduler/runtime/sessions/inbox"
import { transition } from "../../src/scheduler/core/machine"
import { outstanding } from "../../src/scheduler/core/outstanding"
import { Settings } from "../../src/scheduler/runtime/settings"
import type { SchedulerState } from "../../src/scheduler/core/state"
import type { ChildSessions } from "../../src/scheduler/runtime/sessions/sessions"
import { Clock } from "../../src/scheduler/runtime/sessions/clock"
import { Interpreter } from "../../src/scheduler/runtime/interpreter"
import { gatedRecorder, type EventInput, type GitPort, type Ports } from "../../src/scheduler/runtime/ports"
import type { InterpreterPorts } from "../../src/scheduler/runtime/interpreter-ports"
import { Adrs } from "../../src/scheduler/runtime/adrs"
import { ContextPack } from "../../src/scheduler/runtime/sessions/context-pack"
import { EvidencePack } from "../../src/scheduler/runtime/sessions/evidence-pack"
import { OverflowCarry } from "../../src/scheduler/runtime/sessions/overflow-carry"
import { WorkerSession } from "../../src/scheduler/runtime/sessions/worker-session"
import { RunReport } from "../../src/scheduler/runtime/report/run-report"
import { farmDegradedEvent } from "../../src/scheduler/runtime/gates/farm-event"
import { MergeBuild } from "../../src/scheduler/runtime/integration/merge-build"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree"
import { DeployStep } from "../../src/scheduler/runtime/deploy/step"
import { RepairPatterns } from "../../src/knowledge/patterns"
import { Supervisor } from "../../src/scheduler/runtime/sessions/supervisor"
import { AT } from "../scheduler/fixtures"

/**
 * The interpreter's world made of fakes: the log is the real machine folding in memory (so a rule that is
 * missing or refuses shows up), every other port records its calls and does what the test tells it.
 * Commands the machine issues are collected, not carried out: the test runs the ones it means to.
 */
export class FakeWorld {
  readonly root = mkdtempSync(join(tmpdir(), "air-interp-"))
  readonly inbox = new Inbox()
  state: SchedulerState
  readonly accepted: Event[] = []
  readonly refused: { event: EventInput; reason: string }[] = []
  readonly issued: Command[] = []
  readonly calls: string[] = []
  /** The text of each session prompt, by session id. */
  readonly prompts = new Map<string, string>()
  readonly outcomes = new Map<string, (o: ChildSessions.Outcome) => void>()
  readonly existing = new Set<string>()
  gates: Ports["gates"]["run"] = async () => {
    throw new Error("gates not scripted")
  }
  /** One task's merge; a batch is merged task by task through it (a throw stops the whole batch). */
  mergeImpl: (input: MergeQueue.MergeInput) => Promise<MergeQueue.MergeResult> = async () => {
    throw new Error("merge not scripted")
  }
  finalCheckImpl: Ports["finalCheck"]["run"] = async () => ({ passed: true, summary: "integration branch builds", evidenceDir: "", commands: [] })
  baselineImpl: Ports["baseline"]["run"] = async () => {
    throw new Error("baseline not scripted")
  }
  finalCheckFile: ReturnType<Ports["finalCheck"]["read"]> = undefined
  /** What the engine says each session used (completed assistant messages and their tokens). */
  readonly stats = new Map<string, { requests: number; tokens: number; agent: string; estimated?: number; ratio?: number }>()
  revertImpl: Ports["merge"]["revert"] = async () => {
    throw new Error("revert not scripted")
  }
  /** What the fake clock says now. */
  now = Date.parse(AT)
  private sessions = 0
  readonly ports: InterpreterPorts
  readonly supervisor: Supervisor
  readonly clock: Clock
  readonly interpreter: Interpreter

  constructor(state: SchedulerState) {
    this.state = state
    // What the state waits on is what the runtime was asked to do before the test looks.
    this.issued.push(...outstanding(state))
    const world = this
    const git: GitPort = async (_cwd, args) => {
      world.calls.push(`git ${args.join(" ")}`)
      throw new Error("no such ref")
    }
    this.ports = {
      root: this.root,
      inbox: this.inbox,
      log: {
        async apply(event) {
          const result = transition(world.state, { ...event, at: event.at ?? AT } as Event)
          if ("refused" in result) {
            world.refused.push({ event, reason: result.refused })
            return { ok: false, reason: result.refused }
          }
          world.state = result.state
          world.accepted.push({ ...event, at: AT } as Event)
          world.issued.push(...result.commands)
          return { ok: true }
        },
        state: () => world.state,
        opened: async () => world.state,
      },
      sessions: {
        async create(spec, onOutcome) {
          const id = `sess-${++world.sessions}`
          world.calls.push(`session.create ${spec.agent} ${spec.title}`)
          world.outcomes.set(id, onOutcome)
          return id
        },
        async prompt(id, text) {
          world.calls.push(`session.prompt ${id}`)
          world.prompts.set(id, text)
        },
        async abort(id) {
          world.calls.push(`session.abort ${id}`)
        },
        adopt(spec, onOutcome) {
          world.calls.push(`session.adopt ${spec.agent} ${spec.sessionID}`)
          world.outcomes.set(spec.sessionID, onOutcome)
        },
        release() {},
        stalled: () => [],
        stats: (id) => world.stats.get(id),
        ids: () => [...world.stats.keys()],
      },
      gates: { run: (input) => world.gates(input), farmDegraded: farmDegradedEvent },
      merge: {
        mergeBatch: async ({ tasks, ...rest }) => {
          const outcomes: MergeQueue.BatchOutcome[] = []
          for (const task of tasks) outcomes.push({ taskId: task.taskId, ...(await world.mergeImpl({ ...rest, ...task })) } as MergeQueue.BatchOutcome)
          return { outcomes }
        },
        revert: (input) => world.revertImpl(input),
        verify: MergeBuild.verify,
        // Through the world's git as it is when called: a test may replace `ports.git`.
        recordGated: (root, taskId) => gatedRecorder(world.ports.git)(root, taskId),
      },
      worktrees: {
        create: async (_root, taskId) => ({ path: join(world.root, ".air/local/worktrees", taskId), branch: `air/task/${taskId}`, base: "main", created: true }) as never,
        remove: async (_root, taskId) => {
          world.calls.push(`worktree.remove ${taskId}`)
          world.existing.delete(join(world.root, ".air/local/worktrees", taskId))
          return { removed: true }
        },
        pathFor: (root, taskId) => join(root, ".air/local/worktrees", taskId),
        diff: async () => "",
        setAside: async () => undefined,
        doneTag: Worktrees.doneTag,
      },
      finalCheck: {
        run: async (root) => {
          world.calls.push("finalCheck.run")
          return world.finalCheckImpl(root)
        },
        read: () => world.finalCheckFile,
      },
      baseline: {
        run: (root, ref) => {
          world.calls.push(`baseline.run ${ref}`)
          return world.baselineImpl(root, ref)
        },
      },
      git,
      fs: { exists: (path) => world.existing.has(path) },
      // The fake root is no repository: the run leaves no helper trees to drop.
      helperTrees: { drop: async () => undefined },
      // The rest read and write the fake root's files as the real run does: a test replaces one to watch it.
      adrs: Adrs,
      context: { pack: ContextPack, evidence: EvidencePack, worker: WorkerSession.spec, overflow: OverflowCarry },
      knowledge: { learn: RepairPatterns.learn },
      report: { endText: RunReport.endText },
      deploy: { step: DeployStep.run },
      clock: { now: () => world.now, every: () => () => undefined, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
      settings: () => Settings.Schema.parse({}),
      onSessionStarted() {},
    }
    this.clock = new Clock(this.ports, () => this.supervisor)
    this.supervisor = new Supervisor(this.ports, () => undefined, (ids) => this.clock.reportUsage(ids))
    this.interpreter = new Interpreter(this.ports, this.supervisor, this.clock, () => "main")
  }

  /** The commands issued so far of one type, and forgets them. */
  take<T extends Command["type"]>(type: T): Extract<Command, { type: T }>[] {
    const found = this.issued.filter((c) => c.type === type) as Extract<Command, { type: T }>[]
    for (const c of found) this.issued.splice(this.issued.indexOf(c), 1)
    return found
  }

  types(): string[] {
    return this.accepted.map((e) => e.type)
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true })
  }
}
