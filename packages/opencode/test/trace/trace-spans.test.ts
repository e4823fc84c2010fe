import { join } from "node:path"
import { describe, expect, test } from "vitest"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { TraceSpans } from "../../src/scheduler/runtime/trace/spans"

/** The recorded run: three tasks, T-2's first gate run failed its analysis gate, then its debugger's attempt passed. */
const ROOT = join(__dirname, "..", "fixtures", "recorded-run")

function derive() {
  const { entries } = RunData.load(ROOT)
  const trace = TraceSpans.derive(
    entries.map((e) => e.event),
    (taskId, run) => RunData.lastGateReport(ROOT, taskId, run),
  )
  if (!trace) throw new Error("no trace")
  return trace
}

/** The span lies within `outer` and ends after it starts (times of the recorded log, not of this test's clock). */
const inside = (s: TraceSpans.Span, outer: TraceSpans.Span) => s.startMs <= s.endMs && s.startMs >= outer.startMs && s.endMs <= outer.endMs

describe("TraceSpans.derive: a run's log as one trace", () => {
  const trace = derive()
  const byId = new Map(trace.spans.map((s) => [s.spanId, s]))
  const parentOf = (s: TraceSpans.Span) => (s.parentId ? byId.get(s.parentId) : undefined)
  const one = (pred: (s: TraceSpans.Span) => boolean) => {
    const found = trace.spans.filter(pred)
    expect(found).toHaveLength(1)
    return found[0]!
  }

  test("one root, the run, and every other span's parent is a span of the trace", () => {
    const roots = trace.spans.filter((s) => !s.parentId)
    expect(roots.map((s) => s.kind)).toEqual(["run"])
    for (const s of trace.spans) if (s.parentId) expect(byId.has(s.parentId), `${s.name}'s parent`).toBe(true)
    expect(new Set(trace.spans.map((s) => s.spanId)).size).toBe(trace.spans.length)
    expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/)
  })

  test("the ids are the run's: the same log derives the same ids (a re-export sends the same spans)", () => {
    const again = derive()
    expect(again.traceId).toBe(trace.traceId)
    expect(again.spans.map((s) => s.spanId)).toEqual(trace.spans.map((s) => s.spanId))
    expect(TraceSpans.traceId("another-run")).not.toBe(trace.traceId)
  })

  test("tasks hang under their phase, attempts under their task, sessions and gates under their attempt", () => {
    const t2 = one((s) => s.kind === "task" && s.attributes["aircoding.task.id"] === "T-2")
    expect(parentOf(t2)?.kind).toBe("phase")
    expect(parentOf(parentOf(t2)!)?.kind).toBe("run")
    expect(t2.attributes["aircoding.outcome"]).toBe("merged")
    expect(t2.status).toBe("ok")
    const attempts = trace.spans.filter((s) => s.kind === "attempt" && s.parentId === t2.spanId)
    expect(attempts.map((s) => s.attributes["aircoding.attempt"])).toEqual([1, 2])
    // The first attempt failed its analysis gate: ERROR with the gate's reason; the second ends with the task, merged.
    expect(attempts.map((s) => [s.status, s.attributes["aircoding.outcome"]])).toEqual([
      ["error", "gate analysis failed"],
      ["ok", "merged"],
    ])
    expect(attempts[0]!.message).toMatch(/uninitvar/)
    expect(parentOf(t2)!.attributes["aircoding.outcome"]).toBe("done")
    const debuggerSession = one((s) => s.kind === "session" && s.attributes["aircoding.session.id"] === "ses_t2_dbg2")
    expect(debuggerSession.attributes["aircoding.role"]).toBe("debugger")
    expect(debuggerSession.parentId).toBe(attempts[1]!.spanId)
    const merge = one((s) => s.kind === "merge" && s.attributes["aircoding.task.id"] === "T-2")
    expect(merge.parentId).toBe(t2.spanId)
    expect(merge.attributes["aircoding.outcome"]).toBe("merged")
  })

  test("the failed gate run is an ERROR span with the gate and the reason; its failing gate too; the second run is OK", () => {
    const gateRuns = trace.spans.filter((s) => s.kind === "gates" && s.attributes["aircoding.task.id"] === "T-2")
    expect(gateRuns.map((s) => s.status)).toEqual(["error", "ok"])
    const failed = gateRuns[0]!
    expect(failed.attributes["aircoding.gate"]).toBe("analysis")
    expect(failed.attributes["aircoding.outcome"]).toBe("failed")
    expect(failed.message).toMatch(/uninitvar/)
    expect(parentOf(failed)?.attributes["aircoding.attempt"]).toBe(1)
    const gates = trace.spans.filter((s) => s.kind === "gate" && s.parentId === failed.spanId)
    expect(gates.length).toBeGreaterThan(0)
    const analysis = gates.find((s) => s.attributes["aircoding.gate"] === "analysis")
    expect(analysis?.status).toBe("error")
    for (const g of gates) expect(inside(g, failed), g.name).toBe(true)
  })

  test("spans end after they start and inside the run", () => {
    const run = one((s) => s.kind === "run")
    for (const s of trace.spans) {
      expect(inside(s, run), s.name).toBe(true)
      expect(s.attributes["aircoding.run.id"]).toBe("run-20261129-0900")
    }
  })

  test("no span carries what the model was told or wrote: not the requirement, the plan, a task's done-when, nor a report's summary", () => {
    const { entries } = RunData.load(ROOT)
    const prose = new Set<string>()
    for (const { event: e } of entries) {
      if (e.type === "run.started") prose.add(e.requirement)
      if (e.type === "plan.proposed") prose.add(e.summary)
      if (e.type === "graph.accepted") for (const t of e.graph.tasks) prose.add(t.doneWhen)
      if (e.type === "worker.reported") prose.add(e.result.summary)
    }
    // The fixture has each kind: a derivation that copied none of them is not proved by an empty list.
    expect(prose.size).toBeGreaterThanOrEqual(4)
    const values = trace.spans.flatMap((s) => [s.name, ...Object.values(s.attributes).map(String), s.message ?? ""])
    for (const text of prose) expect(values.some((v) => v.includes(text)), text).toBe(false)
  })

  test("a log with no run.started has no trace", () => {
    expect(TraceSpans.derive([])).toBeNull()
  })
})
