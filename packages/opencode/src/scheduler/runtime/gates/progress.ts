import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { GateProgress } from "../store/gate-progress.ts"
import { ProcessIdentity } from "../store/process-identity.ts"

/**
 * Publishes a running build or test command's progress for the views: its output, as it arrives through
 * the process runner's capture, is parsed (Ninja's `[n/N]`, make's `[ nn%]`, CTest's `n/N Test #k`) and
 * written to one small file per task, at most once per `everyMs` — never an event per line. The file is
 * removed when the command ends; it is a view of a moment, not evidence (the log and evidence/ are).
 */
export class ProgressWriter {
  private parsed: GateProgress.Parsed = { done: null, total: null, percent: null, step: "" }
  private pending = ""
  private lastWrite = 0
  private timer: NodeJS.Timeout | undefined
  private readonly file: string
  private readonly startedAt = new Date().toISOString()

  constructor(
    root: string,
    private readonly taskId: string,
    private readonly gate: string,
    private readonly command: string,
    private readonly everyMs = 1000,
  ) {
    this.file = GateProgress.path(root, taskId)
    this.write()
  }

  /** Output as it arrives: parsed now (lines cut across chunks are kept until complete), written throttled. */
  readonly onOutput = (chunk: Buffer): void => {
    const text = this.pending + chunk.toString("utf8")
    const cut = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"))
    if (cut < 0) {
      this.pending = text.slice(-4096)
      return
    }
    this.pending = text.slice(cut + 1)
    this.parsed = GateProgress.parse(text.slice(0, cut), this.parsed)
    const wait = this.everyMs - (Date.now() - this.lastWrite)
    if (wait <= 0) this.write()
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined
        this.write()
      }, wait)
      this.timer.unref?.()
    }
  }

  private write(): void {
    this.lastWrite = Date.now()
    const data: GateProgress.File = {
      taskId: this.taskId,
      gate: this.gate,
      command: this.command,
      startedAt: this.startedAt,
      updatedAt: new Date().toISOString(),
      ...this.parsed,
      writer: ProcessIdentity.self(),
    }
    try {
      mkdirSync(dirname(this.file), { recursive: true })
      const tmp = `${this.file}.${process.pid}.tmp`
      writeFileSync(tmp, JSON.stringify(data))
      renameSync(tmp, this.file)
    } catch {
      // A view of a moment: a failed write only leaves the views a second behind.
    }
  }

  /** The command ended: no more writes, and the file goes (the gate's result is in the evidence and the log). */
  end(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    try {
      rmSync(this.file, { force: true })
    } catch {}
  }
}

/**
 * Removes progress files left by a process that is gone (a kill, a quit mid-build): nobody else ever would,
 * and the views would read them as a command still running. Safe only for a file whose writer is recorded and
 * judged gone on this host; `unnamed` also removes files that name no writer (an older version's), which only
 * the process holding the run's store may judge (no other process of this run can be writing them).
 * Returns the files removed.
 */
export function sweepStaleProgress(root: string, opts: { unnamed?: boolean } = {}): string[] {
  const dir = GateProgress.dir(root)
  if (!existsSync(dir)) return []
  const removed: string[] = []
  for (const name of readdirSync(dir)) {
    const file = join(dir, name)
    let writer: ProcessIdentity.Data | undefined
    if (name.endsWith(".tmp")) {
      // A temp of a write cut short: its writer's pid is in its name.
      const pid = Number(/\.(\d+)\.tmp$/.exec(name)?.[1])
      if (!Number.isInteger(pid) || ProcessIdentity.signalable(pid)) continue
    } else if (name.endsWith(".json")) {
      try {
        const parsed = GateProgress.File.safeParse(JSON.parse(readFileSync(file, "utf8")))
        if (!parsed.success) continue
        writer = parsed.data.writer
      } catch {
        continue // being replaced: its writer is at work
      }
      if (writer ? ProcessIdentity.judge(writer) !== "gone" : !opts.unnamed) continue
    } else continue
    try {
      rmSync(file, { force: true })
      removed.push(file)
    } catch {}
  }
  return removed
}
