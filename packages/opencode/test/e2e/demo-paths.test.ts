import { execFileSync } from "node:child_process"
import { cpSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Paths } from "../../src/engine"
import { aircoding } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"

/**
 * The README's headless flow with the shipped demo.json, unmodified (issue 39 item 1): `run` stops at the
 * plan (exit 2), `--resume --answer "change: …"` stops again at the revised plan (exit 2), and
 * `--resume --answer yes` runs it to the end (exit 0). Each resume is a new process, so the Architect
 * answers in a fresh session; before the scenario had its scripts, a confirmation proposed the plan again.
 * Each process sends the run's trace to an OTLP/HTTP receiver of the test when it ends (issue 41): the resumed
 * runs continue the one trace, with the same ids for what the earlier processes already sent.
 */
let sandbox: Sandbox
let dir: string
let server: Server
let endpoint: string
type Span = { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes: { key: string; value: { stringValue?: string } }[] }
const exports: Span[][] = []
const scenario = join(Paths.scenarios, "demo.json")

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = ""
    req.on("data", (c) => (text += c))
    req.on("end", () => {
      const body = JSON.parse(text) as { resourceSpans?: { scopeSpans: { spans: Span[] }[] }[] }
      exports.push((body.resourceSpans ?? []).flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)))
      res.setHeader("content-type", "application/json")
      res.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  sandbox = makeSandbox("air-demo-paths-")
  dir = join(sandbox.root, "calc")
  cpSync(join(Paths.samples, "cpp-calc"), dir, { recursive: true })
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: sandbox.env })
  git("init", "-q")
  git("add", "-A")
  git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "baseline")
})

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  sandbox?.cleanup()
})

const env = () => ({ ...sandbox.env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })
const run = (args: string[], input?: string) => aircoding(["run", dir, ...args, "--json", "--scripted", scenario], { cwd: sandbox.root, env: env(), input })

describe("the headless demo.json paths", () => {
  test("plan → change → revised plan → yes → done", async () => {
    const first = await run([], "Extend calc with mul and avg3")
    expect(first.code, first.stderr).toBe(2)
    expect(JSON.parse(first.stdout).stage).toBe("confirming")

    const changed = await run(["--resume", "--answer", "change: split the tests"])
    expect(changed.code, changed.stderr).toBe(2)
    const revised = JSON.parse(changed.stdout)
    expect(revised.stage).toBe("confirming")
    expect(revised.plan.summary).toContain("Revised plan")

    const yes = await run(["--resume", "--answer", "yes"])
    expect(yes.code, yes.stderr).toBe(0)
    const done = JSON.parse(yes.stdout)
    expect(done.status).toBe("done")
    expect(done.tasks.map((t: { id: string }) => t.id)).toEqual(["T-1", "T-2", "T-3"])

    // One export per process, all of one trace: the resumed runs continued it.
    expect(exports.length).toBe(3)
    const traceIds = new Set(exports.flat().map((span) => span.traceId))
    expect(traceIds.size).toBe(1)
    const root = (spans: Span[]) => spans.filter((span) => !span.parentSpanId)
    expect(exports.map((spans) => root(spans).map((span) => span.spanId))).toEqual([0, 1, 2].map(() => [root(exports[0]!)[0]!.spanId]))
    // What the first process sent, the last sent again with the same ids; the last holds the tasks it ran.
    const last = new Set(exports[2]!.map((span) => span.spanId))
    for (const span of exports[0]!) expect(last.has(span.spanId), `${span.name} of the first export in the last`).toBe(true)
    const tasks = new Set(exports[2]!.flatMap((span) => span.attributes.filter((a) => a.key === "aircoding.task.id").map((a) => a.value.stringValue)))
    expect([...tasks].sort()).toEqual(["T-1", "T-2", "T-3"])
  }, 900_000)
})
