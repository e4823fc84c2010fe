import { readFileSync } from "node:fs"
import { z } from "zod"
import { ProcessIdentity } from "../store/process-identity.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * `.air/local/state/jobs.json`: the run's job budget as the views see it (size, jobs in use, commands waiting,
 * the peaks) and the gate timeout the run chose from its measured baseline. Written by the runtime on every
 * change; read by `aircoding status` and the dashboard.
 */
export namespace JobsFile {
  export const Schema = z
    .object({
      size: z.number().int().positive(),
      inUse: z.number().int().nonnegative(),
      waiting: z.number().int().nonnegative(),
      peakInUse: z.number().int().nonnegative(),
      peakLoad: z.number().nonnegative(),
      holders: z.array(z.object({ label: z.string(), jobs: z.number().int().positive(), since: z.string() }).strict()),
      /** The per-command timeout of build and test commands, and the baseline duration it was scaled from. */
      timeout: z.object({ ms: z.number().int().positive(), baselineMs: z.number().int().nonnegative().optional(), rule: z.string() }).strict().optional(),
      at: z.string(),
      /** The run's process, whose budget this is: once it is gone, its holders hold nothing (src/read/run-liveness.ts). */
      writer: ProcessIdentity.Schema.optional(),
    })
    .strict()
  export type Data = z.infer<typeof Schema>

  export function path(root: string): string {
    return AirPaths.state(root, "jobs.json")
  }

  /** The file, or undefined when absent or unreadable (a view shows nothing rather than failing). */
  export function read(root: string): Data | undefined {
    try {
      const parsed = Schema.safeParse(JSON.parse(readFileSync(path(root), "utf8")))
      return parsed.success ? parsed.data : undefined
    } catch {
      return undefined
    }
  }
}
