import { spawnSync } from "node:child_process"
import { tmpdir } from "node:os"
import { afterEach, describe, expect, test } from "vitest"
import { metricsCommand } from "../../src/cli/metrics"
import { DashboardServer } from "../../src/dashboard/server"
import { RunHub } from "../../src/dashboard/hub"
import { Proc } from "../../src/scheduler/runtime/process"
import { capture } from "../cli-view/helpers"
import { aircodingBin, bunBinary } from "../support/sandbox"
import { freePort } from "../support/sshd"
import { Prometheus } from "../support/prometheus"
import { untilBeforeStallEnds } from "../support/stall"
import { append, copyFixture, keepFirst } from "./helpers"

/**
 * `/metrics` of the dashboard and of `aircoding metrics`, read by Prometheus' own tools: promtool parses the
 * exposition, and a real Prometheus server (Debian's package) scrapes a run whose log grows and answers queries.
 */
const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})
function fixture() {
  const copy = copyFixture()
  cleanups.push(copy.cleanup)
  return copy.root
}

const PROMTOOL = Prometheus.PROMTOOL

describe("aircoding metrics: arguments", () => {
  test("--help prints the usage; an unknown flag and a bad port exit 1 saying what is wrong", async () => {
    const help = await capture(() => metricsCommand(["--help"]))
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("aircoding metrics [dir] [--port N]")
    const flag = await capture(() => metricsCommand([fixture(), "--prot", "9000"]))
    expect(flag.code).toBe(1)
    expect(flag.stderr).toMatch(/--prot.*--port/s)
    const port = await capture(() => metricsCommand([fixture(), "--port", "http"]))
    expect(port.code).toBe(1)
    expect(port.stderr).toContain("--port http: expected a port number")
  })

  test("a non-loopback host without a token exits 1 and listens nowhere", async () => {
    const saved = process.env.AIRCODING_METRICS_TOKEN
    delete process.env.AIRCODING_METRICS_TOKEN
    try {
      const r = await capture(() => metricsCommand([fixture(), "--host", "0.0.0.0", "--port", "0"]))
      expect(r.code).toBe(1)
      expect(r.stderr).toContain("refusing to serve the metrics on 0.0.0.0 without a token")
    } finally {
      if (saved !== undefined) process.env.AIRCODING_METRICS_TOKEN = saved
    }
  })
})

describe("the dashboard's /metrics", () => {
  test("is Prometheus' text format as promtool reads it, with the run's figures", async () => {
    const root = fixture()
    const app = DashboardServer.app(new RunHub(root, "en"), {})
    const res = await app.request("/metrics", { headers: { host: "127.0.0.1:7357" } })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/plain")
    const text = await res.text()
    const check = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" })
    expect(check.status, `promtool check metrics: ${check.stdout}${check.stderr}`).toBe(0)
    expect(text).toContain('aircoding_tasks{state="merged"} 3')
    expect(text).toContain('aircoding_gate_duration_seconds_count{gate="build",outcome="passed"} 4')
    expect(text).toContain('aircoding_model_requests_total{role="executor"} 18')
    expect(text).toContain("aircoding_notifications_dropped_total 0")
    // Cost in money is not in this version's log: no metric says it, rather than a made-up zero.
    expect(text).not.toMatch(/^aircoding_model_cost_usd_total\{/m)
  })

  test("tokens, cost and unpriced requests by role and model, from the sessions' last usage totals", async () => {
    const root = fixture()
    const usage = (seq: number, sessionId: string, role: string, fields: Record<string, unknown>) =>
      JSON.stringify({ seq, type: "usage.recorded", sessionId, role, requests: 2, at: `2026-11-29T09:12:0${seq - 33}.000Z`, ...fields })
    append(root, [
      usage(33, "ses-a", "executor", { tokens: 100, costUsd: 0.25, model: "openai/gpt-x" }),
      // The same session later: its last totals count, not the sum of both lines.
      usage(34, "ses-a", "executor", { tokens: 300, costUsd: 0.75, model: "openai/gpt-x" }),
      usage(35, "ses-b", "executor", { tokens: 50, costUsd: 0.5, model: "openai/gpt-x" }),
      usage(36, "ses-c", "reviewer", { tokens: 40, unpriced: 2, model: "local/llama" }),
    ])
    const app = DashboardServer.app(new RunHub(root, "en"), {})
    const text = await (await app.request("/metrics", { headers: { host: "127.0.0.1:7357" } })).text()
    const check = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" })
    expect(check.status, `promtool check metrics: ${check.stdout}${check.stderr}`).toBe(0)
    expect(text).toContain('aircoding_model_tokens_by_model_total{role="executor",model="openai/gpt-x"} 350')
    expect(text).toContain('aircoding_model_cost_usd_total{role="executor",model="openai/gpt-x"} 1.25')
    expect(text).toContain('aircoding_model_unpriced_requests_total{role="reviewer",model="local/llama"} 2')
    // The unpriced model has no cost line: unknown, not $0.
    expect(text).not.toMatch(/aircoding_model_cost_usd_total\{role="reviewer"/)
  })
})

/** A process of the test, stopped (its whole group) when the test ends. */
function background(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Proc.Result> {
  const stop = new AbortController()
  const done = Proc.run(command, args, { cwd: tmpdir(), env, signal: stop.signal, killGraceMs: 2_000 })
  cleanups.push(async () => {
    stop.abort()
    await done
  })
  return done
}

describe("a real Prometheus scrapes aircoding metrics", () => {
  test("while the run's log grows, and its HTTP API answers with the run's values", async () => {
    const root = fixture()
    const lines = keepFirst(root, 12)
    const metricsPort = await freePort()
    const metrics = background(bunBinary(), [aircodingBin, "metrics", root, "--port", String(metricsPort)])

    const server = await Prometheus.start(metricsPort)
    cleanups.push(server.stop)
    const promPort = server.port
    let metricsEnded = false
    void metrics.then(() => (metricsEnded = true))

    const stall = { ms: 180_000, what: "the wait for Prometheus' scrapes" }
    const reads = async (promql: string, want: number) => {
      if (metricsEnded) throw new Error(`aircoding metrics ended early: ${(await metrics).stderr}`)
      if (server.exited()) throw new Error(`Prometheus ended early: ${await server.stderr()}`)
      return (await Prometheus.valueOf(promPort, promql).catch(() => undefined)) === want
    }
    await untilBeforeStallEnds(() => reads('up{job="aircoding"}', 1), stall)
    await untilBeforeStallEnds(() => reads("aircoding_events_total", 12), stall)

    // The run goes on: what is appended is in the next scrapes.
    append(root, lines.slice(12))
    await untilBeforeStallEnds(() => reads("aircoding_events_total", lines.length), stall)
    expect(await Prometheus.valueOf(promPort, 'aircoding_tasks{state="merged"}')).toBe(3)
    expect(await Prometheus.valueOf(promPort, "sum(aircoding_model_requests_total)")).toBe(35)
    expect(await Prometheus.valueOf(promPort, 'sum(aircoding_gate_duration_seconds_count{gate="build"})')).toBe(4)
    expect(await Prometheus.valueOf(promPort, 'aircoding_gate_duration_seconds_bucket{gate="analysis",outcome="failed",le="+Inf"}')).toBe(1)
    expect(await Prometheus.valueOf(promPort, 'aircoding_merge_duration_seconds_count{outcome="merged"}')).toBe(3)
    expect(await Prometheus.valueOf(promPort, "aircoding_questions_waiting")).toBe(0)
    const info = await Prometheus.query(promPort, "aircoding_run_info")
    expect(info[0]?.metric).toMatchObject({ run_id: "run-20261129-0900", status: "done" })
  }, 240_000)
})
