import type { Command } from "../../src/scheduler/core/command"
import type { PlanDelta } from "../../src/scheduler/core/delta.schema"
import type { Event, RunConfig } from "../../src/scheduler/core/event.schema"
import type { FailureRoute } from "../../src/scheduler/core/gate-route"
import { transition } from "../../src/scheduler/core/machine"
import { initialState, type SchedulerState } from "../../src/scheduler/core/state"
import type { TaskGraph, TaskNode, TaskNodeInput } from "../../src/scheduler/core/task.schema"
import type { WorkerRole } from "../../src/scheduler/core/vocabulary"
import { TEST_CONFIG } from "./simulate"

export const AT = "2026-01-01T00:00:00.000Z"

export function task(id: string, fields: Partial<TaskNodeInput> = {}): TaskNode {
  return {
    id,
    title: `Add ${id}`,
    kind: "code",
    phase: 1,
    deps: [],
    writeSet: [{ path: `src/${id}.cpp`, action: "modify" }],
    keep: [],
    doneWhen: `${id} works`,
    validation: [],
    adrRefs: [],
    ...fields,
  } as TaskNode
}

export function delta(fields: Partial<PlanDelta>): PlanDelta {
  return { schemaVersion: 1, add: [], remove: [], modify: [], supersedesAdrs: [], ...fields }
}

export function graphOf(...tasks: TaskNode[]): TaskGraph {
  return { schemaVersion: 1, tasks }
}

type NoAt<E> = E extends Event ? Omit<E, "at"> : never
export type EventInput = NoAt<Event>

export function ev(event: EventInput): Event {
  return { ...event, at: AT } as Event
}

/** Applies events that must all be accepted; returns the last state and the commands of the last event. */
export function apply(state: SchedulerState, ...events: EventInput[]): { state: SchedulerState; commands: Command[] } {
  let current = state
  let commands: Command[] = []
  for (const event of events) {
    const result = transition(current, ev(event))
    if ("refused" in result) throw new Error(`${event.type} refused: ${result.refused}`)
    current = result.state
    commands = result.commands
  }
  return { state: current, commands }
}

export function started(graph: TaskGraph, config: Partial<RunConfig> = {}): { state: SchedulerState; commands: Command[] } {
  return apply(
    initialState(),
    { type: "run.started", runId: "r1", requirement: "req", config: { ...TEST_CONFIG, ...config } },
    { type: "plan.proposed", summary: "plan" },
    { type: "plan.confirmed" },
    { type: "graph.accepted", graph },
  )
}

export function statusOf(state: SchedulerState, id: string): string | undefined {
  return state.tasks.find((t) => t.id === id)?.status
}

export function runtimeOf(state: SchedulerState, id: string) {
  const t = state.tasks.find((x) => x.id === id)
  if (!t) throw new Error(`no task ${id}`)
  return t
}

/** The steps that take a dispatched executor through to a given point. */
export const steps = {
  dispatched: (id: string, attempt = 1, role: WorkerRole = "executor", sessionId = `s-${id}-${attempt}`): EventInput => ({ type: "task.dispatched", taskId: id, role, sessionId, attempt }),
  reported: (id: string, attempt = 1, role: WorkerRole = "executor", sessionId = `s-${id}-${attempt}`): EventInput => ({ type: "worker.reported", taskId: id, sessionId, result: { taskId: id, role, summary: "done" } }),
  gatesPassed: (id: string): EventInput => ({ type: "gates.passed", taskId: id, evidence: { diff: "d", build: "b", test: "t", analysis: "a" } }),
  /** Without `route`: an event as logs before routes were carried wrote it (the machine reads its route from the gate id). */
  gatesFailed: (id: string, gate: string, route?: FailureRoute): EventInput => ({ type: "gates.failed", taskId: id, gate, ...(route ? { route } : {}), message: `${gate} broke`, evidencePath: `ev/${id}/${gate}` }),
  reviewStarted: (id: string): EventInput => ({ type: "review.started", taskId: id, sessionId: `rv-${id}` }),
  reviewPass: (id: string): EventInput => ({ type: "review.reported", taskId: id, report: { taskId: id, verdict: "pass", rows: [{ designRef: "R1", code: "f", status: "match", note: "" }], findings: [] } }),
  reviewFail: (id: string): EventInput => ({ type: "review.reported", taskId: id, report: { taskId: id, verdict: "fail", rows: [{ designRef: "R1", code: "f", status: "missing", note: "no tests" }], findings: ["add tests"] } }),
  merged: (id: string): EventInput => ({ type: "merge.succeeded", taskId: id, commit: `c-${id}`, tag: `air/done/${id}` }),
}

/** Carries a dispatched task through its session (confirming the dispatch if needed), gates, review and merge. */
export function complete(state: SchedulerState, id: string) {
  const t = runtimeOf(state, id)
  const attempt = t.attempts
  const confirm = t.sessionId === null ? [steps.dispatched(id, attempt, t.role ?? "executor")] : []
  const sessionId = t.sessionId ?? `s-${id}-${attempt}`
  return apply(state, ...confirm, steps.reported(id, attempt, t.role ?? "executor", sessionId), steps.gatesPassed(id), steps.reviewPass(id), steps.merged(id))
}

/** The Architect's final review of the last phase, started and passed: the run may then finish done. */
export function passFinalReview(state: SchedulerState) {
  const m = state.milestone
  if (!m?.final) throw new Error(`no final review is due (stage: ${state.stage})`)
  return apply(state, { type: "milestone.reached", phase: m.phase }, { type: "milestone.reviewed", phase: m.phase, verdict: "pass" })
}
