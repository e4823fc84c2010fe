import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { LockTimeout } from "../../src/scheduler/runtime/store/lock"
import { MergeQueue } from "../../src/scheduler/runtime/integration/merge"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index"
import { GitCommandError } from "../../src/scheduler/runtime/git/git"
import { resume } from "../../src/scheduler/runtime/recovery"
import { initialState } from "../../src/scheduler/core/state"
import { apply, complete, graphOf, passFinalReview, runtimeOf, started, statusOf, steps, task } from "../scheduler/fixtures"
import { TEST_CONFIG } from "../scheduler/simulate"
import { FakeWorld } from "./fake-ports"

/** Every command ends in exactly one event, success or failure: here with every port but the machine faked. */
const graph = graphOf(task("T-1"), task("T-2"), task("T-3", { deps: ["T-1"] }))
const worlds: FakeWorld[] = []
function world(state = started(graph, { concurrency: 2 }).state): FakeWorld {
  const w = new FakeWorld(state)
  worlds.push(w)
  return w
}
afterEach(() => {
  for (const w of worlds.splice(0)) w.cleanup()
})

/** A report that passed, holding the evidence a code task requires (the machine judges it by the same rule). */
const passing = {
  passed: true,
  gates: [],
  message: "ok",
  requires: ["diff", "build", "test", "analysis"],
  evidence: { diff: "d", build: "b", test: "t", analysis: "a" },
} as never

describe("interpreter: gates", () => {
  it("a gate port that throws (toolchain.json invalid) ends in gates.errored: the task is blocked with the file named", async () => {
    const w = world(apply(started(graph, { concurrency: 2 }).state, steps.dispatched("T-1"), steps.reported("T-1")).state)
    w.gates = async () => {
      throw new Toolchain.RulesInvalid("/p/.air/shared/rules/toolchain.json", "unknown key 'biuld'")
    }
    const [gates] = w.take("runGates")
    await w.interpreter.run(gates!)
    expect(w.types()).toEqual(["gates.started", "gates.errored"])
    expect(w.accepted[1]).toMatchObject({ tag: "toolchain" })
    expect(statusOf(w.state, "T-1")).toBe("blocked")
    expect(w.state.questions[0]!.text).toMatch(/toolchain\.json: unknown key 'biuld'/)
    expect(w.take("ask")).toHaveLength(1)
  })

  it("a git error or a full disk inside the gates is named by its kind", async () => {
    for (const [error, tag] of [
      [new GitCommandError(["diff"], 128, "", "fatal: bad object"), "git"],
      [Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }), "fs"],
    ] as const) {
      const w = world(apply(started(graph).state, steps.dispatched("T-1"), steps.reported("T-1")).state)
      w.gates = async () => {
        throw error
      }
      await w.interpreter.run(w.take("runGates")[0]!)
      expect(w.accepted.at(-1)).toMatchObject({ type: "gates.errored", tag })
      expect(runtimeOf(w.state, "T-1").resume).toBe("gates")
    }
  })

  it("the answer runs the gates again, and this time they pass", async () => {
    const w = world(apply(started(graph, { concurrency: 1 }).state, steps.dispatched("T-1"), steps.reported("T-1")).state)
    w.gates = async () => {
      throw new Error("boom")
    }
    await w.interpreter.run(w.take("runGates")[0]!)
    // T-2 took the slot when T-1 blocked; once it is merged, the answer resumes T-1 at its gates.
    w.state = complete(w.state, "T-2").state
    await w.ports.log.apply({ type: "question.answered", questionId: "T-1:blocked:1", answer: "fixed" })
    w.gates = async () => passing
    const [again] = w.take("runGates")
    expect(again).toBeDefined()
    w.gates = async () => ({ passed: true, gates: [{ gate: "diff", logPath: "d" }, { gate: "build", logPath: "b" }, { gate: "test", logPath: "t" }, { gate: "analysis", logPath: "a" }], message: "" }) as never
    await w.interpreter.run(again!)
    expect(w.types().slice(-2)).toEqual(["gates.started", "gates.passed"])
    expect(statusOf(w.state, "T-1")).toBe("reviewing")
  })
})

describe("interpreter: merges", () => {
  function queued() {
    let state = apply(started(graph, { concurrency: 2 }).state, steps.dispatched("T-1"), steps.dispatched("T-2")).state
    state = apply(state, steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), steps.reported("T-2"), steps.gatesPassed("T-2"), steps.reviewPass("T-2")).state
    return state
  }

  it("a merge port that throws LockTimeout ends in merge.blocked; the queue moves on to the next task", async () => {
    const w = world(queued())
    expect([w.state.merging, w.state.mergeQueue]).toEqual([["T-1"], ["T-2"]])
    w.mergeImpl = async () => {
      throw new MergeQueue.LockTimeout("T-1", new LockTimeout(".air/local/state/merge.lock", { pid: 4242, host: "host", at: new Date(0).toISOString(), token: "t" }, 30_000))
    }
    expect(w.take("merge").map((c) => c.tasks.map((t) => t.taskId).join(" "))).toEqual(["T-1"])
    await w.interpreter.run({ type: "merge", id: "merge:T-1:1", tasks: [{ taskId: "T-1", round: 1 }] })
    expect(w.types()).toEqual(["merge.started", "merge.blocked"])
    expect(w.accepted[1]).toMatchObject({ tag: "lock-timeout" })
    expect(statusOf(w.state, "T-1")).toBe("blocked")
    expect(w.state.questions[0]!.text).toMatch(/merge lock .* is held by process 4242/)
    expect(w.state.merging).toEqual(["T-2"])
    expect(w.take("merge").map((c) => c.tasks.map((t) => t.taskId).join(" "))).toEqual(["T-2"])
  })

  it("after the answer the blocked merge is queued again and lands; its worktree is removed", async () => {
    const w = world(queued())
    w.mergeImpl = async () => {
      throw new Error("fatal: Unable to create '/p/.git/index.lock': File exists.")
    }
    expect(w.take("merge").map((c) => c.tasks.map((t) => t.taskId).join(" "))).toEqual(["T-1"])
    await w.interpreter.run({ type: "merge", id: "merge:T-1:1", tasks: [{ taskId: "T-1", round: 1 }] })
    expect(w.accepted.at(-1)).toMatchObject({ type: "merge.blocked", tag: "index-lock" })
    w.mergeImpl = async (input: MergeQueue.MergeInput) => ({ status: "merged", commit: `c-${input.taskId}`, tag: `air/done/${input.taskId}` }) as never
    await w.interpreter.run(w.take("merge")[0]!)
    expect(statusOf(w.state, "T-2")).toBe("merged")
    await w.ports.log.apply({ type: "question.answered", questionId: "T-1:blocked:1", answer: "removed the lock" })
    const [retry] = w.take("merge")
    expect(retry).toMatchObject({ tasks: [{ taskId: "T-1" }] })
    await w.interpreter.run(retry!)
    expect(statusOf(w.state, "T-1")).toBe("merged")
    expect(w.calls).toContain("worktree.remove T-1")
  })
})

describe("interpreter: the merge build", () => {
  it("gates that pass record the tree they built, for the merge build to compare against", async () => {
    const w = world(apply(started(graph).state, steps.dispatched("T-1"), steps.reported("T-1")).state)
    w.gates = async () => ({ passed: true, gates: [{ gate: "diff", logPath: "d" }, { gate: "build", logPath: "b" }, { gate: "test", logPath: "t" }, { gate: "analysis", logPath: "a" }], message: "" }) as never
    await w.interpreter.run(w.take("runGates")[0]!)
    expect(w.calls).toContain("git update-ref refs/air/gated/T-1 refs/heads/air/T-1^{commit}")
    // The fake git fails: recording is best effort (the merge then builds), the gates still pass.
    expect(w.types().at(-1)).toBe("gates.passed")
  })

  it("a rejected candidate ends in merge.rejected: the Debugger gets the log, nothing is removed, the queue moves on", async () => {
    let state = apply(started(graph, { concurrency: 2 }).state, steps.dispatched("T-1"), steps.dispatched("T-2")).state
    state = apply(state, steps.reported("T-1"), steps.gatesPassed("T-1"), steps.reviewPass("T-1"), steps.reported("T-2"), steps.gatesPassed("T-2"), steps.reviewPass("T-2")).state
    const w = world(state)
    let verify: unknown
    w.mergeImpl = async (input: MergeQueue.MergeInput) => {
      verify = input.verify
      return { status: "rejected", summary: "merge build failed", message: "merge build failed: twice.cpp:4: error: 'add' was not declared", evidencePath: "/ev/T-1/merge-1/build.log" }
    }
    await w.interpreter.run(w.take("merge")[0]!)
    expect(typeof verify).toBe("function")
    expect(w.types()).toEqual(["merge.started", "merge.rejected"])
    expect(statusOf(w.state, "T-1")).toBe("debugging")
    expect(runtimeOf(w.state, "T-1").lastFailure).toMatchObject({ source: "merge-build", evidencePath: "/ev/T-1/merge-1/build.log" })
    expect(w.take("dispatch").map((c) => [c.taskId, c.role])).toEqual([["T-1", "debugger"]])
    expect(w.calls).not.toContain("worktree.remove T-1")
    expect(w.state.merging).toEqual(["T-2"])
  })
})

describe("interpreter: every effect goes through a port a test can replace", () => {
  it("a gate run that passes: the farm's news, the gated ref and the repair pattern each reach their port, nothing the disk", async () => {
    const w = world(apply(started(graph).state, steps.dispatched("T-1"), steps.reported("T-1")).state)
    const seen: string[] = []
    w.gates = async () => passing
    w.ports.gates.farmDegraded = async (taskId, attemptDir) => {
      seen.push(`farm ${taskId} ${attemptDir.slice(w.root.length)}`)
      return { type: "farm.degraded", taskId, hosts: ["box-2"], localFallbacks: 3, evidencePath: join(attemptDir, "farm.json") }
    }
    w.ports.merge.recordGated = async (root, taskId) => seen.push(`gated ${taskId} ${root === w.root}`)
    w.ports.knowledge.learn = (root, taskId) => void seen.push(`learn ${taskId} ${root === w.root}`)
    await w.interpreter.run(w.take("runGates")[0]!)
    expect(seen).toEqual(["gated T-1 true", "farm T-1 /.air/local/evidence/T-1/attempt-1", "learn T-1 true"])
    // The fake farm's news went to the machine before the verdict, as a real farm.json's would.
    expect(w.types()).toEqual(["gates.started", "farm.degraded", "gates.passed"])
    expect(w.calls.filter((c) => c.startsWith("git "))).toEqual([])
  })

  it("the end of a run: the helper trees are dropped and the end is worded through their ports", async () => {
    const w = world(passFinalReview(complete(started(graphOf(task("T-1"))).state, "T-1").state).state)
    const dropped: string[] = []
    w.ports.helperTrees.drop = async (root) => void dropped.push(root)
    w.ports.report.endText = (_root, state) => `the end, ${state.finished?.status}`
    await w.interpreter.run(w.take("finish")[0]!)
    expect(dropped).toEqual([w.root])
    expect(w.inbox.take().at(-1)).toBe("the end, done")
  })
})

describe("interpreter: dispatch", () => {
  it("a later attempt's prompt lists the commits the task branch already holds; a first attempt's asks git nothing", async () => {
    const w = world(apply(started(graph).state, steps.dispatched("T-1"), { type: "worker.failed", taskId: "T-1", sessionId: "s-T-1-1", reason: "aborted", message: "stop" }).state)
    w.ports.git = async (_cwd, args) => {
      w.calls.push(`git ${args.join(" ")}`)
      if (args[0] === "log") return "1a2b3c4 Add calc::avg3\n5d6e7f8 Declare avg3 in calc.h\n"
      throw new Error("no such ref")
    }
    await w.ports.log.apply({ type: "question.answered", questionId: w.state.questions[0]!.questionId, answer: "retry" })
    const again = w.take("dispatch").find((c) => c.taskId === "T-1")!
    expect(again.attempt).toBe(2)
    await w.interpreter.run(again)
    expect(w.calls).toContain("git log --format=%h %s --max-count=20 main..HEAD")
    const prompt = [...w.prompts.values()].at(-1)!
    expect(prompt).toContain("The branch already holds 2 commit(s) from earlier sessions of this task (newest first); build on them")
    expect(prompt).toContain("- 1a2b3c4 Add calc::avg3")

    const fresh = world()
    const first = fresh.take("dispatch").find((c) => c.taskId === "T-1")!
    await fresh.interpreter.run(first)
    expect(fresh.calls.filter((c) => c.startsWith("git log"))).toEqual([])
    expect([...fresh.prompts.values()].at(-1)).not.toContain("already holds")
  })
})

describe("supervisor: sessions", () => {
  it("a reviewer session that errors ends in session.errored, and the review is asked again", async () => {
    const w = world(apply(started(graph).state, steps.dispatched("T-1"), steps.reported("T-1"), steps.gatesPassed("T-1")).state)
    await w.interpreter.run(w.take("review")[0]!)
    expect(w.types().at(-1)).toBe("review.started")
    const sessionId = runtimeOf(w.state, "T-1").reviewSessionId!
    await w.supervisor.onOutcome(sessionId, { kind: "error", message: "APIError: 500 Internal Server Error" })
    expect(w.accepted.at(-1)).toMatchObject({ type: "session.errored", taskId: "T-1", sessionId, cause: "error: APIError: 500 Internal Server Error" })
    expect(statusOf(w.state, "T-1")).toBe("reviewing")
    expect(w.take("review")).toHaveLength(1)
  })

  it("a worker that ends twice without its report is nudged once, then failed", async () => {
    const w = world()
    await w.interpreter.run(w.take("dispatch").find((c) => c.taskId === "T-1")!)
    const sessionId = runtimeOf(w.state, "T-1").sessionId!
    await w.supervisor.onOutcome(sessionId, { kind: "idle" })
    expect(w.calls.filter((c) => c === `session.prompt ${sessionId}`)).toHaveLength(2)
    // The nudge is in the task's state, so a restarted supervisor (no memory) does not nudge again.
    expect(runtimeOf(w.state, "T-1").nudges).toBe(1)
    w.supervisor.purposes.set(sessionId, { kind: "worker", taskId: "T-1", role: "executor", nudged: false })
    await w.supervisor.onOutcome(sessionId, { kind: "idle" })
    expect(w.accepted.at(-1)).toMatchObject({ type: "worker.failed", taskId: "T-1" })
  })
})

describe("interpreter: the end of a run", () => {
  it("a blocked run gets its final check, recorded as an event, while the worktrees of merged tasks go; the end is told once they are gone", async () => {
    let state = apply(started(graph, { concurrency: 2 }).state, steps.dispatched("T-1"), { type: "worker.failed", taskId: "T-1", sessionId: "s-T-1-1", reason: "aborted", message: "stop" }).state
    state = complete(state, "T-2").state
    expect(state.finished).toEqual({ status: "blocked" })
    const w = world(state)
    w.existing.add(join(w.root, ".air/local/worktrees", "T-2"))
    // The removal is held until the check has run: a check that waited for it would never run.
    let checked!: () => void
    const checkRan = new Promise<void>((resolve) => (checked = resolve))
    const remove = w.ports.worktrees.remove
    w.ports.worktrees.remove = async (...args) => {
      await checkRan
      return remove(...args)
    }
    w.finalCheckImpl = async () => {
      checked()
      return { passed: false, summary: "integration branch FAILS: ctest exited 8", evidenceDir: "", commands: [] }
    }
    let told = -1
    w.inbox.onAttention = () => (told = w.calls.length)
    await w.interpreter.run(w.take("finish")[0] ?? { type: "finish", id: "finish:blocked:x", status: "blocked" })
    expect(w.calls.indexOf("finalCheck.run")).toBeLessThan(w.calls.indexOf("worktree.remove T-2"))
    expect(told).toBeGreaterThan(w.calls.indexOf("worktree.remove T-2"))
    expect(w.accepted.at(-1)).toMatchObject({ type: "finalCheck.done", status: "failed", message: "integration branch FAILS: ctest exited 8" })
    expect(w.state.finalCheck?.status).toBe("failed")
  })

  it("a final check that cannot run is recorded as errored, never lost", async () => {
    const w = world(passFinalReview(complete(started(graphOf(task("T-1"))).state, "T-1").state).state)
    w.finalCheckImpl = async () => {
      throw new Toolchain.RulesInvalid("toolchain.json", "truncated")
    }
    await w.interpreter.finish()
    expect(w.accepted.at(-1)).toMatchObject({ type: "finalCheck.done", status: "errored" })
  })

  it("a finish that throws is recorded as an errored check, and the end is still told, waking Main", async () => {
    const w = world(passFinalReview(complete(started(graphOf(task("T-1"))).state, "T-1").state).state)
    // air_listen said "the final check is running" and Main sleeps: only the end's own news may wake it.
    let woken = 0
    w.inbox.onAttention = () => woken++
    w.ports.log.opened = async () => {
      throw Object.assign(new Error("ENOSPC: no space left on device, read"), { code: "ENOSPC" })
    }
    const [finish] = w.take("finish")
    w.interpreter.execute(finish!)
    await vi.waitFor(() => expect(w.state.finalCheck?.status).toBe("errored"))
    await vi.waitFor(() => expect(woken).toBe(1))
    const news = w.inbox.take()
    expect(news[0]).toMatch(/Scheduler error while carrying out finish .*ENOSPC/)
    expect(news.filter((n) => n.startsWith("RUN ENDED"))).toHaveLength(1)
  })
})

describe("clock: deadlines live in the state", () => {
  it("a restarted clock fires the wall-clock cap of a task dispatched before the restart, once", async () => {
    const w = world(apply(started(graph).state, steps.dispatched("T-1")).state)
    const deadline = Date.parse(runtimeOf(w.state, "T-1").deadline!)
    w.now = deadline
    await w.clock.checkDeadlines()
    expect(w.accepted).toEqual([])
    w.now = deadline + 1
    await w.clock.checkDeadlines()
    expect(w.types().filter((t) => t === "timer.fired")).toEqual(["timer.fired"])
    expect(w.accepted.at(-1)).toMatchObject({ type: "timer.fired", taskId: "T-1", kind: "wallclock" })
    expect(runtimeOf(w.state, "T-1")).toMatchObject({ status: "running", attempts: 2, deadline: null })
  })
})

describe("usage as events: the machine decides the budgets", () => {
  it("a session's model use goes to the machine as usage.recorded; the limits of run.started decide, whatever the live settings say", async () => {
    const limits = { taskRequests: 0, runRequests: 1, taskTokens: 0, runTokens: 0, runMinutes: 0 }
    const w = world(apply(started(graph, { budgets: limits }).state, steps.dispatched("T-1")).state)
    w.stats.set("s-T-1-1", { requests: 2, tokens: 300, agent: "executor" })
    await w.clock.tick(60_000)
    expect(w.types()).toEqual(["usage.recorded"])
    expect(w.accepted[0]).toMatchObject({ sessionId: "s-T-1-1", role: "executor", requests: 2, tokens: 300 })
    expect(w.state.runBudgetSpent).toBe(true)
    expect(w.take("ask").map((c) => c.questionId)).toEqual([expect.stringMatching(/^run:budget:/)])
    // Nothing new: no event (one per assistant message at most).
    await w.clock.tick(60_000)
    expect(w.types()).toEqual(["usage.recorded"])
    // The same use with no limits in the run's configuration (and none in the live settings): counted, nothing spent.
    const unlimited = world(apply(started(graph).state, steps.dispatched("T-1")).state)
    unlimited.stats.set("s-T-1-1", { requests: 2, tokens: 300, agent: "executor" })
    await unlimited.clock.tick(60_000)
    expect(unlimited.types()).toEqual(["usage.recorded"])
    expect([unlimited.state.runBudgetSpent, unlimited.state.usage.run]).toEqual([false, { requests: 2, tokens: 300 }])
  })

  it("tokens the provider never reported are held on the estimate: the run's token budget is spent by them, and the log carries the estimate's share and its ratio", async () => {
    const limits = { taskRequests: 0, runRequests: 0, taskTokens: 0, runTokens: 500, runMinutes: 0 }
    const w = world(apply(started(graph, { budgets: limits }).state, steps.dispatched("T-1")).state)
    w.stats.set("s-T-1-1", { requests: 3, tokens: 650, agent: "executor", estimated: 600, ratio: 1.25 })
    await w.clock.tick(60_000)
    expect(w.accepted[0]).toMatchObject({ type: "usage.recorded", sessionId: "s-T-1-1", tokens: 650, estimated: 600, ratio: 1.25 })
    expect(w.state.runBudgetSpent).toBe(true)
    expect(w.take("ask").map((c) => c.questionId)).toEqual([expect.stringMatching(/^run:budget:/)])
  })

  it("a worker's turn that ends reports its use with its task first: past the task's budget, the task blocks", async () => {
    const limits = { taskRequests: 3, runRequests: 0, taskTokens: 0, runTokens: 0, runMinutes: 0 }
    const w = world(started(graphOf(task("T-1")), { budgets: limits }).state)
    const [dispatch] = w.take("dispatch")
    await w.interpreter.run(dispatch!)
    const sessionId = runtimeOf(w.state, "T-1").sessionId!
    w.stats.set(sessionId, { requests: 4, tokens: 900, agent: "executor" })
    await w.supervisor.onOutcome(sessionId, { kind: "idle" })
    expect(w.accepted.find((e) => e.type === "usage.recorded")).toMatchObject({ sessionId, taskId: "T-1", role: "executor", requests: 4 })
    expect(statusOf(w.state, "T-1")).toBe("blocked")
    expect(w.state.questions[0]!.text).toMatch(/requests budget is spent/)
    // Not nudged: the state no longer waits on the session.
    expect(w.types()).not.toContain("session.nudged")
  })

  it("the run's minutes are the clock's to report, from the run's start in the state", async () => {
    const limits = { taskRequests: 0, runRequests: 0, taskTokens: 0, runTokens: 0, runMinutes: 5 }
    const w = world(apply(started(graph, { budgets: limits, wallClockMs: 3_600_000 }).state, steps.dispatched("T-1")).state)
    w.now = Date.parse(w.state.usage.startedAt!) + 5 * 60_000
    await w.clock.tick(60_000)
    expect(w.accepted).toEqual([])
    w.now += 60_000
    await w.clock.tick(60_000)
    expect(w.accepted).toEqual([expect.objectContaining({ type: "budget.spent", kind: "minutes" })])
  })
})

describe("recovery: one outstanding() drives every restart", () => {
  it("restarts gates, merges, the milestone review and lost sessions", async () => {
    const phased = graphOf(task("A"), task("B"), task("C"), task("D", { phase: 2 }))
    let state = apply(started(phased, { concurrency: 3 }).state, steps.dispatched("A"), steps.dispatched("B"), steps.dispatched("C")).state
    state = apply(state, steps.reported("A"), steps.reported("B"), steps.gatesPassed("B"), steps.reviewPass("B")).state
    const w = world(state)
    w.gates = async () => new Promise(() => undefined) // still running when the test looks
    w.mergeImpl = async () => new Promise(() => undefined)
    resume(w.ports, w.interpreter, w.clock, w.state)
    // A gating, B merging, C's session lost.
    await vi.waitFor(() => expect(w.types()).toEqual(expect.arrayContaining(["gates.started", "merge.started", "session.lost"])))
    expect(w.take("dispatch").map((c) => c.taskId)).toEqual(["C"])
  })

  it("restarts the Architect's planning session and a milestone review recorded as started", async () => {
    const planning = world(apply(started(graph).state).state)
    planning.state = { ...planning.state, stage: "planning", graph: null, tasks: [] }
    resume(planning.ports, planning.interpreter, planning.clock, planning.state)
    await vi.waitFor(() => expect(planning.calls).toContain("session.create architect Architect: plan"))

    const phased = graphOf(task("A"), task("D", { phase: 2 }))
    const reviewing = world(apply(complete(started(phased).state, "A").state, { type: "milestone.reached", phase: 1 }).state)
    resume(reviewing.ports, reviewing.interpreter, reviewing.clock, reviewing.state)
    await vi.waitFor(() => expect(reviewing.calls).toContain("session.create architect Architect: milestone 1"))
    // Not recorded twice.
    expect(reviewing.refused).toEqual([])
  })

  it("a revert ordered before the restart is carried out again from outstanding(), with its first id, and reported done", async () => {
    const merged = complete(started(graph, { concurrency: 2 }).state, "T-2").state
    const state = apply(merged, { type: "change.requested", text: "x" }, { type: "delta.accepted", delta: { schemaVersion: 1, add: [], remove: [], modify: [{ id: "T-2", patch: { doneWhen: "T-2 twice" } }], supersedesAdrs: [] } }).state
    expect(state.reverts).toHaveLength(1)
    const w = world(state)
    const reverted: string[] = []
    w.revertImpl = async (input) => {
      reverted.push(`${input.taskId}+${input.round}`)
      return { status: "already-reverted", commit: "c0ffee", tag: "air/reverted/T-2" }
    }
    resume(w.ports, w.interpreter, w.clock, w.state)
    await vi.waitFor(() => expect(w.state.reverts).toEqual([]))
    expect(reverted).toEqual(["T-2+1"])
    expect(w.accepted.filter((e) => e.type === "revert.done")).toEqual([expect.objectContaining({ taskId: "T-2", round: 1, status: "reverted" })])
    expect(w.state.reverts).toEqual([])
  })

  it("a finished run whose final check was never recorded gets it (or takes the old result file)", async () => {
    const done = passFinalReview(complete(started(graphOf(task("T-1"))).state, "T-1").state).state
    const fresh = world(done)
    resume(fresh.ports, fresh.interpreter, fresh.clock, fresh.state)
    await vi.waitFor(() => expect(fresh.state.finalCheck?.status).toBe("passed"))
    expect(fresh.calls).toContain("finalCheck.run")

    const old = world(done)
    old.finalCheckFile = { passed: true, summary: "built before the upgrade", evidenceDir: "", commands: [] }
    resume(old.ports, old.interpreter, old.clock, old.state)
    await vi.waitFor(() => expect(old.state.finalCheck).toEqual({ status: "passed", message: "built before the upgrade" }))
    expect(old.calls).not.toContain("finalCheck.run")
  })
})

describe("interpreter: the baseline", () => {
  const record = (fields: object) => ({ commit: "c0ffee", status: "passed", build: { ran: true, passed: true, ms: 1 }, test: { ran: true, passed: true, ms: 1, source: "junit" }, tests: {}, failingTests: [], message: "", at: "now", ...fields }) as never

  it("runBaseline ends in baseline.done with the record's outcome; a failing one asks, and the known failures reach the test gate", async () => {
    const w = world(started(graph, { concurrency: 2, baseline: true }).state)
    w.baselineImpl = async () => record({ status: "failed", test: { ran: true, passed: false, ms: 1, source: "junit", command: "ctest" }, tests: { old: "failed" }, failingTests: ["old"], message: "`ctest` failed: old" })
    await w.interpreter.run(w.take("runBaseline")[0]!)
    expect(w.calls).toContain("baseline.run main")
    expect(w.accepted.at(-1)).toMatchObject({ type: "baseline.done", commit: "c0ffee", status: "failed", buildFailed: false, failingTests: ["old"] })
    expect(w.take("dispatch")).toHaveLength(0)
    const [ask] = w.take("ask")
    expect(await w.ports.log.apply({ type: "question.answered", questionId: ask!.questionId, answer: "go on" })).toEqual({ ok: true })
    expect(w.take("dispatch").map((c) => c.taskId)).toEqual(["T-1", "T-2"])
    let given: unknown
    w.gates = async (input) => {
      given = input.baseline
      return passing
    }
    await w.ports.log.apply(steps.dispatched("T-1"))
    await w.ports.log.apply(steps.reported("T-1"))
    await w.interpreter.run(w.take("runGates")[0]!)
    expect(given).toEqual({ commit: "c0ffee", failingTests: ["old"] })
  })

  it("a baseline that cannot run at all is errored, and asks all the same", async () => {
    const w = world(started(graph, { concurrency: 2, baseline: true }).state)
    w.baselineImpl = async () => {
      throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" })
    }
    await w.interpreter.run(w.take("runBaseline")[0]!)
    expect(w.accepted.at(-1)).toMatchObject({ type: "baseline.done", status: "errored", message: expect.stringMatching(/^fs: .*ENOSPC/) })
    expect(w.state.questions[0]!.text).toMatch(/could not be built and tested/)
  })

  it("a dispatch finds the integration head moved by someone else: integration.moved, and the baseline is taken again", async () => {
    const w = world(apply(started(graph, { concurrency: 2, baseline: true }).state, { type: "baseline.done", commit: "c0ffee", status: "passed", failingTests: [], message: "" }).state)
    let head = "c0ffee\n"
    ;(w.ports as { git: unknown }).git = async () => head
    const [first, second] = w.take("dispatch")
    await w.interpreter.run(first!)
    expect(w.types()).not.toContain("integration.moved")
    head = "beef01\n"
    // The dispatch waits for the new baseline: its task branches off a head whose failures are known.
    const dispatching = w.interpreter.run(second!)
    await vi.waitFor(() => expect(w.accepted.find((e) => e.type === "integration.moved")).toMatchObject({ commit: "beef01" }))
    const [again] = w.take("runBaseline")
    expect(again?.id).toEqual("baseline:2")
    expect(w.types().filter((t) => t === "task.dispatched")).toHaveLength(1)
    w.baselineImpl = async () => record({ commit: "beef01" })
    await w.interpreter.run(again!)
    await dispatching
    expect(w.types().slice(-2)).toEqual(["baseline.done", "task.dispatched"])
  })
})

describe("interpreter: a command that throws where no code expected it", () => {
  it("becomes the event of its own failure: runGates that throws outside the gates blocks the task with a question, and Main hears it", async () => {
    const w = world(apply(started(graph, { concurrency: 2 }).state, steps.dispatched("T-1"), steps.reported("T-1")).state)
    const [gates] = w.take("runGates")
    vi.spyOn(w.interpreter, "run").mockRejectedValueOnce(new Error("EACCES: permission denied, open '.air/local/evidence'"))
    w.interpreter.execute(gates!)
    await vi.waitFor(() => expect(w.accepted.at(-1)).toMatchObject({ type: "gates.errored", taskId: "T-1", tag: "unexpected" }))
    expect(statusOf(w.state, "T-1")).toBe("blocked")
    expect(w.take("ask")).toHaveLength(1)
    expect((await w.inbox.drain(0)).join("\n")).toMatch(/Scheduler error while carrying out runGates .*EACCES.*; recorded as gates.errored/)
  })

  it("the Architect's planning that throws is a step that failed: a fresh planning session follows", async () => {
    const w = world(apply(initialState(), { type: "run.started", runId: "r1", requirement: "req", config: TEST_CONFIG }).state)
    const [plan] = w.take("plan")
    vi.spyOn(w.interpreter, "run").mockRejectedValueOnce(new Error("ENOSPC"))
    w.interpreter.execute(plan!)
    await vi.waitFor(() => expect(w.accepted.at(-1)).toMatchObject({ type: "step.failed", step: "plan", outcome: "spawn-failed" }))
    expect(w.take("plan")).toHaveLength(1)
  })
})
