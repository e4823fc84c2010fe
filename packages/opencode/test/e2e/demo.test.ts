import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { aircoding } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"

/**
 * `./start.sh demo` end to end: the real engine, the scripted model, real git, cmake, ctest and
 * cppcheck. Three tasks, two in parallel in separate worktrees touching different regions of the same
 * files, one after both; T-2's first code fails cppcheck and the Debugger fixes it; every task is
 * reviewed, squash-merged and tagged; the Scheduler builds and tests the result itself.
 */
let sandbox: Sandbox
let dir: string
let summary: any
let code: number
let modelLog: { agent: string }[]

beforeAll(async () => {
  sandbox = makeSandbox("air-demo-")
  dir = join(sandbox.root, "demo")
  const log = join(sandbox.root, "model.jsonl")
  const out = await aircoding(["demo", "--json", "--dir", dir], { cwd: sandbox.root, env: { ...sandbox.env, AIRCODING_SCRIPTED_LOG: log } })
  code = out.code
  try {
    summary = JSON.parse(out.stdout)
  } catch {
    throw new Error(`demo printed no JSON summary (exit ${out.code}):\n${out.stdout}\n${out.stderr}`)
  }
  modelLog = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l))
}, 900_000)

afterAll(() => sandbox?.cleanup())

const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" })

describe("the demo: one requirement to merged, verified code", () => {
  test("exits 0 with every task merged and the integration branch green", () => {
    expect(code, JSON.stringify(summary.errors)).toBe(0)
    expect(summary.status).toBe("done")
    expect(summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "merged"],
      ["T-2", "merged"],
      ["T-3", "merged"],
    ])
    expect(summary.final.passed).toBe(true)
    expect(summary.errors).toEqual([])
    expect(typeof summary.wallTimeMs).toBe("number")
  })

  test("the cppcheck error of T-2 went to the Debugger with its evidence, then through the gates again", () => {
    const t2 = summary.tasks.find((t: any) => t.id === "T-2")
    expect(t2.attempts).toBe(2)
    const first = JSON.parse(readFileSync(join(dir, ".air/local/evidence/T-2/attempt-1/report.json"), "utf8"))
    expect(first.failedGate).toBe("analysis")
    expect(first.findings).toContainEqual(expect.objectContaining({ severity: "error", id: "arrayIndexOutOfBounds" }))
    expect(readFileSync(join(dir, ".air/local/evidence/T-2/attempt-1/cppcheck.log"), "utf8")).toMatch(/arrayIndexOutOfBounds/)
    const second = JSON.parse(readFileSync(join(dir, ".air/local/evidence/T-2/attempt-2/report.json"), "utf8"))
    expect(second.passed).toBe(true)
    expect(modelLog.some((r) => r.agent === "debugger")).toBe(true)
  })

  test("T-1 and T-2 ran in parallel in separate worktrees and both changes to the same files survived the merge", () => {
    const events = readFileSync(join(dir, ".air/local/state/events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    const seq = (type: string, taskId: string) => events.find((e) => e.type === type && e.taskId === taskId)?.seq
    // Both were dispatched before either reported.
    expect(Math.max(seq("task.dispatched", "T-1"), seq("task.dispatched", "T-2"))).toBeLessThan(Math.min(seq("worker.reported", "T-1"), seq("worker.reported", "T-2")))
    // T-3 started only after both merged.
    expect(seq("task.dispatched", "T-3")).toBeGreaterThan(Math.max(seq("merge.succeeded", "T-1"), seq("merge.succeeded", "T-2")))
    const cpp = git("show", "main:src/calc.cpp")
    expect(cpp).toContain("int mul(int a, int b)")
    expect(cpp).toContain("int avg3(int a, int b, int c)")
    expect(cpp).toContain("i < 3")
    expect(git("tag", "--list", "air/done/*").trim().split("\n")).toEqual(["air/done/T-1", "air/done/T-2", "air/done/T-3"])
    // Branches and worktrees are gone once their merge was confirmed.
    expect(git("branch", "--list", "air/*").trim()).toBe("")
  })

  test("the only phase ends with the Architect's final milestone review, and the run is done only after it passed", () => {
    const events = readFileSync(join(dir, ".air/local/state/events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    const at = (pred: (e: any) => boolean) => events.findIndex(pred)
    const lastMerge = Math.max(...events.map((e, i) => (e.type === "merge.succeeded" ? i : -1)))
    const reached = at((e) => e.type === "milestone.reached")
    const reviewed = at((e) => e.type === "milestone.reviewed")
    expect(events.filter((e) => e.type === "milestone.reviewed").map((e) => [e.phase, e.verdict])).toEqual([[1, "pass"]])
    expect(reached).toBeGreaterThan(lastMerge)
    expect(reviewed).toBeGreaterThan(reached)
    expect(at((e) => e.type === "finalCheck.done")).toBeGreaterThan(reviewed)
    // Its prompt said it was the final review of the whole requirement, listing every task and the ADRs
    // (the scenario's step expects them, or the request fails).
    expect(modelLog.filter((r: any) => r.script === "architect-final-review" && r.reply?.tools?.includes("air_milestone"))).toHaveLength(1)
  })

  test("routine scheduling cost zero model requests: no scheduler agent, and Main woke only to submit, hear the end and answer", () => {
    const byAgent: Record<string, number> = {}
    for (const r of modelLog) byAgent[r.agent] = (byAgent[r.agent] ?? 0) + 1
    expect(byAgent.scheduler).toBeUndefined()
    expect(byAgent.main).toBe(3)
    expect(summary.modelRequests.main).toBe(3)
    expect(summary.modelRequests.scheduler).toBeUndefined()
  })
})
