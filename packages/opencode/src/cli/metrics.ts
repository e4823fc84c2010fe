import { MetricsServer } from "../dashboard/metrics-server"
import { Args } from "./args"
import { Help } from "./help"
import { UsageError } from "./ui"

const METRICS_HELP = `aircoding metrics — serve a run's metrics to Prometheus, with no dashboard

Usage:
  aircoding metrics [dir] [--port N]
  aircoding metrics [dir] --host H --token T [--port N]

Serves GET /metrics for the run in dir (default: .) on http://127.0.0.1:${MetricsServer.DEFAULT_PORT}/metrics in
Prometheus' text format, derived from the run's event log at every scrape (a finished or archived run too).
The metric names are listed in the README (section "Metrics"). The dashboard serves the same /metrics.
  --port N      port to listen on (default ${MetricsServer.DEFAULT_PORT}; 0 picks a free one)
  --host H      address to listen on (default 127.0.0.1). Anything but loopback needs --token.
  --token T     require "Authorization: Bearer T" (Prometheus: authorization.credentials); or set AIRCODING_METRICS_TOKEN
Exit codes: 0 stopped, 1 cannot listen, a host refused without a token, or a usage error.
`

export function metricsCommand(argv: string[]): Promise<number> {
  return Args.guard(() => metrics(argv))
}

async function metrics(argv: string[]): Promise<number> {
  const { values, positionals } = Args.parse("metrics", argv, {
    port: { type: "string", short: "p" },
    host: { type: "string" },
    token: { type: "string" },
  } as const)
  if (values.help) return Args.print(Help.say(METRICS_HELP))
  const root = Args.projectDir(positionals[0], "metrics")
  let port = MetricsServer.DEFAULT_PORT
  if (values.port !== undefined) {
    port = Number(values.port)
    if (!/^\d+$/.test(values.port) || port > 65535) throw new UsageError(`--port ${values.port}: expected a port number from 0 to 65535`, "metrics")
  }
  const host = values.host ?? "127.0.0.1"
  const token = values.token ?? (process.env.AIRCODING_METRICS_TOKEN || undefined)
  let running: MetricsServer.Running
  try {
    running = await MetricsServer.start({ root, host, port, ...(token ? { token } : {}) })
  } catch (err) {
    process.stderr.write(`aircoding metrics: ${(err as Error).message}\n`)
    return 1
  }
  process.stdout.write(`AirCoding metrics for ${root}\n  ${running.url}\n(Ctrl-C to stop)\n`)
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop)
      process.off("SIGTERM", stop)
      resolve()
    }
    process.on("SIGINT", stop)
    process.on("SIGTERM", stop)
  })
  await running.close()
  return 0
}
