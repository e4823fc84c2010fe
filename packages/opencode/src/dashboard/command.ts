import { Args } from "../cli/args"
import { Help } from "../cli/help"
import { viewLang } from "../cli/status"
import { UsageError } from "../cli/ui"
import { DashboardServer } from "./server"
import { AirPaths } from "../scheduler/core/air-paths"

const DASHBOARD_HELP = `aircoding dashboard — watch a run live in the browser

Usage:
  aircoding dashboard [dir] [--port N] [--lang en|zh-CN]
  aircoding dashboard [dir] --host H --token T [--port N]

Serves a read-only page for the run in dir (default: .) on http://127.0.0.1:${DashboardServer.DEFAULT_PORT}/:
the task graph coloured by state, the timeline of events, each task's evidence (build, test and
cppcheck output, the diff, the review report, the sessions that worked on it) and the budgets,
updated live as the Scheduler appends events. Ctrl-C stops it.
  --port N      port to listen on (default ${DashboardServer.DEFAULT_PORT}; 0 picks a free one)
  --host H      address to listen on (default 127.0.0.1). Anything but loopback needs --token.
  --token T     require this token (at least ${DashboardServer.MIN_TOKEN_LENGTH} characters) on every request: ?token=T,
                an "Authorization: Bearer T" or "X-Air-Token: T" header; or set AIRCODING_DASHBOARD_TOKEN
  --lang LANG   en or zh-CN (default: "language" in ${AirPaths.CONFIG}; auto → en)
Exit codes: 0 stopped, 1 cannot listen, a host refused without a token, or a usage error.
`

export function dashboardCommand(argv: string[]): Promise<number> {
  return Args.guard(() => dashboard(argv))
}

async function dashboard(argv: string[]): Promise<number> {
  const { values, positionals } = Args.parse("dashboard", argv, {
    port: { type: "string", short: "p" },
    host: { type: "string" },
    token: { type: "string" },
    lang: { type: "string" },
  } as const)
  if (values.help) return Args.print(Help.say(DASHBOARD_HELP))
  const root = Args.projectDir(positionals[0], "dashboard")
  const lang = viewLang(root, values.lang, "dashboard")
  let port = DashboardServer.DEFAULT_PORT
  if (values.port !== undefined) {
    port = Number(values.port)
    if (!/^\d+$/.test(values.port) || port > 65535) throw new UsageError(`--port ${values.port}: expected a port number from 0 to 65535`, "dashboard")
  }
  const host = values.host ?? "127.0.0.1"
  const token = values.token ?? (process.env.AIRCODING_DASHBOARD_TOKEN || undefined)
  const problem = DashboardServer.bindingProblem(host, token)
  if (problem) {
    process.stderr.write(`aircoding dashboard: ${problem}\n`)
    return 1
  }
  let running: DashboardServer.Running
  try {
    running = await DashboardServer.start({ root, lang, host, port, token })
  } catch (err) {
    process.stderr.write(`aircoding dashboard: ${(err as Error).message}\n`)
    return 1
  }
  process.stdout.write(`AirCoding dashboard for ${root}\n  ${running.url}\n(read-only; Ctrl-C to stop)\n`)
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
