import { commandId } from "./command"
import { adrCascade } from "./adr-cascade"
import type { Draft } from "./draft"
import { adrImpact } from "./graph"
import type { EventOf } from "./event.schema"
import { acceptDelta } from "./plan-rules"

/** The machine's rules for ADRs: an accepted ADR is recorded by its hash; an edit waits for the Architect's classification, and a changed decision redoes the tasks that cite it. */

export function adrRecorded(d: Draft, e: EventOf<"adr.recorded">): string | undefined {
  if (d.s.adrs[e.adr] !== undefined) return `${e.adr} is already recorded; a change to its file is adr.edited`
  d.s.adrs = { ...d.s.adrs, [e.adr]: e.hash }
}

export function adrEdited(d: Draft, e: EventOf<"adr.edited">): string | undefined {
  const recorded = d.s.adrs[e.adr]
  if (recorded === undefined) return `${e.adr} was never recorded as accepted; record it with adr.recorded`
  if (recorded === e.hash) return `${e.adr} is unchanged (hash ${e.hash})`
  if (d.s.adrEdits.some((edit) => edit.adr === e.adr)) return `an edit of ${e.adr} is already waiting for the Architect's classification`
  if (!d.s.graph || (d.s.stage !== "running" && d.s.stage !== "milestone")) return `no task graph runs (stage: ${d.s.stage}); an ADR edit matters only to a running plan`
  const id = commandId.classifyAdr(e.adr, d.s.eventCount)
  const tasks = adrImpact(d.graph, e.adr).impacted
  d.s.adrEdits = [...d.s.adrEdits, { adr: e.adr, hash: e.hash, commandId: id }]
  d.emit({ type: "classifyAdr", id, adr: e.adr, hash: e.hash, tasks })
  d.notify(`${e.adr} was edited; the Architect classifies the edit (tasks citing it: ${tasks.join(", ") || "none"}) and they wait`)
}

export function adrClassified(d: Draft, e: EventOf<"adr.classified">): string | undefined {
  const edit = d.s.adrEdits.find((x) => x.adr === e.adr)
  if (!edit) return `no edit of ${e.adr} waits for a classification`
  if (edit.hash !== e.hash) return `the edit of ${e.adr} waiting is ${edit.hash}, not ${e.hash}`
  d.s.adrEdits = d.s.adrEdits.filter((x) => x !== edit)
  d.s.adrs = { ...d.s.adrs, [e.adr]: e.hash }
  if (e.kind === "clarification") {
    d.notify(`${e.adr} edit recorded as a clarification${e.note ? `: ${e.note}` : ""}`)
  } else {
    const { delta, boundary } = adrCascade(d.graph, (id) => d.task(id)?.status, e.adr, d.s.currentPhase)
    if (delta.add.length > 0 || delta.modify.length > 0) {
      const refusal = acceptDelta(d, delta)
      if (refusal) return `the cascade of ${e.adr} could not be applied:\n${refusal}`
    }
    d.notify(
      `${e.adr} changed its decision${e.note ? ` (${e.note})` : ""}: ` +
        `redone ${delta.modify.map((m) => m.id).join(", ") || "none"}; re-verified by ${delta.add.map((t) => t.id).join(", ") || "none"}` +
        (boundary.length > 0 ? `; boundary: ${boundary.join(", ")}` : ""),
    )
  }
  d.schedule()
}
