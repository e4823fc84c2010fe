import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"
import { findTask } from "./rule-guards"

/**
 * The machine's rule for a build farm host lost during a build (issue 38 item 6). distcc already sent the lost
 * compiles to another host, or ran them locally when none was left, and the gates went on to their verdict (`gates.passed` or `gates.failed` follows on its own), so
 * the run goes on unchanged: no task is blocked or retried for it. The user is told which hosts failed, because a
 * farm that keeps failing makes every build as slow as local cores and only a person can repair the host.
 */
export function farmDegraded(d: Draft, e: EventOf<"farm.degraded">): string | undefined {
  if (d.s.runId === null) return "no run has started; a farm host's failure concerns nothing"
  if (e.taskId !== undefined) {
    const t = findTask(d, e.taskId)
    if (typeof t === "string") return t
  }
  const where = e.taskId ? `${e.taskId}'s build` : "a build"
  d.notify(
    `the build farm lost ${e.hosts.join(", ")} during ${where}: its compiles went to the other hosts or ran here (${e.localFallbacks} locally) and the run goes on (slower until the host answers again; \`aircoding doctor\` checks each host)`,
  )
  return undefined
}
