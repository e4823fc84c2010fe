import * as fs from "node:fs"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { ProcessIdentity } from "./process-identity"
import { readLockFile, type LockInfo } from "./run-holder"

/**
 * The one lock across processes (the event store, the merge queue): a file created with O_EXCL that names
 * its holder. A lock whose holder died on this host is taken over — moved aside atomically and checked, so
 * two processes judging the same stale lock cannot both win (an unlink-and-create would let them). A live
 * holder makes us wait (backing off), then fail with `LockTimeout` naming it. The holder is named with its
 * process's start time (`ProcessIdentity`), so a pid that another process took since is not taken for it.
 */

/** The lock file's content: its holder (the shape lives with its reader, run-holder.ts, which the views load). */
export type { LockInfo }

export interface HeldLock {
  readonly path: string
  readonly info: LockInfo
  readonly warnings: string[]
  release(): void
}

/** The lock stayed held by a live process past the timeout. */
export class LockTimeout extends Error {
  readonly tag = "LockTimeout"
  constructor(
    readonly path: string,
    readonly holder: LockInfo | null,
    readonly waitedMs: number = 0,
  ) {
    super(
      holder
        ? `${path} is held by process ${holder.pid} on ${holder.host}${holder.what ? ` (${holder.what})` : ""} since ${holder.at}` +
            (waitedMs > 0 ? ` and was not released within ${waitedMs < 1000 ? `${waitedMs} ms` : `${Math.round(waitedMs / 1000)} s`}` : "") +
            `; stop that process, or delete the lock file if it is gone (another machine, a container)`
        : `${path} is held by another process; delete the lock file if no process uses it`,
    )
    this.name = "LockTimeout"
  }
}
/** The old name (the event store's tests and exports use it). */
export const LockHeldError = LockTimeout
export type LockHeldError = LockTimeout

/** A lock file just created but not yet written is given this long before it counts as abandoned. */
const UNWRITTEN_GRACE_MS = 10_000

/** Tokens of the locks this process holds now: a lock with our pid and another token is a dead namesake's. */
const heldTokens = new Set<string>()

interface AcquireOptions {
  timeoutMs?: number
  /** First wait between tries; doubles up to `maxRetryMs`. */
  retryMs?: number
  maxRetryMs?: number
  what?: string
  restart?: string
}

export async function acquireLock(path: string, options: AcquireOptions = {}): Promise<HeldLock> {
  const timeoutMs = options.timeoutMs ?? 5_000
  let delay = options.retryMs ?? 25
  const maxDelay = options.maxRetryMs ?? Math.max(delay, 250)
  const started = Date.now()
  const warnings: string[] = []
  const me = ProcessIdentity.self()
  const info: LockInfo = {
    pid: me.pid,
    host: me.host,
    at: new Date().toISOString(),
    token: randomUUID(),
    ...(me.started !== undefined ? { started: me.started } : {}),
    ...(options.what ? { what: options.what } : {}),
    ...(options.restart ? { restart: options.restart } : {}),
  }
  for (;;) {
    if (tryCreate(path, info)) return held(path, info, warnings)
    const holder = readHolder(path)
    const stale = staleReason(path, holder)
    if (stale) {
      if (takeOver(path, holder)) warnings.push(`took over a stale lock ${path}: ${stale}`)
      continue
    }
    const waited = Date.now() - started
    if (waited >= timeoutMs) throw new LockTimeout(path, holder, waited)
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(1, timeoutMs - waited))))
    delay = Math.min(delay * 2, maxDelay)
  }
}

/** Holds the lock around `work`, released whatever happens. */
export async function withLock<T>(path: string, options: AcquireOptions, work: (lock: HeldLock) => Promise<T>): Promise<T> {
  const lock = await acquireLock(path, options)
  try {
    return await work(lock)
  } finally {
    lock.release()
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
  heldTokens.add(info.token)
  return true
}

/** Who holds the lock at `path` as its file says (null when absent, empty or damaged); the views read it too. */
const readHolder = readLockFile

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
  if (holder.pid === process.pid) {
    // Ours and held now (another Store, another merge of this process): a real conflict. Our pid with a token
    // we never issued is a previous process that had our pid (pids repeat across container restarts).
    return heldTokens.has(holder.token) ? null : `it names this process's pid but was taken by an earlier process (${holder.at})`
  }
  return holderAlive(holder) ? null : `process ${holder.pid} that took it at ${holder.at} is gone`
}

/** Whether the process named by a lock file still runs (that very process: its start time is checked); another host's counts as alive. */
function holderAlive(holder: Pick<LockInfo, "pid" | "host" | "started">): boolean {
  return ProcessIdentity.judge(holder) !== "gone"
}

function isAlive(pid: number): boolean {
  return ProcessIdentity.signalable(pid)
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
      heldTokens.delete(info.token)
      // Only our own lock is removed, never one a process took over after judging us dead.
      if (readHolder(path)?.token === info.token) fs.rmSync(path, { force: true })
    },
  }
}
