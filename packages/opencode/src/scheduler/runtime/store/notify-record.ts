import { z } from "zod"
import { JsonLines } from "./jsonl"
import { AirPaths } from "../../core/air-paths"

/**
 * `.air/local/notify/sent.jsonl`: one line per notification the notifier finished with, sent or dropped. The
 * notifier reads it when it starts, so a resumed run never sends the same notification twice; the metrics read
 * it for the sent and dropped counters. It names the channel by its kind and position, never by its URL.
 */
export namespace NotifyRecord {
  export const Line = z
    .object({
      at: z.string(),
      /** What was notified, the same on every replay of the log: the dedup key. */
      key: z.string().min(1),
      /** The channel: `<index>:<kind>` in the config's list. */
      channel: z.string().min(1),
      outcome: z.enum(["sent", "dropped"]),
      attempts: z.number().int().min(0),
      /** Why a dropped one was dropped, with any secret of its URL removed. */
      reason: z.string().optional(),
    })
    .strict()
  export type Line = z.infer<typeof Line>

  export function file(root: string): string {
    return AirPaths.notifyRecord(root)
  }

  /** Every valid line, in order (a torn or foreign line is skipped: the worst case is one notification sent again). */
  export function read(root: string): Line[] {
    return JsonLines.readValid(file(root), Line)
  }

  export type Counts = { sent: number; dropped: number }

  export function counts(root: string): Counts {
    const c: Counts = { sent: 0, dropped: 0 }
    for (const line of read(root)) c[line.outcome]++
    return c
  }
}
