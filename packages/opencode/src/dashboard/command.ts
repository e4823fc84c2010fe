import { parseArgs } from "node:util"
import { projectDir, usageFail } from "../cli/status"
import { resolveLang, type Lang } from "../read/words"
import { DashboardServer } from "./server"

export const DASHBOARD_HELP = `aircoding dashboard — watch a run live in the browser

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
  --lang LANG   en or zh-CN (default: "language" in .air/shared/config.json; auto → en)
Exit codes: 0 stopped, 1 cannot listen, 2 usage error or a host refused without a token.
`

export async function dashboardCommand(argv: string[]): Promise<number> {
  let values: { port?: string; host?: string; token?: string; lang?: string; help?: boolean }
  let positionals: string[]
  try {
    ;({ values, positionals } = parseArgs({
      args: argv,
      options: {
        port: { type: "string", short: "p" },
        host: { type: "string" },
        token: { type: "string" },
        lang: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
    }))
    if (positionals.length > 1) throw new Error(`expected at most one directory, got: ${positionals.join(" ")}`)
  } catch (err) {
    return usageFail((err as Error).message, DASHBOARD_HELP)
  }
  if (values.help) {
    process.stdout.write(DASHBOARD_HELP)
    return 0
  }
  let root: string
  let lang: Lang
  let port = DashboardServer.DEFAULT_PORT
  try {
    root = projectDir(positionals[0])
    lang = resolveLang(root, values.lang)
    if (values.port !== undefined) {
      port = Number(values.port)
      if (!/^\d+$/.test(values.port) || port > 65535) throw new Error(`--port ${values.port}: expected a port number from 0 to 65535`)
    }
  } catch (err) {
    return usageFail((err as Error).message, DASHBOARD_HELP)
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
