import { relative } from "node:path"
import { Args } from "./args"
import { Help } from "./help"
import { UsageError } from "./ui"
import { resolveLang, t, type Lang } from "../text/words"
import { readStatus } from "../read/status-read"
import { RunData } from "../scheduler/runtime/store/run-data"
import { renderStatus, ViewRender } from "../read/view-render"
import { statusText } from "../read/status-text"
import { sweepStaleProgress } from "../scheduler/runtime/gates/progress"
import { AirPaths } from "../scheduler/core/air-paths"

export { renderStatus, statusText }

const STATUS_HELP = `aircoding status — the run's tasks, budgets and what it waits for

Usage:
  aircoding status [dir] [--json] [--lang en|zh-CN]

Reads the run in dir (default: .) from ${AirPaths.EVENTS} (or the snapshot when there is
no log) and shows: each task's state, the session working on it, elapsed time, attempts and its
last gate results; the budgets spent and left; and what the run waits for (your answer, your
confirmation, running sessions, the merge queue…). A run whose process is gone (killed, or the TUI
quit) is "interrupted", with the command that resumes it. Read-only: it never changes the run (it only
removes progress files a process that is gone left behind).
  --json        print the status as JSON (kind "aircoding.status"; an interrupted run has "status":
                "interrupted" and "resume": the command that resumes it)
  --lang LANG   en or zh-CN (default: "language" in ${AirPaths.CONFIG}; auto → en)
Exit codes: 0 shown, 1 no run, unreadable state or a usage error.
`

/** A view's --lang: an unknown language is a usage error of `command`. */
export function viewLang(root: string, lang: string | undefined, command: string): Lang {
  try {
    return resolveLang(root, lang)
  } catch (err) {
    throw new UsageError((err as Error).message, command)
  }
}

export function statusCommand(argv: string[]): Promise<number> {
  return Args.guard(() => status(argv))
}

async function status(argv: string[]): Promise<number> {
  const { values, positionals } = Args.parse("status", argv, { json: { type: "boolean" }, lang: { type: "string" } } as const)
  if (values.help) return Args.print(Help.say(STATUS_HELP))
  const root = Args.projectDir(positionals[0], "status")
  const lang = viewLang(root, values.lang, "status")
  const loaded = RunData.load(root)
  for (const w of loaded.warnings) process.stderr.write(t(lang, "warn.prefix", { text: w }) + "\n")
  if (loaded.source === "none") {
    const file = relative(root, RunData.eventsFile(root)) || RunData.eventsFile(root)
    if (values.json) process.stdout.write(JSON.stringify({ kind: "aircoding.status", version: 1, status: "none", root }, null, 2) + "\n")
    else process.stdout.write(t(lang, "run.none", { dir: root, file }) + "\n")
    return 1
  }
  const now = loaded.state.finished ? undefined : new Date().toISOString()
  const view = readStatus(root, loaded.state, loaded.entries, now)
  // Whoever finds a dead process's progress files removes them (only those naming their writer: it is judged gone).
  sweepStaleProgress(root)
  if (values.json) process.stdout.write(JSON.stringify(view, null, 2) + "\n")
  else process.stdout.write(ViewRender.render(view, lang, process.stdout.isTTY ? Math.max(80, process.stdout.columns ?? 80) : 80))
  return 0
}
