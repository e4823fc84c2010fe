import { existsSync, statSync } from "node:fs"
import { RunData } from "../scheduler/runtime/store/run-data"
import { EventText } from "../read/event-text"
import { TerminalText } from "../text/terminal-text"
import { resolveLang, t, type Lang } from "../text/words"
import { Ui } from "./ui"

/** Steps too small for a progress line: the next event says how they ended. */
const QUIET = new Set(["gates.started", "review.started", "merge.started"])

/**
 * Shows a headless run's progress on stderr by following the Scheduler's event log, so a long run
 * is never silent. The lines are the events view's words, in the configured language. Read-only:
 * the engine process owns the log.
 */
export function followProgress(
  root: string,
  write: (line: string) => void = (l) => process.stderr.write(l + "\n"),
  lang: Lang = resolveLang(root),
): () => void {
  const file = RunData.eventsFile(root)
  // Only what is appended from now on: the lines already there are the run's past.
  let tail = RunData.eventTail(root, existsSync(file) ? statSync(file).size : 0)
  const tick = () => {
    let lines = tail.read()
    if (lines === "reset") {
      tail = RunData.eventTail(root)
      lines = tail.read()
      if (lines === "reset") return
    }
    for (const { text: line, lineNo } of lines) {
      const text = progressLine(root, line, lineNo, lang)
      if (text) write(Ui.dim(`· ${TerminalText.truncate(text, 160)}`))
    }
  }
  const timer = setInterval(tick, 400)
  return () => {
    clearInterval(timer)
    tick()
  }
}

/** One line of the log as a progress line ("T-2: cppcheck 门禁失败：…"); undefined for quiet steps and bad lines. */
export function progressLine(root: string, line: string, lineNo: number, lang: Lang): string | undefined {
  const event = RunData.parseLine(line, lineNo, RunData.eventsFile(root))
  if (typeof event === "string" || QUIET.has(event.type)) return undefined
  const text = EventText.describeEvent(event, lang, (id, run) => RunData.lastGateReport(root, id, run))
  const task = EventText.taskOf(event)
  return task ? t(lang, "progress.line", { task, text }) : text
}
