import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Proc } from "../../src/scheduler/runtime/process"
import { freePort } from "./sshd"

/**
 * A real Prometheus server (Debian's package, installed by ./start.sh) on 127.0.0.1, scraping one target every
 * second, and its HTTP API's instant queries: what a team's Prometheus would read from `aircoding metrics`.
 */
export namespace Prometheus {
  export const BINARY = "/usr/bin/prometheus"
  export const PROMTOOL = "/usr/bin/promtool"

  type Sample = { metric: Record<string, string>; value: [number, string] }
  export type Server = { port: number; exited: () => boolean; stderr: () => Promise<string>; stop: () => Promise<void> }

  /** Starts Prometheus scraping `127.0.0.1:<targetPort>` as job `aircoding`; `stop` ends its process group and removes its data. */
  export async function start(targetPort: number): Promise<Server> {
    const dir = mkdtempSync(join(tmpdir(), "air-prometheus-"))
    const config = join(dir, "prometheus.yml")
    writeFileSync(
      config,
      ["global:", "  scrape_interval: 1s", "  evaluation_interval: 1s", "scrape_configs:", "  - job_name: aircoding", "    static_configs:", `      - targets: ["127.0.0.1:${targetPort}"]`, ""].join("\n"),
    )
    const port = await freePort()
    const abort = new AbortController()
    let ended = false
    const done = Proc.run(BINARY, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], {
      cwd: tmpdir(),
      env: process.env,
      signal: abort.signal,
      killGraceMs: 2_000,
    }).finally(() => (ended = true))
    return {
      port,
      exited: () => ended,
      stderr: async () => (await done).stderr.slice(-2000),
      stop: async () => {
        abort.abort()
        await done
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }

  export async function query(port: number, promql: string): Promise<Sample[]> {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(promql)}`)
    const body = (await res.json()) as { status: string; data?: { result: Sample[] } }
    return body.status === "success" ? (body.data?.result ?? []) : []
  }

  export async function valueOf(port: number, promql: string): Promise<number | undefined> {
    const result = await query(port, promql)
    return result[0] ? Number(result[0].value[1]) : undefined
  }
}
