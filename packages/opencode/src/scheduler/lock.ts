/** Moved to `src/runtime/lock.ts` (the one lock: store and merge queue); this path re-exports it until the layout move. */
export { acquireLock, isAlive, LockHeldError, LockTimeout, withLock, type AcquireOptions, type HeldLock, type LockInfo } from "../runtime/lock.ts"
