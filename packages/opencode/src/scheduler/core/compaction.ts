import { CompactionCheck } from "./compaction-check"
import type { Draft } from "./draft"
import type { EventOf } from "./event.schema"

/**
 * What the run does when a conversation of Main or the Architect was compacted (issue 38, item 4). The state
 * does not change: the conversation goes on in the same session. A summary whose losses the record had to
 * fill in is the user's news: what the model now reads of its past was written back by code, not by it.
 */
export function contextCompacted(d: Draft, e: EventOf<"context.compacted">): string | undefined {
  if (d.s.runId === null) return "no run has started; a compaction concerns nothing"
  if (e.outcome === "repaired") {
    const who = e.role === "main" ? "Main's" : "the Architect's"
    const lost = CompactionCheck.CLASSES.filter((c) => (e.counts[c]?.lost ?? 0) > 0)
    d.notify(
      `${who} conversation was compacted; its summary left out ${e.appended.length} item(s) the conversation depends on (${lost.join(", ") || "none"}) twice, so they were appended from the record: ${e.appended.slice(0, 8).join(", ")}${e.appended.length > 8 ? ", …" : ""}`,
    )
  }
  return undefined
}
