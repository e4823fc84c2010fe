import { z } from "zod"
import { JsonLines } from "./jsonl"
import { AirPaths } from "../../core/air-paths"

/**
 * `.air/local/trace/sent.jsonl`: one line per export of a run's trace, sent or dropped (an unreachable endpoint, a
 * refused protocol, the bounded send ran out). The metrics count the spans dropped from it; the line never holds the
 * endpoint's headers (a token lives there).
 */
export namespace TraceRecord {
  export const Line = z
    .object({
      at: z.string(),
      runId: z.string().min(1),
      traceId: z.string().min(1),
      spans: z.number().int().min(0),
      outcome: z.enum(["sent", "dropped"]),
      /** Why a dropped export was dropped. */
      reason: z.string().optional(),
      /** How long the send took, in milliseconds. */
      ms: z.number().min(0),
    })
    .strict()
  export type Line = z.infer<typeof Line>

  /** `.air/local/trace/`: the exports' record and the engine's spans of each run. */
  export function dir(root: string): string {
    return AirPaths.trace(root)
  }

  export function file(root: string): string {
    return AirPaths.traceRecord(root)
  }

  /**
   * `.air/local/trace/engine/<trace-id>.jsonl`: the engine's spans of a run's trace that the relay kept (one per line,
   * with the engine's resource), so `aircoding traces export` sends them again; by trace id, which a run keeps when
   * it is resumed or archived. They may hold content the export strips (trace/engine-spans.ts): they stay here.
   */
  export function engineFile(root: string, traceId: string): string {
    return AirPaths.trace(root, "engine", `${traceId}.jsonl`)
  }

  export function append(root: string, line: Line): void {
    JsonLines.append(file(root), Line.parse(line), { fsync: false })
  }

  export function read(root: string): Line[] {
    return JsonLines.readValid(file(root), Line)
  }

  export type Counts = { sent: number; dropped: number }

  /** Spans sent and dropped, over every export recorded. */
  export function counts(root: string): Counts {
    const c: Counts = { sent: 0, dropped: 0 }
    for (const line of read(root)) c[line.outcome] += line.spans
    return c
  }
}
