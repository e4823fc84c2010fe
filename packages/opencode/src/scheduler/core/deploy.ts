import { commandId, type Command } from "./command"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import { graphIndex } from "./graph-index"
import type { Question, SchedulerState } from "./state"
import { DEPLOY_ASK_CAUSES, type DeployCause, type DeployTarget } from "./deploy.schema"

/**
 * Done means where it runs (invariant 15): a deployable run — the plan says `deployable`, or the project's
 * deploy rules say every run — is done only when every target runs the merged build, checked by hash,
 * service state and smoke test. The deploy starts once the final check passed; a failed verification
 * (after the runtime rolled the target back) goes to the Debugger with the deploy evidence, an unreachable
 * target or a refused key to the user as one question naming the target and the cause.
 *
 * A phase the plan marks deployable (`graph.deployPhases`) deploys the same way once its tasks are merged
 * and its milestone review passed: every target, before any task of a later phase starts; a pass moves
 * the run on to the next phase, a failure goes where a run's failed deploy goes. The run's own deploy at
 * its end stays the rule that makes it done.
 */

export { DEPLOY_ASK_CAUSES, DEPLOY_CAUSES, DEPLOY_TARGET_STATUSES, DeployConfig, DeployState, DeployTarget, type DeployCause } from "./deploy.schema"

export function deployable(s: SchedulerState): boolean {
  const config = s.config?.deploy
  if (!config || config.targets.length === 0) return false
  return config.everyRun || s.graph?.deployable === true || (s.graph?.deployPhases?.length ?? 0) > 0
}

/** A phase the plan marks deployable, in a run with targets. */
function phaseDeployable(s: SchedulerState, phase: number): boolean {
  return (s.config?.deploy?.targets.length ?? 0) > 0 && (s.graph?.deployPhases ?? []).includes(phase)
}

/**
 * After a milestone passed (not the final one): a deployable phase deploys its merged build to every target
 * before the next phase starts. Returns whether it did (then the caller leaves the phase where it is).
 */
export function startPhaseDeploy(d: Draft, phase: number): boolean {
  const s = d.s
  if (!phaseDeployable(s, phase)) return false
  s.stage = "deploying"
  s.deploy = { targets: launchAll(d, phase), phase }
  d.notify(`phase ${phase} is merged and reviewed; deploying it to ${s.config!.deploy!.targets.join(", ")} before the next phase starts`)
  return true
}

/** One deploy per target, each numbered after the last deploy of that target in the run. */
function launchAll(d: Draft, phase?: number): DeployTarget[] {
  const before = new Map((d.s.deploy?.targets ?? []).map((t) => [t.name, t]))
  return d.s.config!.deploy!.targets.map((name) => launch(d, name, (before.get(name)?.n ?? 0) + 1, phase))
}

/** After finalCheck.done: a deployable run that finished done and passed its final check deploys now, instead of ending. */
export function startDeploy(d: Draft, e: EventOf<"finalCheck.done">): void {
  const s = d.s
  if (e.status !== "passed" || s.finished?.status !== "done" || !deployable(s)) return
  s.stage = "deploying"
  s.finished = null
  s.deploy = { targets: launchAll(d) }
  d.notify(`the final check passed; deploying to ${s.config!.deploy!.targets.join(", ")}`)
}

function launch(d: Draft, name: string, n: number, phase?: number): DeployTarget {
  const id = commandId.deploy(name, n)
  d.emit({ type: "deploy", id, target: name, n, ...(phase !== undefined ? { phase } : {}) })
  return { name, n, status: "running", commandId: id, commit: null, cause: null, message: "", evidencePath: null, hashMatch: null, service: null, smoke: null, rolledBack: false }
}

function current(d: Draft, name: string, n: number): DeployTarget | string {
  if (d.s.stage !== "deploying" || !d.s.deploy) return `no deploy is in progress (stage: ${d.s.stage})`
  const t = d.s.deploy.targets.find((x) => x.name === name)
  if (!t) return `unknown deploy target ${name}; targets: ${d.s.deploy.targets.map((x) => x.name).join(", ")}`
  if (t.n !== n) return `deploy ${n} of ${name} is not the current one (${t.n})`
  if (t.status !== "running") return `deploy ${n} of ${name} already ended (${t.status})`
  return t
}

function put(d: Draft, t: DeployTarget): void {
  d.s.deploy = { ...d.s.deploy!, targets: d.s.deploy!.targets.map((x) => (x.name === t.name ? t : x)) }
}

export function deployStarted(d: Draft, e: EventOf<"deploy.started">): string | undefined {
  const t = current(d, e.target, e.n)
  if (typeof t === "string") return t
  if (t.commit !== null && t.commit !== e.commit) return `deploy ${e.n} of ${e.target} carries ${t.commit}, not ${e.commit}`
  put(d, { ...t, commit: e.commit })
  return undefined
}

export function deployPassed(d: Draft, e: EventOf<"deploy.passed">): string | undefined {
  const t = current(d, e.target, e.n)
  if (typeof t === "string") return t
  if (t.commit !== e.commit) return `deploy ${e.n} of ${e.target} started for ${t.commit ?? "no commit"}, not ${e.commit}: the evidence is not for the merged commit`
  put(d, { ...t, status: "passed", message: e.message, evidencePath: e.evidencePath, hashMatch: true, service: e.service, smoke: "passed", rolledBack: false })
  d.notify(`deployed to ${e.target}: ${e.message}`)
  settleDeploy(d)
  return undefined
}

export function deployFailed(d: Draft, e: EventOf<"deploy.failed">): string | undefined {
  const t = current(d, e.target, e.n)
  if (typeof t === "string") return t
  const ask = DEPLOY_ASK_CAUSES.includes(e.cause)
  put(d, { ...t, status: ask ? "asked" : "failed", commit: t.commit ?? e.commit, cause: e.cause, message: e.message, evidencePath: e.evidencePath, hashMatch: e.hashMatch, service: e.service, smoke: e.smoke, rolledBack: e.rolledBack })
  if (ask) {
    const questionId = `deploy:${e.target}:${e.n}`
    const text = `The deploy to ${e.target} could not reach it (${causeWords(e.cause)}): ${unstopped(e.message)}. Nothing was changed on the target. Fix it and answer "retry" (or "stop" to end the run blocked).`
    const q: Question = { questionId, taskId: null, text, deploy: e.target }
    d.s.questions = [...d.s.questions, q]
    d.emit({ type: "ask", id: commandId.ask(questionId), questionId, text })
  } else d.notify(`the deploy to ${e.target} failed (${e.cause})${e.rolledBack ? "; the previous release was restored" : ""}: ${e.message}`)
  settleDeploy(d)
  return undefined
}

/** A message without its own closing full stop, for a sentence that goes on after it (ssh ends its messages with one). */
function unstopped(message: string): string {
  return message.trimEnd().replace(/\.+$/, "")
}

function causeWords(cause: DeployCause): string {
  return cause === "auth" ? "the key was refused" : cause === "host-key" ? "its host key is unknown or changed" : "it is unreachable"
}

/**
 * Once no target is in flight: every one passed → the run is done; a failed verification → the Debugger
 * on the task whose merge is the deployed commit (the run goes on: fix, gates, review, merge, final check,
 * deploy again); targets waiting on the user's answer keep the run waiting.
 */
function settleDeploy(d: Draft): void {
  const s = d.s
  const targets = s.deploy!.targets
  const phase = s.deploy!.phase
  if (targets.some((t) => t.status === "running")) return
  if (targets.every((t) => t.status === "passed") && phase !== undefined) {
    // The phase runs where it should: the next one starts.
    s.stage = "running"
    const next = graphIndex(d.graph).phases.find((p) => p > phase)
    if (next !== undefined) s.currentPhase = next
    d.notify(`phase ${phase} deployed and verified on ${targets.map((t) => t.name).join(", ")}${next !== undefined ? `; phase ${next} starts` : ""}`)
    d.schedule()
    return
  }
  if (targets.every((t) => t.status === "passed")) {
    s.stage = "finished"
    s.finished = { status: "done" }
    d.emit({ type: "finish", id: commandId.finish("done", s.eventCount), status: "done" })
    d.notify(`run finished: deployed and verified on ${targets.map((t) => t.name).join(", ")}`)
    return
  }
  const failed = targets.filter((t) => t.status === "failed")
  if (failed.length === 0) return
  const culprit = culpritTask(s, failed[0]!.commit, phase)
  const why = failed.map((t) => `${t.name}: ${t.cause} — ${unstopped(t.message)}`).join("; ")
  if (!culprit) {
    const questionId = `deploy:${failed[0]!.name}:${failed[0]!.n}`
    const text = `The deploy failed and no merged task can be sent to the Debugger: ${why}. Answer "retry" to deploy again, or "stop".`
    s.questions = [...s.questions, { questionId, taskId: null, text, deploy: failed[0]!.name }]
    d.emit({ type: "ask", id: commandId.ask(questionId), questionId, text })
    return
  }
  // The phase stays the current one: its fix is merged, reviewed and deployed again before the next starts.
  s.stage = "running"
  s.finalCheck = null
  d.repairOrConsult(culprit, "debugger", `the deploy failed: ${why}`, { source: "deploy", message: why, evidencePath: failed[0]!.evidencePath }, ["debug-again", "block"])
}

/** The task whose merge made the deployed commit; else the last merged task of the deployed phase (or of the graph). */
function culpritTask(s: SchedulerState, commit: string | null, phase?: number): string | undefined {
  const phaseOf = new Map((s.graph?.tasks ?? []).map((n) => [n.id, n.phase]))
  const merged = s.tasks.filter((t) => t.status === "merged" && t.merged && (phase === undefined || phaseOf.get(t.id) === phase))
  const exact = commit ? merged.find((t) => [t.merged!.commit, t.merged!.head].some((c) => c && (c.startsWith(commit) || commit.startsWith(c)))) : undefined
  return (exact ?? merged[merged.length - 1])?.id
}

/** The user answered a deploy question: "stop" ends the run blocked; anything else deploys that target again. */
export function answerDeploy(d: Draft, question: Question, answer: string): void {
  const s = d.s
  s.questions = s.questions.filter((q) => q !== question)
  const name = question.deploy!
  if (/^\s*(stop|no|cancel|abort)\b/i.test(answer)) {
    if (s.questions.some((q) => q.deploy !== undefined)) return
    if (s.deploy?.phase !== undefined) {
      // A phase's deploy stopped: the later phases wait, parked, and the run ends blocked.
      s.stage = "running"
      d.notify(`the deploy of phase ${s.deploy.phase} to ${name} was not retried; the later phases wait`)
      d.finishBlocked()
      return
    }
    s.stage = "finished"
    s.finished = { status: "blocked" }
    d.emit({ type: "finish", id: commandId.finish("blocked", s.eventCount), status: "blocked" })
    d.notify(`run stopped, blocked: the deploy to ${name} was not retried`)
    return
  }
  const t = s.deploy?.targets.find((x) => x.name === name)
  if (!t) return
  put(d, launch(d, name, t.n + 1, s.deploy!.phase))
  d.notify(`deploying to ${name} again (the user answered)`)
}

/** Deploys the state still waits on: carried out again with their ids after a restart (they resume from their progress). */
export function outstandingDeploys(s: SchedulerState): Command[] {
  if (s.stage !== "deploying" || !s.deploy) return []
  const phase = s.deploy.phase
  return s.deploy.targets.filter((t) => t.status === "running").map((t) => ({ type: "deploy", id: t.commandId, target: t.name, n: t.n, ...(phase !== undefined ? { phase } : {}) }))
}
