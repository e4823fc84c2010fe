import { GitCommandError } from "./git/git.ts"
import { MergeQueue } from "./integration/merge.ts"
import { Toolchain } from "./toolchain/index.ts"
import type { FaultTag } from "../core/event.schema"
import { GateError, type GateErrorTag, type MergeErrorTag } from "./errors.ts"
import { LockTimeout } from "./store/lock.ts"

/** The most a fault's message carries into the log and the user's question (a stack or a git dump is cut). */
const MAX_MESSAGE = 2_000

const GATE_FAULTS: Record<GateErrorTag, FaultTag> = {
  ToolchainInvalid: "toolchain",
  GitFailed: "git",
  EvidenceWriteFailed: "fs",
  ToolCrashed: "process",
  Aborted: "process",
  DiskFull: "disk-full",
}

const MERGE_FAULTS: Record<MergeErrorTag, FaultTag> = {
  LocalChangesInTheWay: "local-changes",
  LockTimeout: "lock-timeout",
  IndexLocked: "index-lock",
  GitFailed: "git",
  Refused: "merge",
}

const FS_CODES = ["ENOENT", "ENOSPC", "EACCES", "EPERM", "EROFS", "EIO", "EDQUOT", "EMFILE", "ENFILE", "EISDIR", "ENOTDIR", "EEXIST"]

/**
 * Which kind of fault an error of a command is, for the failure events (`gates.errored`,
 * `merge.blocked`), so the question to the user says what went wrong ("lock-timeout", "toolchain", "fs")
 * and not only a message. Tagged errors first; then a system error by its code; anything else is
 * `unexpected` — still an event, never only a log line.
 */
export function classifyFault(err: unknown): { tag: FaultTag; message: string } {
  const raw = (err instanceof Error ? err.message : String(err)) || "unknown error"
  const message = raw.length > MAX_MESSAGE ? `${raw.slice(0, MAX_MESSAGE)}… (${raw.length - MAX_MESSAGE} more characters)` : raw
  if (err instanceof GateError) return { tag: GATE_FAULTS[err.tag], message }
  if (err instanceof MergeQueue.MergeError) return { tag: MERGE_FAULTS[err.tag], message }
  if (err instanceof LockTimeout) return { tag: "lock-timeout", message }
  if (err instanceof Toolchain.RulesInvalid) return { tag: "toolchain", message }
  if (/index\.lock/.test(raw)) return { tag: "index-lock", message }
  if (err instanceof GitCommandError) return { tag: "git", message }
  const code = (err as NodeJS.ErrnoException | null)?.code
  if (typeof code === "string" && /^E[A-Z]+$/.test(code))
    return { tag: FS_CODES.includes(code) ? "fs" : "process", message: `${code}: ${message}` }
  return { tag: "unexpected", message }
}
