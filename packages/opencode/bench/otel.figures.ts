/**
 * otel_overhead_ratio (issue 41 item 7): the wall of `aircoding demo` with its trace exported over OTLP/HTTP (to a
 * receiver on 127.0.0.1 that takes every request) against the same demo with no endpoint set; the median of each
 * over AIR_BENCH_OTEL_ROUNDS demos (2 by default), on and off alternating so the machine's load falls on both.
 * The export runs once, after the run, from the run's log: the goal is ≤ 1.02.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Proc } from "../src/scheduler/runtime/process"
import { TraceRecord } from "../src/scheduler/runtime/store/trace-record"
import { aircodingBin, bunBinary } from "../test/support/sandbox"
import { median, registerFigure } from "./figures"

const ROUNDS = Math.max(1, Number(process.env.AIR_BENCH_OTEL_ROUNDS) || 2)
const DEMO_TIMEOUT_MS = 10 * 60_000

/** The sends' own durations, from each exporting demo's .air/local/trace/sent.jsonl: otel_export_ms. */
const sendMs: number[] = []

async function demoWall(env: NodeJS.ProcessEnv): Promise<number> {
  const root = mkdtempSync(join(tmpdir(), "air-bench-otel-"))
  try {
    const started = performance.now()
    const result = await Proc.run(bunBinary(), [aircodingBin, "demo", "--dir", join(root, "calc"), "--json"], { cwd: root, env, timeoutMs: DEMO_TIMEOUT_MS })
    if (result.code !== 0) throw new Error(`otel_overhead_ratio: the demo did not finish (${Proc.describe(result, DEMO_TIMEOUT_MS)}): ${result.stderr.slice(-600)}`)
    const wall = (performance.now() - started) / 1000
    for (const line of TraceRecord.read(join(root, "calc"))) sendMs.push(line.ms)
    return wall
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

let ratio: Promise<number> | undefined

registerFigure({
  name: "otel_overhead_ratio",
  description: "aircoding demo's wall with its trace exported over OTLP/HTTP ÷ without (median of rounds each)",
  unit: "ratio",
  target: { op: "<=", value: 1.02 },
  run: () => (ratio ??= measure()),
})

registerFigure({
  name: "otel_export_ms",
  description: "the trace's send alone at the demo's end (derive + OTLP/HTTP export to 127.0.0.1), median, from sent.jsonl",
  unit: "ms",
  async run() {
    await (ratio ??= measure())
    return median(sendMs)
  },
})

async function measure(): Promise<number> {
  let exports = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      exports++
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const off = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OTEL_")))
  const on = { ...off, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }
  try {
    const walls = { on: [] as number[], off: [] as number[] }
    for (let i = 0; i < ROUNDS; i++) {
      walls.off.push(await demoWall(off))
      walls.on.push(await demoWall(on))
    }
    if (exports === 0) throw new Error("otel_overhead_ratio: the receiver got no export from the demos with an endpoint set")
    return median(walls.on) / median(walls.off)
  } finally {
    server.close()
  }
}
