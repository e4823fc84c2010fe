import { relative } from "node:path"
import { t, type Lang } from "../text/words"
import { RunData } from "../scheduler/runtime/store/run-data"
import { EventText } from "../read/event-text"
import { viewLang } from "./status"
import { Args } from "./args"
import { Help } from "./help"
import { AirPaths } from "../scheduler/core/air-paths"

const EVENTS_HELP = `aircoding events — the Scheduler's event log, as readable lines

Usage:
  aircoding events [dir] [--follow] [--json] [--lang en|zh-CN]

Prints ${AirPaths.EVENTS} of the run in dir (default: .), one line per event:
time (UTC), type, task, and what happened. Read-only.
  -f, --follow  keep printing new events as the Scheduler appends them (Ctrl-C to stop)
  --json        print the raw events as JSON lines instead
  --lang LANG   en or zh-CN (default: "language" in ${AirPaths.CONFIG}; auto → en)
Exit codes: 0 printed, 1 no event log or a usage error.
`

type EventsOptions = {
  follow?: boolean
  json?: boolean
  lang: Lang
  write?: (text: string) => void
  /** Stops following; the promise of followEvents resolves then. */
  signal?: AbortSignal
  pollMs?: number
}

/** Prints the log and, when following, what is appended until the signal aborts. */
export async function followEvents(root: string, opts: EventsOptions): Promise<number> {
  const write = opts.write ?? ((text: string) => process.stdout.write(text))
  const follower = new RunData.Follower(root)
  const file = relative(process.cwd(), follower.file) || follower.file
  let warned = 0
  const flush = (entries: RunData.Entry[]) => {
    for (const entry of entries) {
      if (opts.json) write((entry.raw ?? JSON.stringify(entry.event)) + "\n")
      else write(EventText.eventLine(entry, opts.lang, (id, run) => RunData.lastGateReport(root, id, run)) + "\n")
    }
    for (; warned < follower.warnings.length; warned++) process.stderr.write(t(opts.lang, "warn.prefix", { text: follower.warnings[warned]! }) + "\n")
  }
  const first = follower.poll()
  if (first === "reset") return 1
  if (!opts.follow) {
    if (first.length === 0 && follower.entries.length === 0) {
      process.stderr.write(t(opts.lang, "events.none", { file }) + "\n")
      return 1
    }
    flush(first)
    return 0
  }
  flush(first)
  if (!opts.json) process.stderr.write(t(opts.lang, "events.following", { file }) + "\n")
  let current = follower
  await new Promise<void>((done) => {
    const tick = () => {
      const added = current.poll()
      if (added === "reset") {
        // The log was replaced (a new run in a fresh directory): start again from its first line.
        current = new RunData.Follower(root)
        const again = current.poll()
        if (again !== "reset") flush(again)
        return
      }
      flush(added)
    }
    const timer = setInterval(tick, opts.pollMs ?? 250)
    const stop = () => {
      clearInterval(timer)
      tick()
      done()
    }
    if (opts.signal?.aborted) stop()
    else opts.signal?.addEventListener("abort", stop, { once: true })
  })
  return 0
}

export function eventsCommand(argv: string[]): Promise<number> {
  return Args.guard(() => events(argv))
}

async function events(argv: string[]): Promise<number> {
  const { values, positionals } = Args.parse("events", argv, { json: { type: "boolean" }, follow: { type: "boolean", short: "f" }, lang: { type: "string" } } as const)
  if (values.help) return Args.print(Help.say(EVENTS_HELP))
  const root = Args.projectDir(positionals[0], "events")
  const lang = viewLang(root, values.lang, "events")
  const controller = new AbortController()
  const onSignal = () => controller.abort()
  if (values.follow) {
    process.once("SIGINT", onSignal)
    process.once("SIGTERM", onSignal)
  }
  try {
    return await followEvents(root, { follow: values.follow, json: values.json, lang, signal: controller.signal })
  } finally {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
  }
}
