import { existsSync, realpathSync, statSync } from "node:fs"
import { join, relative, sep } from "node:path"
import { z } from "zod"
import { ServiceProbeReport } from "./service-probe-spec"
import { RunData } from "../store/run-data"

/**
 * What a ui or service task's gate run left to look at (issue 37 item 4): the window capture (after and before
 * pictures, the window tree, the changed share) and the service probe (pcap, summary, the probe's output), read
 * from `evidence/<task>/attempt-<n>/`. The Reviewer's and the final review's prompts, `aircoding status` and the
 * dashboard read it here, so they name the same files. Nothing here writes; a file not on disk is not named.
 */
export namespace ProgramEvidence {
  /** Every file a view may name, in the order it names them; `image` ones the dashboard may serve as pictures. */
  export const FILES = {
    screenshot: { at: ["capture", "screenshot.png"], image: true },
    before: { at: ["capture", "before", "screenshot.png"], image: true },
    screen: { at: ["capture", "screen.png"], image: true },
    windows: { at: ["capture", "windows.json"], image: false },
    programLog: { at: ["capture", "program.log"], image: false },
    compare: { at: ["capture", "compare.json"], image: false },
    pcap: { at: ["probe", "capture.pcap"], image: false },
    summary: { at: ["probe", "summary.txt"], image: false },
    probeLog: { at: ["probe", "probe.log"], image: false },
    serviceLog: { at: ["probe", "service.log"], image: false },
  } as const
  export type FileKind = keyof typeof FILES
  const UI_FILES: readonly FileKind[] = ["screenshot", "before", "screen", "windows", "programLog", "compare"]
  const SERVICE_FILES: readonly FileKind[] = ["pcap", "summary", "probeLog", "serviceLog"]

  /** `path` absolute; `rel` from the attempt's directory (`capture/screenshot.png`), as the dashboard's route takes it. */
  export type File = { kind: FileKind; path: string; rel: string }
  export type Window = { title: string | null; width: number; height: number; x: number; y: number }

  export type Ui = {
    files: File[]
    /** The mapped top-level windows, from windows.json. */
    windows: Window[]
    /** Share of the pixels that changed from the base's picture (0–1); null without both pictures. */
    changedShare: number | null
    /** The commit the before picture is of. */
    base: string | null
    /** Why there is no before picture. */
    note: string | null
  }
  export type Service = {
    files: File[]
    verdict: { ok: boolean; reason: string } | null
    /** summary.txt as lines (connections, bytes each way, first lines of each payload), at most SUMMARY_LINES. */
    summary: string[]
    /** probe.log: the probe's command, stdin, exit and output, at most PROBE_LOG_CHARS. */
    probeLog: string | null
  }
  export type Evidence = { taskId: string; attempt: number; dir: string; ui: Ui | null; service: Service | null }

  export const SUMMARY_LINES = 40
  export const PROBE_LOG_CHARS = 2000

  // Read at a boundary (files another process wrote): loose, so a later field does not hide the ones we read.
  const Compare = z.looseObject({ base: z.string().optional(), changedShare: z.number().min(0).max(1).optional(), note: z.string().optional() })
  const WindowsFile = z.looseObject({
    windows: z.array(z.looseObject({ title: z.string().nullable(), width: z.number(), height: z.number(), x: z.number(), y: z.number(), mapped: z.boolean().optional() })),
  })

  /** The attempt directory of a task's gate run `attempt`. */
  export function attemptDir(root: string, taskId: string, attempt: number): string {
    return join(RunData.evidenceRoot(root), taskId, `attempt-${attempt}`)
  }

  /** The program evidence of a task's gate run; null when that run left neither a capture nor a probe. */
  export function read(root: string, taskId: string, attempt: number): Evidence | null {
    if (!RunData.safeId(taskId) || !Number.isInteger(attempt) || attempt < 1) return null
    const dir = attemptDir(root, taskId, attempt)
    const ui = readUi(dir)
    const service = readService(dir)
    return ui || service ? { taskId, attempt, dir, ui, service } : null
  }

  /** Every file of the evidence, the capture's first. */
  export function files(e: Evidence): File[] {
    return [...(e.ui?.files ?? []), ...(e.service?.files ?? [])]
  }

  /**
   * The absolute path of `rel` in a task's attempt directory when it is one of the files above and on disk;
   * undefined for anything else (another name, `..`, a path outside the evidence), so a caller serves only these.
   */
  export function resolveFile(root: string, taskId: string, attempt: number, rel: string): { path: string; kind: FileKind } | undefined {
    if (!RunData.safeId(taskId) || !Number.isInteger(attempt) || attempt < 1) return undefined
    const kind = (Object.keys(FILES) as FileKind[]).find((k) => FILES[k].at.join("/") === rel)
    if (!kind) return undefined
    const path = join(attemptDir(root, taskId, attempt), ...FILES[kind].at)
    if (!existsSync(path) || !statSync(path).isFile()) return undefined
    // A link planted in the evidence (by a program the capture ran, say) never leads a reader out of it.
    const evidence = realpathSync(RunData.evidenceRoot(root))
    return realpathSync(path).startsWith(evidence + sep) ? { path, kind } : undefined
  }

  function present(dir: string, kinds: readonly FileKind[]): File[] {
    return kinds.flatMap((kind) => {
      const path = join(dir, ...FILES[kind].at)
      return existsSync(path) ? [{ kind, path, rel: relative(dir, path) }] : []
    })
  }

  function readUi(dir: string): Ui | null {
    const files = present(dir, UI_FILES)
    if (files.length === 0) return null
    const compare = Compare.safeParse(readJson(join(dir, "capture", "compare.json")))
    const windows = WindowsFile.safeParse(readJson(join(dir, "capture", "windows.json")))
    return {
      files,
      windows: windows.success ? windows.data.windows.filter((w) => w.mapped !== false).map((w) => ({ title: w.title, width: w.width, height: w.height, x: w.x, y: w.y })) : [],
      changedShare: compare.success ? (compare.data.changedShare ?? null) : null,
      base: compare.success ? (compare.data.base ?? null) : null,
      note: compare.success ? (compare.data.note ?? null) : null,
    }
  }

  function readService(dir: string): Service | null {
    const files = present(dir, SERVICE_FILES)
    if (files.length === 0) return null
    const report = ServiceProbeReport.safeParse(readJson(join(dir, "probe", "summary.json")))
    const summary = RunData.readHead(join(dir, "probe", "summary.txt"), 64 * 1024)
    const lines = summary === null ? [] : summary.trimEnd().split("\n")
    const probeLog = RunData.readHead(join(dir, "probe", "probe.log"), PROBE_LOG_CHARS)
    return {
      files,
      verdict: report.success ? { ok: report.data.verdict.ok, reason: report.data.verdict.reason } : null,
      summary: lines.length > SUMMARY_LINES ? [...lines.slice(0, SUMMARY_LINES), `… (${lines.length - SUMMARY_LINES} more lines in probe/summary.txt)`] : lines,
      probeLog,
    }
  }

  function readJson(file: string): unknown {
    const text = RunData.readHead(file, 4 * 1024 * 1024)
    if (text === null) return undefined
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  }
}
