import { existsSync, statSync } from "node:fs"
import { relative, resolve } from "node:path"
import { parseArgs } from "node:util"
import { resolveLang, t, type Lang } from "../read/words"
import { readStatus } from "../read/status-read"
import { RunData } from "../read/run-data"
import { RunView, renderStatus } from "../read/view"
import { statusText } from "../read/status-text"

export { renderStatus, statusText }

export const STATUS_HELP = `aircoding status — the run's tasks, budgets and what it waits for

Usage:
  aircoding status [dir] [--json] [--lang en|zh-CN]

Reads the run in dir (default: .) from .air/local/state/events.jsonl (or the snapshot when there is
no log) and shows: each task's state, the session working on it, elapsed time, attempts and its
last gate results; the budgets spent and left; and what the run waits for (your answer, your
confirmation, running sessions, the merge queue…). Read-only: it never changes the run.
  --json        print the status as JSON (kind "aircoding.status")
  --lang LANG   en or zh-CN (default: "language" in .air/shared/config.json; auto → en)
Exit codes: 0 shown, 1 no run or unreadable state, 2 usage error.
`

/** Resolves the project directory of a view command; a file or a missing directory is a usage error. */
export function projectDir(arg: string | undefined): string {
  const dir = resolve(arg ?? ".")
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ViewUsageError(`${dir} is not a directory`)
  return dir
}

export class ViewUsageError extends Error {
  override readonly name = "UsageError"
}

export function usageFail(message: string, help: string): number {
  process.stderr.write(`aircoding: ${message}\n\n${help}`)
  return 1
}

export async function statusCommand(argv: string[]): Promise<number> {
  let values: { json?: boolean; lang?: string; help?: boolean }
  let positionals: string[]
  try {
    ;({ values, positionals } = parseArgs({
      args: argv,
      options: { json: { type: "boolean" }, lang: { type: "string" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
    }))
    if (positionals.length > 1) throw new Error(`expected at most one directory, got: ${positionals.join(" ")}`)
  } catch (err) {
    return usageFail((err as Error).message, STATUS_HELP)
  }
  if (values.help) {
    process.stdout.write(STATUS_HELP)
    return 0
  }
  let root: string
  let lang
  try {
    root = projectDir(positionals[0])
    lang = resolveLang(root, values.lang)
  } catch (err) {
    return usageFail((err as Error).message, STATUS_HELP)
  }
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
  if (values.json) process.stdout.write(JSON.stringify(view, null, 2) + "\n")
  else process.stdout.write(RunView.render(view, lang, process.stdout.isTTY ? Math.max(80, process.stdout.columns ?? 80) : 80))
  return 0
}
