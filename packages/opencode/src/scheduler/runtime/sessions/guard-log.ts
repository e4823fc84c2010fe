import { z } from "zod"
import { JsonLines } from "../store/jsonl"
import { AirPaths } from "../../core/air-paths"

/**
 * The guard's log, `.air/local/state/guard.jsonl`: the plugin appends every refusal and every piece of
 * evidence the guard allowed a session (plugin.ts, its one writer); the runtime reads a session's evidence back
 * (a Debugger's steps, for the fresh session that replaces it after a context overflow).
 */
export namespace GuardLog {
  export function file(root: string): string {
    return AirPaths.state(root, "guard.jsonl")
  }

  const EvidenceLine = z.object({
    type: z.literal("guard.evidence"),
    sessionID: z.string(),
    evidence: z.object({ kind: z.string(), detail: z.string() }),
  })

  /** The evidence recorded for `sessionID`, oldest first, as "<kind>: <detail>" (lines of any other shape are skipped). */
  export function evidenceOf(root: string, sessionID: string): string[] {
    const steps: string[] = []
    for (const line of JsonLines.read<unknown>(file(root))) {
      const parsed = EvidenceLine.safeParse(line)
      if (parsed.success && parsed.data.sessionID === sessionID) steps.push(`${parsed.data.evidence.kind}: ${parsed.data.evidence.detail}`)
    }
    return steps
  }
}
