import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Prometheus } from "../../src/dashboard/prometheus"
import { RunMetrics } from "../../src/read/run-metrics"
import { TraceRecord } from "../../src/scheduler/runtime/store/trace-record"
import { aircoding } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { commitStep, passingReviewer, planningArchitect, runScenario, submittingMain, trivialProject, writeAndReport, type RunResult } from "../support/runs"

/**
 * A headless run with the real engine and the scripted model, exporting its trace to an OTLP/HTTP receiver of
 * this test (http/json, on 127.0.0.1): T-1's executor writes a word the test gate refuses, the gate run fails, the
 * Debugger fixes it, the second gate run passes, the task merges. The receiver gets one trace: the run at its root,
 * the task under its phase, both attempts, the failed gate run with ERROR and the gate's reason, the sessions with
 * their roles. The engine's spans of each prompt arrive in the same trace, its model calls (`LLM.run`) and tools
 * (`Tool.execute`) under the session span that prompted them, and none of its plumbing (`sql.execute`,
 * `Plugin.*`, `Config.*`: our relay drops them) unless AIRCODING_OTEL_ENGINE=1. `aircoding traces export` sends
 * the same ids again; to a closed port it drops them, bounded, and records the drop.
 */
const requirement = "Write the release notes."
const tasks = [{ id: "T-1", title: "Write the release notes", kind: "test", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists and the notes check passes" }]
const NO_BAD = "if grep -q BAD notes.md; then echo 'notes.md contains BAD' >&2; exit 1; fi"
const scenario = {
  name: "traces",
  scripts: [
    submittingMain(requirement),
    planningArchitect("One task.", tasks),
    {
      agent: "executor",
      match: "^Task T-1:",
      steps: [{ tool: "write", args: { filePath: "notes.md", content: "BAD notes\n" } }, commitStep("notes"), { tool: "air_report", args: { summary: "Wrote the notes." } }, { text: "Reported." }],
    },
    {
      agent: "debugger",
      match: "^Task T-1:",
      steps: [
        { tool: "bash", args: { command: NO_BAD, description: "reproduce the failing check" } },
        { tool: "edit", args: { filePath: "notes.md", oldString: "BAD notes", newString: "Good notes" } },
        { tool: "bash", args: { command: NO_BAD, description: "verify: the check passes" } },
        commitStep("no BAD in the notes"),
        {
          tool: "air_report",
          args: {
            summary: "The check refused the word BAD; the notes no longer say it.",
            debug: {
              symptom: "the test gate fails: notes.md contains BAD",
              reproduction: { command: NO_BAD, output: "notes.md contains BAD" },
              rootCause: { file: "notes.md", line: 1, explanation: "the first line says BAD, which the check refuses" },
              fix: "the first line says Good notes",
              verification: { command: NO_BAD, output: "(no output, exit 0)" },
              pattern: "none",
            },
          },
        },
        { text: "Reported." },
      ],
    },
    passingReviewer,
  ],
}

type Received = { path: string; headers: IncomingHttpHeaders; body: any }
type Span = { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes: { key: string; value: Record<string, unknown> }[]; status?: { code?: number; message?: string } }

/** The engine's plumbing, as the pinned engine names it (EngineSpans keeps none of it). */
const PLUMBING = /^(sql\.execute|Plugin\.|Config\.|InstanceStore\.|Npm\.|FileSystem\.)/

let sandbox: Sandbox
let server: Server
let endpoint: string
let project: string
let r: RunResult
const got: Received[] = []

const otelEnv = () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20T0KEN",
  OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=ci",
})
const attr = (s: Span, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value
  return v ? (v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue) : undefined
}
const spansOf = (bodies: Received[]) => bodies.flatMap((b) => (b.body.resourceSpans ?? []).flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans as Span[])))
const serviceNames = (bodies: Received[]) =>
  bodies.flatMap((b) => (b.body.resourceSpans ?? []).map((rs: any) => rs.resource?.attributes?.find((a: any) => a.key === "service.name")?.value?.stringValue))
/** The receiver's server: every body it got, parsed when JSON. */
const receiver = (into: Received[]) =>
  createServer((req, res) => {
    let text = ""
    req.on("data", (c) => (text += c))
    req.on("end", () => {
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {}
      into.push({ path: req.url ?? "", headers: req.headers, body })
      res.setHeader("content-type", "application/json")
      res.end("{}")
    })
  })

beforeAll(async () => {
  server = receiver(got)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  sandbox = makeSandbox("air-traces-")
  project = trivialProject(sandbox, { "README.md": "# Notes\n" }, { test: [NO_BAD] })
  r = await runScenario(sandbox, project, scenario, { input: requirement, env: otelEnv() })
}, 600_000)

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  sandbox?.cleanup()
})

describe("a run's trace over OTLP/HTTP", () => {
  test("the run finishes done, T-1 merged after a failed gate run", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"]])
    expect(r.events.filter((e) => e.type === "gates.failed").map((e) => e.gate)).toEqual(["test"])
  })

  test("the receiver got one trace, on /v1/traces with the headers, from aircoding and the engine, with none of the engine's plumbing or logs", () => {
    expect(got.length, JSON.stringify(got.map((g) => g.path))).toBeGreaterThan(0)
    for (const g of got) {
      expect(g.path).toBe("/v1/traces")
      expect(g.headers.authorization).toBe("Bearer T0KEN")
    }
    expect(new Set(serviceNames(got))).toEqual(new Set(["aircoding", "opencode"]))
    expect(spansOf(got).filter((s) => PLUMBING.test(s.name)).map((s) => s.name)).toEqual([])
    const resource = got[0]!.body.resourceSpans[0].resource.attributes
    expect(resource).toContainEqual({ key: "deployment.environment", value: { stringValue: "ci" } })
    const spans = spansOf(got)
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1)
    expect(TraceRecord.read(project).map((l) => [l.outcome, l.spans])).toEqual([["sent", spans.length]])
  })

  test("the tree: run at the root, the task under its phase, attempts under the task, gate runs and sessions under their attempt", () => {
    const spans = spansOf(got)
    const byId = new Map(spans.map((s) => [s.spanId, s]))
    const parent = (s: Span) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined)
    const roots = spans.filter((s) => !s.parentSpanId)
    expect(roots.map((s) => s.name)).toEqual(["run"])
    expect(attr(roots[0]!, "aircoding.run.id")).toBe(r.summary.runId)
    expect(attr(roots[0]!, "aircoding.outcome")).toBe("done")
    for (const s of spans) if (s.parentSpanId) expect(byId.has(s.parentSpanId), `${s.name}'s parent`).toBe(true)

    const task = spans.find((s) => attr(s, "aircoding.span") === "task")!
    expect(attr(task, "aircoding.task.id")).toBe("T-1")
    expect(attr(parent(task)!, "aircoding.span")).toBe("phase")
    const attempts = spans.filter((s) => attr(s, "aircoding.span") === "attempt" && s.parentSpanId === task.spanId)
    expect(attempts.map((s) => attr(s, "aircoding.role"))).toEqual(["executor", "debugger"])
    expect(attempts.map((s) => [s.status?.code, attr(s, "aircoding.outcome")])).toEqual([
      [2, "gate test failed"],
      [1, "merged"],
    ])
    const gateRuns = spans.filter((s) => attr(s, "aircoding.span") === "gates")
    expect(gateRuns.map((s) => parent(s)?.spanId)).toEqual(attempts.map((s) => s.spanId))
    // Status codes: 1 OK, 2 ERROR. The failed run carries the gate and its reason.
    expect(gateRuns.map((s) => s.status?.code)).toEqual([2, 1])
    expect(attr(gateRuns[0]!, "aircoding.gate")).toBe("test")
    expect(gateRuns[0]!.status?.message).toContain("notes.md contains BAD")
    const testGate = spans.find((s) => attr(s, "aircoding.span") === "gate" && s.parentSpanId === gateRuns[0]!.spanId && attr(s, "aircoding.gate") === "test")
    expect(testGate?.status?.code).toBe(2)
    const sessions = spans.filter((s) => attr(s, "aircoding.span") === "session")
    expect(new Set(sessions.map((s) => attr(s, "aircoding.role")))).toEqual(new Set(["executor", "debugger", "reviewer"]))
    // The model the engine reported for the session's calls, and its figures from the log's usage.recorded.
    for (const s of sessions) expect(String(attr(s, "aircoding.model")), s.name).toMatch(/\//)
    expect(sessions.every((s) => Number(attr(s, "aircoding.requests")) > 0)).toBe(true)
    expect(spans.some((s) => attr(s, "aircoding.span") === "merge" && s.parentSpanId === task.spanId && attr(s, "aircoding.outcome") === "merged")).toBe(true)
    expect(spans.some((s) => attr(s, "aircoding.span") === "finalCheck")).toBe(true)
  })

  test("the engine's model calls and tools hang under the session span that prompted them, without content", () => {
    const spans = spansOf(got)
    const byId = new Map(spans.map((s) => [s.spanId, s]))
    const sessionOf = (s: Span): Span | undefined => {
      for (let at: Span | undefined = s; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) if (attr(at, "aircoding.span") === "session") return at
      return undefined
    }
    const calls = spans.filter((s) => s.name === "LLM.run")
    expect(calls.length).toBeGreaterThan(0)
    const roles = new Set(calls.map((s) => sessionOf(s)).flatMap((s) => (s ? [attr(s, "aircoding.role")] : [])))
    expect(roles).toEqual(new Set(["executor", "debugger", "reviewer"]))
    // The request that carried the prompt is the engine's span right under ours.
    const executor = spans.find((s) => attr(s, "aircoding.span") === "session" && attr(s, "aircoding.role") === "executor")!
    expect(spans.filter((s) => s.parentSpanId === executor.spanId).map((s) => s.name)).toContain("http.server POST")
    const tools = spans.filter((s) => s.name === "Tool.execute" && sessionOf(s) === executor).map((s) => attr(s, "tool.name"))
    expect(tools).toEqual(expect.arrayContaining(["write", "bash", "air_report"]))
    // The engine's spans (ours carry aircoding.span): the debugger's edit quoted the file, the prompts the task;
    // nothing of either leaves the machine.
    const engine: Span[] = spans.filter((s: Span) => attr(s, "aircoding.span") === undefined)
    expect(engine.length).toBeGreaterThan(calls.length)
    expect(JSON.stringify(engine)).not.toMatch(/BAD notes|Good notes|Task T-1:/)
    expect(engine.flatMap((s) => s.attributes.map((a) => a.key)).filter((k) => /^http\.request\.header\.|^db\.|^exception\.message/.test(k))).toEqual([])
  })

  test("traces export sends the same trace again, with the same ids", async () => {
    const before = spansOf(got)
    const first = got.length
    const out = await aircoding(["traces", "export", project], { cwd: project, env: { ...sandbox.env, ...otelEnv() } })
    expect(out.code, out.stderr).toBe(0)
    expect(out.stdout).toContain(`sent the trace of run ${r.summary.runId}`)
    const again = spansOf(got.slice(first))
    expect(again.map((s) => s.spanId).sort()).toEqual(before.map((s) => s.spanId).sort())
    expect(new Set(again.map((s) => s.traceId))).toEqual(new Set(before.map((s) => s.traceId)))
  })

  test("an unreachable endpoint (a closed port): the export is dropped, said in one line, and recorded", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const out = await aircoding(["traces", "export", project], { cwd: project, env: { ...sandbox.env, ...otelEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` } })
    expect(out.code).toBe(1)
    expect(out.stderr).toMatch(/spans of run .* dropped/)
    const last = TraceRecord.read(project).at(-1)!
    expect(last.outcome).toBe("dropped")
    expect(last.spans).toBeGreaterThan(0)
    expect(TraceRecord.counts(project).dropped).toBe(last.spans)
  })

  test("grpc is refused in one line; a bad flag is a usage error", async () => {
    const grpc = await aircoding(["traces", "export", project], { cwd: project, env: { ...sandbox.env, ...otelEnv(), OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" } })
    expect(grpc.code).toBe(1)
    expect(grpc.stderr.trim().split("\n")).toHaveLength(1)
    expect(grpc.stderr).toContain("grpc is not supported")
    const bad = await aircoding(["traces", "export", project, "--bogus"], { cwd: project, env: sandbox.env })
    expect(bad.code).toBe(1)
    expect(bad.stderr.trimEnd().split("\n")).toEqual(["aircoding: unknown option --bogus", "Run `aircoding traces --help` for usage."])
  })
})

describe("an unreachable endpoint (a closed port) during a run", () => {
  let quiet: string
  let q: RunResult
  beforeAll(async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    quiet = trivialProject(sandbox, { "README.md": "# Notes\n" }, {}, "closed")
    const docs = [{ id: "T-1", title: "Write the notes", kind: "docs", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists" }]
    const oneTask = {
      name: "traces-closed",
      scripts: [submittingMain("Write the notes."), planningArchitect("One task.", docs), { agent: "executor", match: "^Task T-1:", steps: writeAndReport("notes.md", "Notes\n", "notes") }, passingReviewer],
    }
    q = await runScenario(sandbox, quiet, oneTask, { input: "Write the notes.", env: { ...otelEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` }, name: "closed" })
  }, 600_000)

  test("the run still finishes done, says the trace was not exported, and records the dropped spans", async () => {
    expect(q.code, q.stderr.slice(-3000)).toBe(0)
    expect(q.summary.status).toBe("done")
    expect(q.stderr).toContain("the run's trace was not exported")
    const record = TraceRecord.read(quiet)
    expect(record.map((l) => l.outcome)).toEqual(["dropped"])
    expect(record[0]!.spans).toBeGreaterThan(0)
    expect(record[0]!.reason).toContain("127.0.0.1")
    // The event log is whole: the run's last event is its final check, as in any run.
    expect(q.events.at(-1)?.type).toBe("finalCheck.done")
    const metrics = await Prometheus.exposition(new RunMetrics.Source(quiet).figures())
    expect(metrics).toContain(`aircoding_trace_spans_dropped_total ${record[0]!.spans}`)
    expect(metrics).toContain("aircoding_trace_spans_exported_total 0")
  })
})

describe("AIRCODING_OTEL_ENGINE=1: all of the engine's spans, straight to the endpoint", () => {
  const all: Received[] = []
  let direct: Server
  let e: RunResult
  beforeAll(async () => {
    direct = receiver(all)
    await new Promise<void>((resolve) => direct.listen(0, "127.0.0.1", resolve))
    const project = trivialProject(sandbox, { "README.md": "# Notes\n" }, {}, "engine")
    const docs = [{ id: "T-1", title: "Write the notes", kind: "docs", writeSet: [{ path: "notes.md", action: "create" }], doneWhen: "notes.md exists" }]
    const oneTask = {
      name: "traces-engine",
      scripts: [submittingMain("Write the notes."), planningArchitect("One task.", docs), { agent: "executor", match: "^Task T-1:", steps: writeAndReport("notes.md", "Notes\n", "notes") }, passingReviewer],
    }
    const url = `http://127.0.0.1:${(direct.address() as AddressInfo).port}`
    e = await runScenario(sandbox, project, oneTask, { input: "Write the notes.", env: { ...otelEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: url, AIRCODING_OTEL_ENGINE: "1" }, name: "engine" })
  }, 600_000)
  afterAll(async () => {
    direct?.closeAllConnections()
    await new Promise<void>((resolve) => (direct ? direct.close(() => resolve()) : resolve()))
  })

  test("the plumbing and the logs arrive, and the model calls still hang under the run's sessions", () => {
    expect(e.code, e.stderr.slice(-3000)).toBe(0)
    const spans = spansOf(all)
    expect(spans.some((s) => s.name === "sql.execute")).toBe(true)
    expect(spans.some((s) => s.name.startsWith("Plugin."))).toBe(true)
    expect(all.some((g) => g.path === "/v1/logs")).toBe(true)
    const byId = new Map(spans.map((s) => [s.spanId, s]))
    const executor = spans.find((s) => attr(s, "aircoding.span") === "session" && attr(s, "aircoding.role") === "executor")!
    const underExecutor = spans.filter((s) => {
      for (let at: Span | undefined = s; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) if (at === executor) return true
      return false
    })
    expect(underExecutor.map((s) => s.name)).toContain("LLM.run")
  })
})
