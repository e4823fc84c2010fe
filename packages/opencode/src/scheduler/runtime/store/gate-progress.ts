import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import { ProcessIdentity } from "./process-identity"
import { AirPaths } from "../../core/air-paths"

/**
 * A running gate's progress, for the views: the runtime writes one small file per task while a build or
 * test command runs (`runtime/gates/progress.ts`, throttled, from the output as it arrives) and removes it
 * when the command ends; the views read it here. The parsing of a tool's progress lines is here too, pure,
 * so the writer and its tests share it.
 */
export namespace GateProgress {
  export const File = z.object({
    taskId: z.string(),
    gate: z.string(),
    command: z.string(),
    startedAt: z.string(),
    updatedAt: z.string(),
    /** Steps done and in all (Ninja's `[n/N]`, CTest's `n/N Test #k`); null when the tool says no count. */
    done: z.number().int().nullable(),
    total: z.number().int().nullable(),
    /** make's `[ nn%]` (or done/total). */
    percent: z.number().nullable(),
    /** The last line of output that says what the tool is at, cut to one short line. */
    step: z.string(),
    /**
     * The process that writes the file (and removes it when the command ends): a file whose writer is gone is
     * left over from a kill, not a command running (src/read/run-liveness.ts). Absent in files of older versions.
     */
    writer: ProcessIdentity.Schema.optional(),
  })
  export type File = z.infer<typeof File>

  /**
   * The run's own checks publish their progress as a task's gates do, under these ids (never a task id: task
   * ids start with a letter or a digit): the baseline before the first task, the final check after the last merge.
   */
  export const CHECK_IDS = { baseline: "_baseline", final: "_final" } as const
  export type Check = keyof typeof CHECK_IDS

  export function dir(root: string): string {
    return AirPaths.state(root, "progress")
  }

  export function path(root: string, taskId: string): string {
    return join(dir(root), `${taskId.replace(/[^\w.+-]/g, "_")}.json`)
  }

  export type Parsed = { done: number | null; total: number | null; percent: number | null; step: string }

  const NINJA = /^\[(\d+)\/(\d+)\]\s*(.*)$/
  const MAKE = /^\[\s*(\d{1,3})%\]\s*(.*)$/
  const CTEST = /^\s*(\d+)\/(\d+)\s+Test\s+#(\d+):\s*(\S+)(.*)$/
  const CTEST_START = /^\s*Start\s+(\d+):\s*(\S+)/

  /** The progress the latest lines of a tool's output show (the last line with a count wins), or the last line. */
  export function parse(text: string, previous?: Parsed): Parsed {
    let out: Parsed = previous ? { ...previous } : { done: null, total: null, percent: null, step: "" }
    for (const raw of text.split(/\r?\n|\r/)) {
      const line = raw.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "").trim()
      if (!line) continue
      let m: RegExpExecArray | null
      if ((m = NINJA.exec(line))) {
        const done = Number(m[1])
        const total = Number(m[2])
        out = { done, total, percent: total ? Math.floor((done * 100) / total) : null, step: m[3]! }
      } else if ((m = MAKE.exec(line))) out = { done: null, total: null, percent: Number(m[1]), step: m[2]! }
      else if ((m = CTEST.exec(line))) {
        const done = Number(m[1])
        const total = Number(m[2])
        out = { done, total, percent: total ? Math.floor((done * 100) / total) : null, step: `#${m[3]} ${m[4]}${/Passed/.test(m[5]!) ? " ✓" : /Failed|\*\*\*/.test(m[5]!) ? " ✗" : ""}` }
      } else if ((m = CTEST_START.exec(line))) out = { ...out, step: `#${m[1]} ${m[2]}` }
      else out = { ...out, step: line }
    }
    return { ...out, step: out.step.length > 120 ? out.step.slice(0, 119) + "…" : out.step }
  }

  /** The progress files of the run in root, by task id; unreadable or half-written files are skipped. */
  export function readAll(root: string): Record<string, File> {
    const d = dir(root)
    if (!existsSync(d)) return {}
    const out: Record<string, File> = {}
    for (const name of readdirSync(d)) {
      if (!name.endsWith(".json")) continue
      try {
        const parsed = File.safeParse(JSON.parse(readFileSync(join(d, name), "utf8")))
        if (parsed.success) out[parsed.data.taskId] = parsed.data
      } catch {
        // being replaced: the next read sees it whole
      }
    }
    return out
  }
}
