import { z } from "zod"
import type { Draft } from "./draft"
import type { Question, SchedulerState } from "./state"

import type { BaselineStatus } from "./vocabulary"
export { BASELINE_STATUSES, BaselineState, type BaselineStatus } from "./vocabulary"
export { baselineHolds } from "./state"

/**
 * The baseline: the integration head built and tested once, before the first dispatch, so a failure the
 * project already had is never blamed on a task (issue 12). These are its rules; the machine calls them.
 *
 * - With `config.baseline` on, `runBaseline` is emitted once the run will not stop for the user before its
 *   graph (`startBaselineOnce`): at `run.started` when the plan is confirmed automatically, else at
 *   `plan.confirmed`, so it runs while the Architect plans; `graph.accepted` starts it only if neither did (a
 *   log written before). Nothing is dispatched until `baseline.done` arrives (and, while it runs, the run
 *   cannot settle as blocked either).
 * - passed (or skipped): the tasks start.
 * - failed or errored: ONE question (the failing command, the first error, "fixed" or "go on"). "go on"
 *   records the failures as known (`accepted`) and the tasks start; any other answer means the user fixed
 *   it: the baseline runs again (a new command id) and asks again if it still fails.
 * - A task's build failing while the baseline's build failed and was accepted is not the task's fault: it
 *   is blocked with a question instead of going to the Debugger (see `inheritedBuildFailure`). Tests that
 *   failed on the baseline are filtered by the test gate (the runtime passes `failingTests` to it).
 */


/** What a baseline run records, as far as its `baseline.done` event carries it. */
export type BaselineRun = { commit: string; status: BaselineStatus; build: { ran: boolean; passed: boolean }; failingTests: string[]; message: string }

/** The baseline.done event's fields for a baseline run's record. */
export function baselineDone(record: BaselineRun): { commit: string; status: BaselineStatus; buildFailed: boolean; failingTests: string[]; message: string } {
  return { commit: record.commit, status: record.status, buildFailed: record.build.ran && !record.build.passed, failingTests: record.failingTests, message: record.message }
}

const baselineCommandId = (runs: number) => `baseline:${runs}`

/** "go on" (and its kin, en and zh) accepts the failures; anything else says the user fixed it. */
const GO_ON = /^\s*(go\s*on|go|continue|proceed|known|accept|ignore|继续|接受|忽略)\b/i
function isGoOn(answer: string): boolean {
  return GO_ON.test(answer)
}


/** Emits the baseline's command (the first, or again after the user fixed what failed). */
function startBaseline(d: Draft): void {
  const runs = (d.s.baseline?.runs ?? 0) + 1
  const id = baselineCommandId(runs)
  // The last record's commit and failures stay while it runs: gates running meanwhile still judge by them.
  const last = d.s.baseline
  d.s.baseline = { commandId: id, runs, status: "running", commit: last?.commit ?? null, buildFailed: last?.buildFailed ?? false, failingTests: last?.failingTests ?? [], message: "", accepted: last?.accepted ?? false, questionId: null }
  d.emit({ type: "runBaseline", id })
  d.notify(runs === 1 ? "building and testing the integration branch once before the first task (the baseline)" : "building and testing the integration branch again (the baseline)")
}

/**
 * Starts the run's first baseline unless one was started. Not before the run's last stop for the user ahead of its
 * graph: a headless run exits at an unconfirmed plan, and a baseline cut off there would only be run again.
 */
export function startBaselineOnce(d: Draft): void {
  if (d.s.config?.baseline && !d.s.baseline) startBaseline(d)
}

interface BaselineDone {
  commit: string
  status: BaselineStatus
  buildFailed?: boolean | undefined
  failingTests: string[]
  message: string
}

export function recordBaseline(d: Draft, e: BaselineDone): string | undefined {
  const b = d.s.baseline
  if (!b || b.status !== "running") return `no baseline is running (${b ? `the last one ${b.status}` : "none was started"})`
  const failed = e.status === "failed" || e.status === "errored"
  const questionId = failed ? `baseline:${b.runs}:question` : null
  // Failures are known only once the user says so for this record (a re-run after "fixed", a moved branch).
  d.s.baseline = { ...b, status: e.status, commit: e.commit, buildFailed: e.buildFailed ?? false, failingTests: [...e.failingTests], message: e.message, questionId, accepted: failed ? false : b.accepted }
  const short = e.commit.slice(0, 12)
  if (!failed) {
    d.notify(e.status === "skipped" ? `baseline skipped: ${e.message}` : `baseline of ${short} passed`)
    d.schedule()
    return undefined
  }
  const what =
    e.status === "errored"
      ? `could not be built and tested (${e.message})`
      : e.buildFailed
        ? `does not build: ${e.message}`
        : `has failing tests (${e.failingTests.join(", ") || "unnamed"}): ${e.message}`
  const text =
    `Before any task starts: the integration branch (${short}) ${what}. ` +
    `Fix it first (answer "fixed" when it is, and the baseline runs again), or answer "go on" to continue with these failures recorded as known (no task is blamed for them).`
  const question: Question = { questionId: questionId!, taskId: null, text }
  d.s.questions = [...d.s.questions, question]
  d.emit({ type: "ask", id: `ask:${question.questionId}`, questionId: question.questionId, text })
  d.notify(`baseline of ${short} ${e.status}; waiting for the user`)
  return undefined
}

export function isBaselineQuestion(s: SchedulerState, question: Question): boolean {
  return s.baseline?.questionId === question.questionId
}

export function answerBaseline(d: Draft, question: Question, answer: string): void {
  d.s.questions = d.s.questions.filter((q) => q !== question)
  const b = d.s.baseline!
  if (isGoOn(answer)) {
    d.s.baseline = { ...b, accepted: true, questionId: null }
    d.notify(`going on with the baseline's failures recorded as known: ${b.buildFailed ? "the build" : b.failingTests.join(", ") || b.message}`)
    d.schedule()
  } else startBaseline(d)
}

/** A task's build failed, and so did the baseline's, which the user accepted: the task did not cause it. */
export function inheritedBuildFailure(s: SchedulerState): boolean {
  return s.baseline !== null && s.baseline.buildFailed && s.baseline.accepted
}

/**
 * Someone else moved the integration branch during the run (not AirCoding's own merges, which the runtime
 * recognises): the baseline is taken again before the next dispatch.
 */
export function integrationMoved(d: Draft, commit: string): string | undefined {
  const b = d.s.baseline
  if (!b) return "this run has no baseline to take again"
  if (d.s.stage !== "running" && d.s.stage !== "milestone") return `no run is in progress (stage: ${d.s.stage}); the next run takes its own baseline`
  if (b.status === "running") return "the baseline is already being taken"
  if (b.commit === commit) return `${commit.slice(0, 12)} is the baseline's commit already`
  d.notify(`the integration branch moved to ${commit.slice(0, 12)} under the run; taking the baseline again before the next task starts`)
  startBaseline(d)
  return undefined
}
