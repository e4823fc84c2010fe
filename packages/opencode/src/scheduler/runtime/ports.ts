import { existsSync } from "node:fs"
import type { PluginInput } from "@opencode-ai/plugin"
import type { Event } from "../core/event.schema"
import type { Inbox } from "./sessions/inbox"
import type { SchedulerState } from "../core/state"
import { ChildSessions } from "./sessions/sessions"
import { ModelInput } from "./sessions/model-input"
import { inputPricePerMTok, SessionCosts } from "./sessions/cost"
import { Gates } from "./gates/index"
import { MergeQueue } from "./integration/merge"
import { Worktrees } from "./git/worktree"
import { SandboxLeftovers } from "./sandbox/leftovers"
import { FinalCheck } from "./integration/final-check"
import { Baseline } from "./integration/baseline"
import { git } from "./git/git"
import { Settings } from "./settings"
import { oneLine, RateLimiter, retryClass, type RetryStatus } from "./sessions/rate-limiter"
import { Adrs } from "./adrs"
import { farmDegradedEvent } from "./gates/farm-event"
import { BaseFindings } from "./gates/base-findings"
import { MergeBuild } from "./integration/merge-build"
import { BuildSlot } from "./slots/build-slot.ts"
import { RepairPatterns } from "../../knowledge/patterns"
import { TraceSpans } from "./trace/spans"

/** An event before the runtime stamps its time. */
export type EventInput = Event extends infer E ? (E extends Event ? Omit<E, "at"> & { at?: string } : never) : never

/** What applying an event to the store gave: accepted (its commands are being carried out) or refused. */
export type Applied = { ok: true } | { ok: false; reason: string }

/** The run's log: events go in one at a time; the state is the fold of what was accepted. */
export type LogPort = {
  apply(event: EventInput): Promise<Applied>
  /** The state now (undefined before the store is open). */
  state(): SchedulerState | undefined
  /** The state once the store is open. */
  opened(): Promise<SchedulerState>
}

/** The engine's child sessions, as the supervisor drives them. */
export type SessionsPort = {
  create(spec: { parentID?: string; agent: string; directory: string; title: string }, onOutcome: (o: ChildSessions.Outcome) => void): Promise<string>
  /** `images` are sent only where `takesImages` said yes (the caller asks first: its text says whether they are attached). */
  prompt(sessionID: string, text: string, images?: readonly ModelInput.Image[]): Promise<void>
  /** Whether `agent`'s model takes images (absent: never). */
  takesImages?(agent: string, directory: string): Promise<boolean>
  /** Watches again a session the Scheduler let go when its turn ended (the Architect between proposal and answer). */
  adopt(spec: { sessionID: string; agent: string; directory: string }, onOutcome: (o: ChildSessions.Outcome) => void): void
  abort(sessionID: string): Promise<void>
  release(sessionID: string): void
  stalled(inactivityMs: number): string[]
  /** `estimated`: tokens of calls the provider reported none for, estimated; `ratio`: the provider's figures over the estimate. */
  stats(sessionID: string): { requests: number; tokens: number; agent: string; estimated?: number; ratio?: number; model?: string } | undefined
  /** What the session's requests cost in USD, and how many had no price (absent: the port does not know). */
  cost?(sessionID: string): SessionCosts.Cost | undefined
  /** USD per million input tokens of the sessions' model (null: it has no price). */
  inputPrice?(): Promise<number | null>
  ids(): string[]
}

/** `farmDegraded`: what a gate run's farm.json says of farm hosts lost mid-build (undefined: none lost, or no farm). */
export type GatesPort = { run: typeof Gates.run; farmDegraded: typeof farmDegradedEvent }
/**
 * `verify`: the merge build of a candidate (a build and tests in the kept `_merge` worktree); `recordGated`: the
 * ref of the tree a task's gates built, so the merge builds only a candidate that differs from it.
 */
export type MergePort = {
  mergeBatch: typeof MergeQueue.mergeBatch
  revert: typeof MergeQueue.revert
  verify: typeof MergeBuild.verify
  recordGated(root: string, taskId: string): Promise<unknown>
}
export type WorktreesPort = {
  create: typeof Worktrees.create
  remove: typeof Worktrees.remove
  pathFor: typeof Worktrees.pathFor
  diff: typeof Worktrees.diff
  setAside: typeof Worktrees.setAside
  /** The air/done tag of a task's landing (its name only: a revert's words cite the commit it points at). */
  doneTag: typeof Worktrees.doneTag
}
/** The run's caches beside the task worktrees (the merge build's worktree, the analysis's base tree, the build slots): dropped at its end. */
export type HelperTreesPort = { drop(root: string): Promise<void> }
/** `build`: the build commands alone, before a deploy stages the artefacts (absent in fakes: nothing is built). */
export type FinalCheckPort = { run: typeof FinalCheck.run; read: typeof FinalCheck.read; build?: typeof FinalCheck.build }
export type BaselinePort = { run: typeof Baseline.run }
export type GitPort = (cwd: string, args: string[]) => Promise<string>

/** The file system as far as the runtime asks it directly. */
export type FsPort = { exists(path: string): boolean }

/** The ADR files (`docs/adr/`) and the copies the run keeps of the accepted ones (adrs.ts). */
export type AdrsPort = Pick<typeof Adrs, "changes" | "keep" | "list" | "kept" | "textWithHash">

/** The knowledge folder: a Debugger's repair that passed becomes a repair pattern (knowledge/patterns.ts). */
export type KnowledgePort = { learn(root: string, taskId: string): void }

/** Time as the runtime reads it: the machine never does. */
export type ClockPort = {
  now(): number
  /** Calls `fn` every `ms` until the returned stop is called (never keeps the process alive). */
  every(ms: number, fn: () => void): () => void
  /** Resolves after `ms`: a wait before trying again, or between looks at the state. */
  sleep(ms: number): Promise<void>
}

/** Everything the interpreter, supervisor, clock and recovery reach outside themselves. */
export type Ports = {
  root: string
  inbox: Inbox
  log: LogPort
  sessions: SessionsPort
  gates: GatesPort
  merge: MergePort
  worktrees: WorktreesPort
  finalCheck: FinalCheckPort
  /** The integration head built and tested before the first dispatch (`runBaseline`). */
  baseline: BaselinePort
  git: GitPort
  fs: FsPort
  helperTrees: HelperTreesPort
  adrs: AdrsPort
  knowledge: KnowledgePort
  clock: ClockPort
  settings(): Settings.Settings
  /** Told of each session the Scheduler starts (the guard learns its role and worktree). */
  onSessionStarted(sessionID: string, info: { agent: string; directory: string; worktree?: string; taskId?: string }): void
}

type Client = PluginInput["client"]

/**
 * The port's git calls are quick questions and ref updates (rev-parse, log, update-ref): one that hangs — a
 * lock held by a dead process on a network disk, a hook that waits — must end as an error the caller already
 * handles, not hold the Scheduler's step for ever.
 */
const PORT_GIT_TIMEOUT_MS = 60_000

/** The git port with a time bound on every call (stopped with its process group, then a GitCommandError). */
export function boundedGit(timeoutMs: number): GitPort {
  return (cwd, args) => git(cwd, args, { timeoutMs })
}

/** The real ports: the engine's sessions, git, the gates, the merge queue, the wall clock. */
export function realPorts(root: string, client: Client, inbox: Inbox, log: LogPort, onSessionStarted: Ports["onSessionStarted"]): Ports {
  const git = boundedGit(PORT_GIT_TIMEOUT_MS)
  return {
    root,
    inbox,
    log,
    sessions: rateLimitedSessions(
      client,
      runLimiter(root, log),
      (notice) => {
        const state = log.state()
        if (state?.runId) void log.apply(retryingEvent(notice, state))
      },
      (id) => traceparentOf(log.state(), id),
    ),
    gates: { run: Gates.run, farmDegraded: farmDegradedEvent },
    merge: { mergeBatch: MergeQueue.mergeBatch, revert: MergeQueue.revert, verify: MergeBuild.verify, recordGated: gatedRecorder(git) },
    worktrees: {
      create: Worktrees.create,
      remove: Worktrees.remove,
      pathFor: Worktrees.pathFor,
      diff: Worktrees.diff,
      // A killed attempt's sandbox still at work there is ended first: nothing of it may land after the reset.
      setAside: (dir, patchFile) => {
        SandboxLeftovers.end(dir)
        return Worktrees.setAside(dir, patchFile)
      },
      doneTag: Worktrees.doneTag,
    },
    helperTrees: { drop: dropHelperTrees },
    adrs: Adrs,
    knowledge: { learn: RepairPatterns.learn },
    finalCheck: { run: FinalCheck.run, read: FinalCheck.read, build: FinalCheck.build },
    baseline: { run: Baseline.run },
    git,
    fs: { exists: existsSync },
    clock: {
      now: () => Date.now(),
      every(ms, fn) {
        const timer = setInterval(fn, ms)
        timer.unref?.()
        return () => clearInterval(timer)
      },
      sleep: realSleepClock.sleep,
    },
    settings: () => Settings.load(root),
    onSessionStarted,
  }
}

/** `recordGated` through `git`: the gated ref at the task branch's tip. */
export function gatedRecorder(git: GitPort): MergePort["recordGated"] {
  return (root, taskId) => git(root, ["update-ref", MergeBuild.gatedRef(taskId), `refs/heads/${Worktrees.branchName(taskId)}^{commit}`])
}

/** Drops the helper trees of the repository `root` is in: caches, never work, so one that will not go is left as it is. */
async function dropHelperTrees(root: string): Promise<void> {
  const top = await Worktrees.repoRoot(root).catch(() => undefined)
  if (!top) return
  await MergeBuild.dropWorktree(top).catch(() => undefined)
  await BaseFindings.dropTree(top).catch(() => undefined)
  await BuildSlot.dropAll(top).catch(() => undefined)
}

/**
 * The run's one rate limiter, with its changes as events: a 429 on any session pauses every new model call
 * and lowers the number of tasks at work (rate.limited), calls that succeed again raise it (rate.eased).
 */
export function runLimiter(root: string, log: LogPort, clock: { now(): number; sleep(ms: number): Promise<void> } = realSleepClock): () => RateLimiter {
  let limiter: RateLimiter | undefined
  return () => {
    if (limiter) return limiter
    const settings = Settings.load(root)
    limiter = new RateLimiter({
      concurrency: log.state()?.config?.concurrency ?? settings.concurrency,
      maxAttempts: settings.retryAttempts,
      maxMs: settings.retryMinutes * 60_000,
      clock,
      onChange(change) {
        if (change.kind === "paused")
          void log.apply({ type: "rate.limited", until: new Date(change.until).toISOString(), cap: change.cap, sessionId: change.sessionId, message: change.message })
        else void log.apply({ type: "rate.eased", cap: change.cap })
      },
    })
    return limiter
  }
}

const realSleepClock = { now: () => Date.now(), sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) }

/** The engine waits to retry one session's call: who it is (its agent) and the engine's status. */
export type RetryNotice = { sessionId: string; agent: string; status: RetryStatus }

/**
 * `model.retrying` for a notice: the task is the one whose current worker or reviewer the session is (none
 * for the Architect's steps), so the views can say "T-2: the executor's model call retries at 10:04:05".
 */
export function retryingEvent(notice: RetryNotice, state: SchedulerState): EventInput {
  const task = state.tasks.find((t) => t.sessionId === notice.sessionId || t.reviewSessionId === notice.sessionId)
  return {
    type: "model.retrying",
    sessionId: notice.sessionId,
    role: notice.agent,
    ...(task ? { taskId: task.id } : {}),
    attempt: Math.max(1, notice.status.attempt),
    nextAt: new Date(notice.status.next).toISOString(),
    message: oneLine(notice.status.message),
  }
}

/**
 * The `traceparent` a prompt to session `id` carries (none before a run began): a task's current worker or reviewer
 * has a span of its own in the run's trace (TraceSpans.derive opens one for each), any other session hangs under the run.
 */
export function traceparentOf(state: SchedulerState | undefined, id: string): string | undefined {
  if (!state?.runId) return undefined
  const ofTask = state.tasks.some((t) => t.sessionId === id || t.reviewSessionId === id)
  return TraceSpans.traceparent(state.runId, ofTask ? id : undefined)
}

/**
 * The engine's sessions behind the run's limiter: a new session and every prompt (a nudge, an answer) wait
 * until new model calls are allowed; each session's retries are watched, and one retried past the bound is
 * given up on with the class of its error. Any other retry is told to `onRetrying` (a 429 is the limiter's
 * own news: the run's pause), so a wait the engine keeps in silence shows where the user looks.
 */
export function rateLimitedSessions(
  client: Client,
  limiter: () => RateLimiter,
  onRetrying: (notice: RetryNotice) => void = () => {},
  traceparent: (sessionId: string) => string | undefined = () => undefined,
): SessionsPort {
  const watch = (id: string, agent: string): ChildSessions.RetryWatch => ({
    onRetry(status) {
      const verdict = limiter().onRetry(id, status)
      if (verdict.giveUp) void ChildSessions.giveUp(client, id, { kind: "error", message: `${verdict.cause}: ${verdict.message}`, retryClass: verdict.cause })
      else if (retryClass(status.message) !== "rate-limit") onRetrying({ sessionId: id, agent, status })
    },
    onSuccess: () => limiter().onSuccess(id),
  })
  return {
    async create(spec, onOutcome) {
      await limiter().acquire()
      const id = await ChildSessions.create(client, spec, onOutcome)
      ChildSessions.watchRetries(id, watch(id, spec.agent))
      return id
    },
    async prompt(id, text, images) {
      await limiter().acquire()
      return ChildSessions.prompt(client, id, text, Date.now(), images, traceparent(id))
    },
    takesImages: (agent, directory) => ModelInput.takesImages(client, agent, directory),
    adopt(spec, onOutcome) {
      ChildSessions.adopt(spec, onOutcome)
      ChildSessions.watchRetries(spec.sessionID, watch(spec.sessionID, spec.agent))
    },
    abort(id) {
      limiter().forget(id)
      return ChildSessions.abort(client, id)
    },
    release: ChildSessions.release,
    stalled: (ms) => ChildSessions.stalled(ms),
    stats: ChildSessions.stats,
    cost: SessionCosts.of,
    inputPrice: () => inputPricePerMTok(client),
    ids: ChildSessions.ids,
  }
}
