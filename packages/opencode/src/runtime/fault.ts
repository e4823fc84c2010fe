import type { FaultTag } from "../scheduler/event.schema"

/** The most a fault's message carries into the log and the user's question (a stack or a git dump is cut). */
const MAX_MESSAGE = 2_000

/**
 * Names the kind of fault an error of a command is, from its class name or system code, so the question
 * to the user says what went wrong ("lock-timeout", "toolchain", "fs") and not only a message.
 */
export function classifyFault(err: unknown): { tag: FaultTag; message: string } {
  const e = err as { name?: string; _tag?: string; tag?: string; code?: string; message?: string } | null
  const raw = (e && typeof e.message === "string" ? e.message : String(err)) || "unknown error"
  const message = raw.length > MAX_MESSAGE ? `${raw.slice(0, MAX_MESSAGE)}… (${raw.length - MAX_MESSAGE} more characters)` : raw
  const name = `${e?._tag ?? ""} ${e?.name ?? ""} ${e?.tag ?? ""}`
  if (/index\.lock/.test(raw)) return { tag: "index-lock", message }
  if (/ToolchainRulesInvalid/.test(name)) return { tag: "toolchain", message }
  if (/MergeLockTimeout|LockHeld/.test(name)) return { tag: "lock-timeout", message }
  if (/MergeBlockedByLocalChanges|LocalChangesInTheWay/.test(name)) return { tag: "local-changes", message }
  if (/MergeError/.test(name)) return { tag: "merge", message }
  if (/GitCommandError|WorktreeError|NotMerged/.test(name)) return { tag: "git", message }
  if (typeof e?.code === "string" && /^E[A-Z]+$/.test(e.code)) {
    if (["ENOENT", "ENOSPC", "EACCES", "EPERM", "EROFS", "EIO", "EDQUOT", "EMFILE", "ENFILE", "EISDIR", "ENOTDIR", "EEXIST"].includes(e.code)) return { tag: "fs", message: `${e.code}: ${message}` }
    return { tag: "process", message: `${e.code}: ${message}` }
  }
  return { tag: "unexpected", message }
}
