import { afterEach, describe, expect, it } from "vitest"
import type { Command } from "../../src/scheduler/core/command"
import type { SchedulerState } from "../../src/scheduler/core/state"
import { headlessEnd } from "../../src/text/run-status"
import { apply, complete, graphOf, passFinalReview, started, steps, task } from "../scheduler/fixtures"
import { FakeWorld } from "./fake-ports"

/**
 * Issue 44 item 2: the interpreter is total. Every command ends in exactly one event whatever throws: here a throw
 * is injected at every await of every command handler, one at a time (the k-th call any port receives: the log,
 * the sessions, the gates, the merge queue, the worktrees, the final check, the baseline, git), and each command
 * must still end in exactly one of its outcome events, with the run left either moving (commands issued) or asking
 * a person, so a headless run exits within its bound. And an outcome the machine refuses (the old P0: gates that
 * passed without the evidence the machine wants) is a failure with a question, never silence.
 */

const graph = graphOf(task("T-1"), task("T-2"), task("T-3", { deps: ["T-1"] }))
const worlds: FakeWorld[] = []
afterEach(() => {
  for (const w of worlds.splice(0)) w.cleanup()
})

const PASSING = {
  passed: true,
  gates: [{ gate: "diff", passed: true, ran: true, ms: 1, summary: "1 file", logPath: "d" }],
  message: "ok",
  requires: ["diff", "build", "test", "analysis"],
  evidence: { diff: "d", build: "b", test: "t", analysis: "a" },
} as never

type Case = {
  name: string
  state: () => SchedulerState
  command: (w: FakeWorld) => Command
  /** The events of which exactly one must be accepted for the command's task. */
  outcomes: readonly string[]
  taskId?: string
  script?: (w: FakeWorld) => void
}

const gating = () => apply(started(graph, { concurrency: 2 }).state, steps.dispatched("T-1"), steps.reported("T-1")).state
const merging = () => apply(started(graph, { concurrency: 2 }).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1")).state

const CASES: Case[] = [
  {
    name: "runGates",
    state: gating,
    command: (w) => w.take("runGates")[0]!,
    outcomes: ["gates.passed", "gates.failed", "gates.errored"],
    taskId: "T-1",
    script: (w) => (w.gates = async () => PASSING),
  },
  {
    name: "merge",
    state: merging,
    command: (w) => w.take("merge")[0]!,
    outcomes: ["merge.succeeded", "merge.conflicted", "merge.rejected", "merge.blocked", "merge.deferred"],
    taskId: "T-1",
    script: (w) => (w.mergeImpl = async (input) => ({ status: "merged", commit: `c-${input.taskId}`, tag: `air/done/${input.taskId}` }) as never),
  },
  {
    name: "dispatch",
    state: () => started(graph, { concurrency: 2 }).state,
    command: (w) => w.take("dispatch")[0]!,
    outcomes: ["task.dispatched", "dispatch.failed"],
    taskId: "T-1",
  },
  {
    name: "review",
    state: () => apply(gating(), steps.gatesPassed("T-1")).state,
    command: (w) => w.take("review")[0]!,
    outcomes: ["review.started", "dispatch.failed"],
    taskId: "T-1",
  },
  {
    name: "finish",
    state: () => {
      let s = started(graphOf(task("T-1")), { concurrency: 1 }).state
      s = complete(apply(s, steps.dispatched("T-1")).state, "T-1").state
      return passFinalReview(s).state
    },
    command: (w) => w.take("finish")[0]!,
    outcomes: ["finalCheck.done"],
  },
  {
    name: "runBaseline",
    state: () => started(graph, { concurrency: 2, baseline: true }).state,
    command: (w) => w.take("runBaseline")[0]!,
    outcomes: ["baseline.done"],
    script: (w) =>
      (w.baselineImpl = async () => ({ commit: "c0ffee", status: "passed", build: { ran: true, passed: true, ms: 1, command: "cmake" }, test: { ran: true, passed: true, ms: 1, source: "junit", command: "ctest" }, tests: {}, failingTests: [], message: "green" }) as never),
  },
]

/** Wraps every port the interpreter awaits so that the k-th call throws (0: none); returns how many calls there were. */
function inject(w: FakeWorld, k: number): { calls: () => number } {
  let n = 0
  const hit = (name: string) => {
    n++
    if (n === k) throw new Error(`injected fault at call ${k} (${name})`)
  }
  const wrap = <T extends object>(target: T, names: (keyof T)[], prefix: string) => {
    for (const name of names) {
      const original = (target[name] as (...args: unknown[]) => unknown).bind(target)
      ;(target as Record<string, unknown>)[name as string] = async (...args: unknown[]) => {
        hit(`${prefix}.${String(name)}`)
        return original(...args)
      }
    }
  }
  const p = w.ports
  wrap(p.log, ["apply"], "log")
  wrap(p.sessions, ["create", "prompt", "abort"], "sessions")
  wrap(p.gates, ["run"], "gates")
  wrap(p.merge, ["mergeBatch", "revert"], "merge")
  wrap(p.worktrees, ["create", "remove", "setAside"], "worktrees")
  wrap(p.finalCheck, ["run"], "finalCheck")
  wrap(p.baseline, ["run"], "baseline")
  const git = p.git
  p.git = async (cwd, args) => {
    hit("git")
    return git(cwd, args)
  }
  return { calls: () => n }
}

async function carryOut(c: Case, k: number): Promise<{ w: FakeWorld; calls: number; before: number }> {
  const w = new FakeWorld(c.state())
  worlds.push(w)
  c.script?.(w)
  // Scripted fakes that the case leaves alone succeed: git answers, a baseline or a gate run that is never asked for.
  w.ports.git = async () => ""
  const cmd = c.command(w)
  const before = w.accepted.length
  const counter = inject(w, k)
  w.interpreter.execute(cmd)
  await w.interpreter.settled()
  return { w, calls: counter.calls(), before }
}

describe("the interpreter is total (issue 44)", () => {
  for (const c of CASES) {
    it(`${c.name}: a throw at any of its awaits still ends it in exactly one outcome, and the run moves or asks`, async () => {
      const clean = await carryOut(c, 0)
      const ended = (w: FakeWorld, before: number) => w.accepted.slice(before).filter((e) => c.outcomes.includes(e.type) && (!c.taskId || (e as { taskId?: string }).taskId === c.taskId))
      expect(ended(clean.w, clean.before).map((e) => e.type)).toHaveLength(1)
      expect(clean.calls).toBeGreaterThan(0)
      for (let k = 1; k <= clean.calls; k++) {
        const { w, before } = await carryOut(c, k)
        const outcome = ended(w, before)
        expect(outcome.map((e) => e.type), `${c.name}, fault at call ${k}; inbox: ${w.inbox.take().join(" | ")}`).toHaveLength(1)
        // Not waiting on nothing: something issued, a person asked, or the run over.
        const moving = w.issued.some((cmd) => cmd.type !== "notify")
        expect(moving || w.state.questions.length > 0 || headlessEnd(w.state) !== undefined, `${c.name}, fault at call ${k}: the run waits on nothing`).toBe(true)
      }
    })
  }

  it("gates that pass without the evidence the machine requires end in gates.errored with a question, never silence", async () => {
    const w = new FakeWorld(gating())
    worlds.push(w)
    // The shape of the P0: every gate passed, the analysis had nothing to check, and the report carries no record of it.
    w.gates = async () => ({ passed: true, gates: [], message: "ok", requires: ["diff", "build", "test", "analysis"], evidence: { diff: "d", build: "b", test: "t" } }) as never
    w.interpreter.execute(w.take("runGates")[0]!)
    await w.interpreter.settled()
    expect(w.refused.map((r) => r.event.type)).toEqual(["gates.passed"])
    expect(w.types().slice(-1)).toEqual(["gates.errored"])
    expect(w.state.tasks.find((t) => t.id === "T-1")!.status).toBe("blocked")
    expect(w.state.questions[0]!.text).toMatch(/refused the outcome of runGates .*gates\.passed: .*without evidence for: analysis/)
    // The question holds T-1 only: a headless run goes on with the rest, or stops at once when told to.
    expect(headlessEnd(w.state, { exitOnQuestion: true })).toBe("waits")
  })

  it("the same gates with the analysis recorded as not applicable pass: the machine judges by the pipeline's rule", async () => {
    const w = new FakeWorld(gating())
    worlds.push(w)
    w.gates = async () =>
      ({ passed: true, gates: [], message: "ok", requires: ["diff", "build", "test", "analysis"], evidence: { diff: "d", build: "b", test: "t" }, notApplicable: { analysis: "not applicable: no C/C++ file changed" } }) as never
    w.interpreter.execute(w.take("runGates")[0]!)
    await w.interpreter.settled()
    expect(w.refused).toEqual([])
    expect(w.accepted.at(-1)).toMatchObject({ type: "gates.passed", notApplicable: { analysis: expect.stringMatching(/no C\/C\+\+ file/) } })
    expect(w.state.tasks.find((t) => t.id === "T-1")!.status).toBe("reviewing")
  })
})
