import { describe, expect, it } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import { outstanding } from "../../src/scheduler/core/outstanding"
import type { SchedulerState } from "../../src/scheduler/core/state"
import { transition } from "../../src/scheduler/core/machine"
import { apply, complete, ev, graphOf, passFinalReview, started, statusOf, task, type EventInput } from "./fixtures"
import { checkRow, type TableRow } from "./table"

/** The deploy rules (core/deploy.ts): a deployable run is done only with passing deploy evidence for every target. */

function show(c: Command): string {
  switch (c.type) {
    case "deploy":
      return `deploy ${c.target} #${c.n}`
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

/** One task merged and reviewed, the run finished done; the final check not recorded yet. */
function finished(opts: { deployable?: boolean; deploy?: { targets: string[]; everyRun: boolean } } = {}): SchedulerState {
  const graph = { ...graphOf(task("T-1")), ...(opts.deployable !== undefined ? { deployable: opts.deployable } : {}) }
  let { state } = started(graph, { finalReview: true, ...(opts.deploy ? { deploy: opts.deploy } : {}) })
  state = complete(state, "T-1").state
  state = passFinalReview(state).state
  expect(state.finished?.status).toBe("done")
  return state
}

function deploying(targets = TWO): SchedulerState {
  return apply(finished({ deployable: true, deploy: targets }), { type: "finalCheck.done", status: "passed", message: "" }).state
}

const startedOn = (target: string, n = 1, commit = "c-T-1"): EventInput => ({ type: "deploy.started", target, n, commit })
const passed = (target: string, n = 1, commit = "c-T-1"): EventInput => ({ type: "deploy.passed", target, n, commit, message: "ok", evidencePath: `.air/local/evidence/_deploy/${target}/${n}`, service: "active" })
const failed = (target: string, cause: "hash" | "smoke" | "unreachable" | "auth" | "host-key", n = 1, message = `${cause} went wrong`): EventInput => ({
  type: "deploy.failed",
  target,
  n,
  commit: "c-T-1",
  cause,
  message,
  evidencePath: `.air/local/evidence/_deploy/${target}/${n}`,
  rolledBack: cause === "hash" || cause === "smoke",
  hashMatch: cause === "hash" ? false : null,
  service: null,
  smoke: cause === "smoke" ? "failed" : null,
})

const both = (s: SchedulerState) => apply(s, startedOn("box"), startedOn("edge")).state

const rows: TableRow[] = [
  {
    rule: "a deployable run whose final check passed deploys to every target instead of ending",
    given: () => finished({ deployable: true, deploy: TWO }),
    event: { type: "finalCheck.done", status: "passed", message: "" },
    commands: ["notify", "deploy box #1", "deploy edge #1", "notify"],
    check: (s) => {
      expect(s.stage).toBe("deploying")
      expect(s.finished).toBeNull()
      expect(s.deploy?.targets.map((t) => `${t.name}:${t.status}`)).toEqual(["box:running", "edge:running"])
    },
  },
  {
    rule: "every run deploys when the rules say everyRun, whatever the plan says",
    given: () => finished({ deploy: { targets: ["box"], everyRun: true } }),
    event: { type: "finalCheck.done", status: "passed", message: "" },
    commands: ["notify", "deploy box #1", "notify"],
  },
  {
    rule: "a plan not marked deployable ends done without a deploy",
    given: () => finished({ deploy: TWO }),
    event: { type: "finalCheck.done", status: "passed", message: "" },
    commands: ["notify"],
    check: (s) => expect([s.stage, s.finished?.status, s.deploy]).toEqual(["finished", "done", undefined]),
  },
  {
    rule: "a failed final check deploys nothing",
    given: () => finished({ deployable: true, deploy: TWO }),
    event: { type: "finalCheck.done", status: "failed", message: "tests fail" },
    commands: ["notify"],
    check: (s) => expect(s.stage).toBe("finished"),
  },
  {
    rule: "one target passed, the other still in flight: the run waits",
    given: () => both(deploying()),
    event: passed("box"),
    commands: ["notify"],
    check: (s) => expect([s.stage, s.finished]).toEqual(["deploying", null]),
  },
  {
    rule: "the last target passed: the run is done (its final check kept)",
    given: () => apply(both(deploying()), passed("box")).state,
    event: passed("edge"),
    commands: ["notify", "finish done", "notify"],
    check: (s) => {
      expect([s.stage, s.finished?.status, s.finalCheck?.status]).toEqual(["finished", "done", "passed"])
      expect(s.deploy?.targets.every((t) => t.hashMatch === true && t.smoke === "passed")).toBe(true)
    },
  },
  {
    rule: "a hash mismatch (rolled back) sends the merged task to the Debugger with the deploy evidence",
    given: () => apply(both(deploying()), passed("edge")).state,
    event: failed("box", "hash"),
    statuses: { "T-1": "debugging" },
    commands: ["notify", "dispatch T-1 debugger"],
    check: (s) => {
      expect(s.stage).toBe("running")
      expect(s.finalCheck).toBeNull()
      const t = s.tasks.find((x) => x.id === "T-1")!
      expect(t.lastFailure).toEqual({ source: "deploy", message: "box: hash — hash went wrong", evidencePath: ".air/local/evidence/_deploy/box/1" })
      expect(s.deploy?.targets.find((x) => x.name === "box")?.rolledBack).toBe(true)
    },
  },
  {
    rule: "a failing smoke test is a failure like a failing test: the Debugger, once no target is in flight",
    given: () => both(deploying()),
    event: failed("edge", "smoke"),
    commands: ["notify"],
    check: (s) => expect(s.stage).toBe("deploying"),
  },
  {
    rule: "an unreachable target asks the user one question naming it and the cause",
    given: () => apply(both(deploying()), passed("edge")).state,
    event: failed("box", "unreachable"),
    commands: ["ask deploy:box:1"],
    check: (s) => {
      expect(s.questions).toHaveLength(1)
      expect(s.questions[0]!.text).toContain("box")
      expect(s.questions[0]!.text).toContain("unreachable")
      expect([s.stage, s.finished]).toEqual(["deploying", null])
    },
  },
  {
    rule: "a refused key asks the user too",
    given: () => both(deploying()),
    event: failed("edge", "auth"),
    commands: ["ask deploy:edge:1"],
    check: (s) => expect(s.questions[0]!.text).toContain("key was refused"),
  },
  {
    rule: "ssh's own full stop is not doubled in the question (Host key verification failed.)",
    given: () => both(deploying()),
    event: failed("box", "host-key", 1, "ssh to deploy@10.0.0.5:22 failed (connect): Host key verification failed."),
    commands: ["ask deploy:box:1"],
    check: (s) =>
      expect(s.questions[0]!.text).toBe(
        'The deploy to box could not reach it (its host key is unknown or changed): ssh to deploy@10.0.0.5:22 failed (connect): Host key verification failed. Nothing was changed on the target. Fix it and answer "retry" (or "stop" to end the run blocked).',
      ),
  },
  {
    rule: "the user's answer deploys that target again as its next deploy",
    given: () => apply(both(deploying()), passed("edge"), failed("box", "unreachable")).state,
    event: { type: "question.answered", questionId: "deploy:box:1", answer: "retry" },
    commands: ["deploy box #2", "notify"],
    check: (s) => expect(s.questions).toEqual([]),
  },
  {
    rule: "answering stop ends the run blocked, not done",
    given: () => apply(both(deploying()), passed("edge"), failed("box", "auth")).state,
    event: { type: "question.answered", questionId: "deploy:box:1", answer: "stop" },
    commands: ["finish blocked", "notify"],
    check: (s) => expect(s.finished?.status).toBe("blocked"),
  },
]

describe("deploy rules", () => {
  it.each(rows.map((row) => [row.rule, row] as const))("%s", (_rule, row) => checkRow(row, show))

  it("evidence for another commit than the one deployed is refused", () => {
    const s = apply(deploying(), startedOn("box")).state
    const r = transition(s, ev(passed("box", 1, "other")))
    expect("refused" in r && r.refused).toContain("not for the merged commit")
  })

  it("a stale deploy's outcome is refused", () => {
    const s = apply(both(deploying()), passed("edge"), failed("box", "unreachable"), { type: "question.answered", questionId: "deploy:box:1", answer: "retry" }).state
    const r = transition(s, ev(passed("box", 1)))
    expect("refused" in r && r.refused).toContain("not the current one")
  })

  it("after a crash, deploys in flight are carried out again with their ids", () => {
    const s = apply(deploying(), startedOn("box"), passed("box")).state
    expect(outstanding(s).filter((c) => c.type === "deploy")).toEqual([{ type: "deploy", id: "deploy:edge:1", target: "edge", n: 1 }])
  })

  it("the Debugger's fix lands, and the run deploys again before it is done", () => {
    let s = apply(both(deploying()), passed("edge"), failed("box", "smoke")).state
    expect(statusOf(s, "T-1")).toBe("debugging")
    s = complete(s, "T-1").state
    s = passFinalReview(s).state
    const r = apply(s, { type: "finalCheck.done", status: "passed", message: "" })
    expect(r.commands.filter((c) => c.type === "deploy").map(show)).toEqual(["deploy box #2", "deploy edge #2"])
    expect(r.state.finished).toBeNull()
  })
})
