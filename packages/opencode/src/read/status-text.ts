import type { SchedulerState } from "../scheduler/core/state"
import { RunData } from "../scheduler/runtime/store/run-data"
import { readStatus } from "./status-read"
import { ViewRender } from "./view-render"
import { resolveLang, type Lang } from "../text/words"

/**
 * The full status text of the run in root (sessions from the log, gate results from evidence/, model
 * requests from requests.jsonl): `aircoding status` and the air_status tool print the same. Pass the
 * live state when you hold one (the runtime's Store), so the text is never behind it; otherwise the
 * log is folded.
 */
export function statusText(root: string, lang: Lang = resolveLang(root), state?: SchedulerState, width?: number): string {
  const loaded = RunData.load(root)
  const current = state ?? loaded.state
  if (current.stage === "idle" && loaded.source === "none") return ViewRender.render(current, lang, width)
  return ViewRender.render(readStatus(root, current, loaded.entries, current.finished ? undefined : new Date().toISOString()), lang, width)
}
