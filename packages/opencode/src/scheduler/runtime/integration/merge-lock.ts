import { mkdir } from "node:fs/promises"
import path from "node:path"
import { Serial } from "../store/serial.ts"
import { acquireLock, type HeldLock, LockTimeout as RuntimeLockTimeout } from "../store/lock.ts"
import { LockTimeout } from "./merge-errors.ts"
import { LOCK_PATH } from "./merge-types.ts"

/** One merge at a time: in this process (a serialiser per project root) and across processes (the merge lock file). */

/**
 * One merge at a time per project root in this process, in the order they were asked for. Keyed by the
 * root as given (resolved, not yet canonical: that needs git, and the queue must be joined synchronously
 * to keep the order); two spellings of one root still meet at the lock file.
 */
const serial = new Serial()
export function queued<T>(root: string, work: () => Promise<T>): Promise<T> {
  return serial.run(path.resolve(root), work)
}

/** Holds `<root>/.air/local/state/merge.lock` (the one lock, `scheduler/runtime/lock.ts`) around `work`. */
export async function withLockFile<T>(top: string, taskId: string, what: string, timeoutMs = 120_000, work: () => Promise<T>): Promise<T> {
  const file = path.join(top, LOCK_PATH)
  await mkdir(path.dirname(file), { recursive: true })
  let lock: HeldLock
  try {
    lock = await acquireLock(file, { timeoutMs, what })
  } catch (error) {
    if (error instanceof RuntimeLockTimeout) throw new LockTimeout(taskId, error)
    throw error
  }
  try {
    return await work()
  } finally {
    lock.release()
  }
}
