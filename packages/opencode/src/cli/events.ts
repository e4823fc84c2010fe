import { relative } from "node:path"
import { parseArgs } from "node:util"
import { resolveLang, t, type Lang } from "../read/words"
import { RunData } from "../read/run-data"
import { RunView } from "../read/view"
import { projectDir, usageFail } from "./status"

export const EVENTS_HELP = `aircoding events — the Scheduler's event log, as readable lines

Usage:
  aircoding events [dir] [--follow] [--json] [--lang en|zh-CN]

Prints .air/local/state/events.jsonl of the run in dir (default: .), one line per event:
time (UTC), type, task, and what happened. Read-only.
  -f, --follow  keep printing new events as the Scheduler appends them (Ctrl-C to stop)
  --json        print the raw events as JSON lines instead
  --lang LANG   en or zh-CN (default: "language" in .air/shared/config.json; auto → en)
Exit codes: 0 printed, 1 no event log, 2 usage error.
`

export type EventsOptions = {
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
      else write(RunView.eventLine(entry, opts.lang, (id, run) => RunData.lastGateReport(root, id, run)) + "\n")
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

export async function eventsCommand(argv: string[]): Promise<number> {
  let values: { json?: boolean; follow?: boolean; lang?: string; help?: boolean }
  let positionals: string[]
  try {
    ;({ values, positionals } = parseArgs({
      args: argv,
      options: {
        json: { type: "boolean" },
        follow: { type: "boolean", short: "f" },
        lang: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
    }))
    if (positionals.length > 1) throw new Error(`expected at most one directory, got: ${positionals.join(" ")}`)
  } catch (err) {
    return usageFail((err as Error).message, EVENTS_HELP)
  }
  if (values.help) {
    process.stdout.write(EVENTS_HELP)
    return 0
  }
  let root: string
  let lang: Lang
  try {
    root = projectDir(positionals[0])
    lang = resolveLang(root, values.lang)
  } catch (err) {
    return usageFail((err as Error).message, EVENTS_HELP)
  }
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
