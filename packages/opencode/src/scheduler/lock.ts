import * as fs from "node:fs"
import { hostname } from "node:os"
import { randomUUID } from "node:crypto"

export interface LockInfo {
  pid: number
  host: string
  at: string
  token: string
}

export interface HeldLock {
  readonly path: string
  readonly info: LockInfo
  readonly warnings: string[]
  release(): void
}

export class LockHeldError extends Error {
  readonly tag = "LockHeld"
  constructor(
    readonly path: string,
    readonly holder: LockInfo | null,
  ) {
    super(
      holder
        ? `${path} is held by process ${holder.pid} on ${holder.host} since ${holder.at}; stop that process, or delete the lock file if it is gone`
        : `${path} is held by another process; delete the lock file if no process uses it`,
    )
  }
}

/** A lock file just created but not yet written is given this long before it counts as abandoned. */
const UNWRITTEN_GRACE_MS = 10_000

/**
 * A lock across processes: a file created with O_EXCL that names its holder. A lock whose holder died on
 * this host is taken over, with a warning; a live holder makes us wait, then fail with a clear error.
 */
export async function acquireLock(path: string, options: { timeoutMs?: number; retryMs?: number } = {}): Promise<HeldLock> {
  const timeoutMs = options.timeoutMs ?? 5_000
  const retryMs = options.retryMs ?? 25
  const deadline = Date.now() + timeoutMs
  const warnings: string[] = []
  const info: LockInfo = { pid: process.pid, host: hostname(), at: new Date().toISOString(), token: randomUUID() }
  for (;;) {
    if (tryCreate(path, info)) return held(path, info, warnings)
    const holder = readHolder(path)
    const stale = staleReason(path, holder)
    if (stale) {
      if (takeOver(path, holder)) warnings.push(`took over a stale lock ${path}: ${stale}`)
      continue
    }
    if (Date.now() >= deadline) throw new LockHeldError(path, holder)
    await new Promise((resolve) => setTimeout(resolve, retryMs))
  }
}

function tryCreate(path: string, info: LockInfo): boolean {
  let fd: number
  try {
    fd = fs.openSync(path, "wx", 0o644)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
  try {
    fs.writeFileSync(fd, JSON.stringify(info))
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  return true
}

function readHolder(path: string): LockInfo | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(path, "utf8")) as LockInfo
    return typeof parsed.pid === "number" ? parsed : null
  } catch {
    return null
  }
}

function staleReason(path: string, holder: LockInfo | null): string | null {
  if (!holder) {
    // Empty or torn: its writer died between create and write, or is writing right now.
    try {
      const age = Date.now() - fs.statSync(path).mtimeMs
      return age > UNWRITTEN_GRACE_MS ? `the lock file is empty or damaged and ${Math.round(age / 1000)} s old` : null
    } catch {
      return null // gone meanwhile: the next create will tell
    }
  }
  if (holder.host !== hostname()) return null // cannot see that host's processes; assume it is alive
  if (holder.pid === process.pid) return null // ours, from another Store in this process: a real conflict
  return isAlive(holder.pid) ? null : `process ${holder.pid} that took it at ${holder.at} is gone`
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Moves the stale lock aside atomically, then checks that what moved is the stale one we judged; if another
 * process replaced it meanwhile, puts that one back.
 */
function takeOver(path: string, judged: LockInfo | null): boolean {
  const aside = `${path}.stale-${process.pid}-${Date.now()}`
  try {
    fs.renameSync(path, aside)
  } catch {
    return false
  }
  const moved = readHolder(aside)
  if (judged && moved && moved.token !== judged.token) {
    try {
      fs.linkSync(aside, path)
    } catch {
      // Someone holds a newer lock already; theirs stands, and the one we moved is lost to its owner.
    }
    fs.rmSync(aside, { force: true })
    return false
  }
  fs.rmSync(aside, { force: true })
  return true
}

function held(path: string, info: LockInfo, warnings: string[]): HeldLock {
  let released = false
  return {
    path,
    info,
    warnings,
    release() {
      if (released) return
      released = true
      // Only our own lock is removed, never one a process took over after judging us dead.
      if (readHolder(path)?.token === info.token) fs.rmSync(path, { force: true })
    },
  }
}
