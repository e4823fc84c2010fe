import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Proc } from "../../src/scheduler/runtime/process"
import { Prometheus } from "../support/prometheus"
import { aircodingBin, bunBinary, makeSandbox, type Sandbox } from "../support/sandbox"
import { freePort } from "../support/sshd"
import { untilBeforeStallEnds } from "../support/stall"
import { passingReviewer, planningArchitect, runScenario, submittingMain, trivialProject, writeAndReport, type RunResult } from "../support/runs"

/**
 * A real Prometheus scraping a live run (issue 41 item 6): `aircoding metrics` serves the project while `aircoding run`
 * drives the real engine with the scripted model. Mid-run, Prometheus reads T-1 running (its executor thinks for a
 * while first); at the end, both tasks merged, their gates timed, the model requests counted by role and the run done.
 * The recorded-log variant (test/dashboard/metrics.test.ts) checks every metric's value; this one, that they move live.
 */
const requirement = "Write the notes and the changelog."
const tasks = [
  { id: "T-1", title: "Write the notes", kind: "docs", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists" },
  { id: "T-2", title: "Write the changelog", kind: "docs", writeSet: [{ path: "CHANGELOG.md", action: "create" }], doneWhen: "CHANGELOG.md exists" },
]
const thinking = Array.from({ length: 6 }, () => ({ tool: "bash", args: { command: "true", description: "think" }, delayMs: 1500 }))
const scenario = {
  name: "metrics-live",
  scripts: [
    submittingMain(requirement),
    planningArchitect("Two tasks.", tasks),
    { agent: "executor", match: "^Task T-1:", steps: [...thinking, ...writeAndReport("notes.md", "# Notes\n", "notes")] },
    { agent: "executor", match: "^Task T-2:", steps: writeAndReport("CHANGELOG.md", "# Changelog\n", "changelog") },
    passingReviewer,
  ],
}

let sandbox: Sandbox
let server: Prometheus.Server
let metrics: Promise<Proc.Result>
const stopMetrics = new AbortController()
let r: RunResult
const midRun: Record<string, number | undefined> = {}

beforeAll(async () => {
  sandbox = makeSandbox("air-metrics-live-")
  const project = trivialProject(sandbox, { "README.md": "# Notes\n" })
  const metricsPort = await freePort()
  metrics = Proc.run(bunBinary(), [aircodingBin, "metrics", project, "--port", String(metricsPort)], { cwd: project, env: sandbox.env, signal: stopMetrics.signal, killGraceMs: 2_000 })
  server = await Prometheus.start(metricsPort)
  const stall = { ms: 240_000, what: "Prometheus reading T-1 running" }
  const run = runScenario(sandbox, project, scenario, { input: requirement })
  let ended = false
  void run.finally(() => (ended = true))
  // Read while the run goes on: T-1's executor thinks for about 9 s before it writes.
  await untilBeforeStallEnds(async () => {
    if (ended) return true
    const running = await Prometheus.valueOf(server.port, 'aircoding_tasks{state="running"}').catch(() => undefined)
    if (running === undefined || running < 1) return false
    midRun.running = running
    return true
  }, stall)
  r = await run
  // The last scrape after the run's end: every figure of the finished run.
  await untilBeforeStallEnds(async () => (await Prometheus.valueOf(server.port, 'aircoding_tasks{state="merged"}').catch(() => undefined)) === 2, { ms: 120_000, what: "Prometheus reading both tasks merged" })
}, 600_000)

afterAll(async () => {
  stopMetrics.abort()
  await metrics
  await server?.stop()
  sandbox?.cleanup()
})

describe("a real Prometheus scrapes a live run", () => {
  test("the run itself merges both tasks", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([
      ["T-1", "merged"],
      ["T-2", "merged"],
    ])
  })

  test("mid-run, Prometheus read a task running", () => {
    expect(midRun.running).toBeGreaterThanOrEqual(1)
  })

  test("at the end it reads the gates timed, the requests by role and the run done", async () => {
    expect(await Prometheus.valueOf(server.port, 'sum(aircoding_gate_duration_seconds_count{outcome="passed"})')).toBeGreaterThanOrEqual(2)
    expect(await Prometheus.valueOf(server.port, 'aircoding_merge_duration_seconds_count{outcome="merged"}')).toBe(2)
    expect(await Prometheus.valueOf(server.port, 'aircoding_model_requests_total{role="executor"}')).toBeGreaterThan(0)
    expect(await Prometheus.valueOf(server.port, 'aircoding_model_requests_total{role="reviewer"}')).toBeGreaterThan(0)
    const info = await Prometheus.query(server.port, "aircoding_run_info")
    expect(info[0]?.metric).toMatchObject({ run_id: r.summary.runId, status: "done" })
  })
})
