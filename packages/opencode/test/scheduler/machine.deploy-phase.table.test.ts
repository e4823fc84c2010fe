import { describe, expect, it } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import { outstanding } from "../../src/scheduler/core/outstanding"
import type { SchedulerState } from "../../src/scheduler/core/state"
import { validateGraph } from "../../src/scheduler/core/validate"
import { apply, complete, graphOf, passFinalReview, started, statusOf, task, type EventInput } from "./fixtures"
import { checkRow, type TableRow } from "./table"

/**
 * Deployable phases (core/deploy.ts): a phase the plan marks deployable is deployed to every target once
 * its tasks are merged and its milestone passed, before any task of a later phase starts; the run's own
 * deploy at its end still decides whether it is done.
 */

function show(c: Command): string {
  switch (c.type) {
    case "deploy":
      return `deploy ${c.target} #${c.n}${c.phase !== undefined ? ` phase ${c.phase}` : ""}`
    case "dispatch":
      return `dispatch ${c.taskId} ${c.role}`
    case "ask":
      return `ask ${c.questionId}`
    case "finish":
      return `finish ${c.status}`
    default:
      return c.type
  }
}

const TWO = { targets: ["box", "edge"], everyRun: false }

/** T-1 in phase 1 (deployable), T-2 in phase 2 after it; T-1 merged and phase 1's milestone review due. */
function phaseOneMerged(opts: { deployPhases?: number[]; deploy?: typeof TWO | null } = {}): SchedulerState {
  const graph = { ...graphOf(task("T-1"), task("T-2", { phase: 2, deps: ["T-1"] })), deployPhases: opts.deployPhases ?? [1] }
  let { state } = started(graph, { finalReview: true, ...(opts.deploy === null ? {} : { deploy: opts.deploy ?? TWO }) })
  state = complete(state, "T-1").state
  expect(state.milestone).toMatchObject({ phase: 1, final: false })
  return apply(state, { type: "milestone.reached", phase: 1 }).state
}

const milestonePass: EventInput = { type: "milestone.reviewed", phase: 1, verdict: "pass" }

function deployingPhaseOne(): SchedulerState {
  return apply(phaseOneMerged(), milestonePass).state
}

const startedOn = (target: string, n = 1, commit = "c-T-1"): EventInput => ({ type: "deploy.started", target, n, commit })
const passed = (target: string, n = 1, commit = "c-T-1"): EventInput => ({ type: "deploy.passed", target, n, commit, message: "ok", evidencePath: `.air/local/evidence/_deploy/${target}/${n}`, service: "active" })
const failed = (target: string, cause: "smoke" | "unreachable", n = 1): EventInput => ({
  type: "deploy.failed",
  target,
  n,
  commit: "c-T-1",
  cause,
  message: `${cause} went wrong`,
  evidencePath: `.air/local/evidence/_deploy/${target}/${n}`,
  rolledBack: cause === "smoke",
  hashMatch: cause === "smoke" ? true : null,
  service: null,
  smoke: cause === "smoke" ? "failed" : null,
})

const both = (s: SchedulerState) => apply(s, startedOn("box"), startedOn("edge")).state

const rows: TableRow[] = [
  {
    rule: "a deployable phase merged and reviewed deploys to every target; the next phase does not start",
    given: () => phaseOneMerged(),
    event: milestonePass,
    statuses: { "T-1": "merged", "T-2": "pending" },
    commands: ["deploy box #1 phase 1", "deploy edge #1 phase 1", "notify"],
    check: (s) => {
      expect([s.stage, s.currentPhase, s.deploy?.phase]).toEqual(["deploying", 1, 1])
      expect(s.deploy?.targets.map((t) => `${t.name}:${t.status}`)).toEqual(["box:running", "edge:running"])
    },
  },
  {
    rule: "a phase the plan does not mark deployable goes on to the next phase at once",
    given: () => phaseOneMerged({ deployPhases: [2] }),
    event: milestonePass,
    statuses: { "T-2": "running" },
    commands: ["notify", "dispatch T-2 executor"],
    check: (s) => expect([s.stage, s.currentPhase, s.deploy]).toEqual(["running", 2, undefined]),
  },
  {
    rule: "without deploy targets a deployable phase deploys nothing",
    given: () => phaseOneMerged({ deploy: null }),
    event: milestonePass,
    statuses: { "T-2": "running" },
    commands: ["notify", "dispatch T-2 executor"],
  },
  {
    rule: "one target passed, the other in flight: the next phase still waits",
    given: () => both(deployingPhaseOne()),
    event: passed("box"),
    statuses: { "T-2": "pending" },
    commands: ["notify"],
    check: (s) => expect(s.stage).toBe("deploying"),
  },
  {
    rule: "every target passed: the next phase starts",
    given: () => apply(both(deployingPhaseOne()), passed("box")).state,
    event: passed("edge"),
    statuses: { "T-2": "running" },
    commands: ["notify", "notify", "dispatch T-2 executor"],
    check: (s) => {
      expect([s.stage, s.currentPhase, s.finished]).toEqual(["running", 2, null])
      expect(s.deploy?.targets.every((t) => t.status === "passed" && t.hashMatch === true)).toBe(true)
    },
  },
  {
    rule: "a failed smoke test on a phase deploy sends the phase's merged task to the Debugger; the next phase waits",
    given: () => apply(both(deployingPhaseOne()), passed("edge")).state,
    event: failed("box", "smoke"),
    statuses: { "T-1": "debugging", "T-2": "pending" },
    commands: ["notify", "dispatch T-1 debugger"],
    check: (s) => {
      expect([s.stage, s.currentPhase]).toEqual(["running", 1])
      expect(s.tasks[0]!.lastFailure).toMatchObject({ source: "deploy", evidencePath: ".air/local/evidence/_deploy/box/1" })
    },
  },
  {
    rule: "an unreachable target on a phase deploy asks the user; the next phase waits",
    given: () => apply(both(deployingPhaseOne()), passed("edge")).state,
    event: failed("box", "unreachable"),
    commands: ["ask deploy:box:1"],
    check: (s) => expect([s.stage, s.questions[0]?.deploy]).toEqual(["deploying", "box"]),
  },
  {
    rule: "retry: the phase deploy of that target runs again, still for the phase",
    given: () => apply(both(deployingPhaseOne()), passed("edge"), failed("box", "unreachable")).state,
    event: { type: "question.answered", questionId: "deploy:box:1", answer: "retry" },
    commands: ["deploy box #2 phase 1", "notify"],
  },
  {
    rule: "stop: the later phases are parked and the run ends blocked",
    given: () => apply(both(deployingPhaseOne()), passed("edge"), failed("box", "unreachable")).state,
    event: { type: "question.answered", questionId: "deploy:box:1", answer: "stop" },
    statuses: { "T-1": "merged", "T-2": "blocked" },
    commands: ["notify", "finish blocked", "notify"],
    check: (s) => expect(s.finished?.status).toBe("blocked"),
  },
]

describe("deployable phases", () => {
  it.each(rows.map((row) => [row.rule, row] as const))("%s", (_rule, row) => checkRow(row, show))

  it("after a crash, a phase deploy in flight is carried out again with its id and phase", () => {
    const s = apply(deployingPhaseOne(), startedOn("box"), passed("box")).state
    expect(outstanding(s).filter((c) => c.type === "deploy")).toEqual([{ type: "deploy", id: "deploy:edge:1", target: "edge", n: 1, phase: 1 }])
  })

  it("the Debugger's fix lands, the phase is reviewed and deployed again, then the next phase runs, and the run deploys again at its end", () => {
    let s = apply(both(deployingPhaseOne()), passed("edge"), failed("box", "smoke")).state
    s = complete(s, "T-1").state
    expect([s.stage, s.milestone?.phase]).toEqual(["milestone", 1])
    let r = apply(s, { type: "milestone.reached", phase: 1 }, milestonePass)
    expect(r.commands.filter((c) => c.type === "deploy").map(show)).toEqual(["deploy box #2 phase 1", "deploy edge #2 phase 1"])
    expect(statusOf(r.state, "T-2")).toBe("pending")
    r = apply(r.state, startedOn("box", 2), startedOn("edge", 2), passed("box", 2), passed("edge", 2))
    expect(statusOf(r.state, "T-2")).toBe("running")
    s = complete(r.state, "T-2").state
    s = passFinalReview(s).state
    expect(s.finished?.status).toBe("done")
    // A plan with a deployable phase is a deployable run: done only after its own deploy of the final commit.
    r = apply(s, { type: "finalCheck.done", status: "passed", message: "" })
    expect(r.commands.filter((c) => c.type === "deploy").map(show)).toEqual(["deploy box #3", "deploy edge #3"])
    expect([r.state.stage, r.state.finished, r.state.deploy?.phase]).toEqual(["deploying", null, undefined])
    r = apply(r.state, startedOn("box", 3, "c-T-2"), startedOn("edge", 3, "c-T-2"), passed("box", 3, "c-T-2"), passed("edge", 3, "c-T-2"))
    expect(r.state.finished?.status).toBe("done")
  })

  it("a deployable phase the plan does not have is refused with the plan's phases", () => {
    const checked = validateGraph({ ...graphOf(task("T-1")), deployPhases: [3] }, { boundaryTests: false })
    expect(checked.ok).toBe(false)
    if (!checked.ok) expect(checked.errors[0]).toMatchObject({ path: "deployPhases[0]", message: expect.stringContaining("the plan's phases: 1") })
  })
})
