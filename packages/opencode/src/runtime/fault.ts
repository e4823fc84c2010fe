import { GitCommandError } from "../scheduler/git.ts"
import { MergeQueue } from "../scheduler/merge.ts"
import { Toolchain } from "../scheduler/toolchain.ts"
import { GateError, type GateErrorTag, type MergeErrorTag } from "./errors.ts"
import { LockTimeout } from "./lock.ts"

/**
 * Which kind of fault an error from the gates, the merge queue or git is, for the failure events
 * (`gates.errored`, `merge.blocked`): the words are those of `FAULT_TAGS` in event.schema.ts (branch
 * h/interp). An error none of these knows is `unexpected` — still an event, never only a log line.
 */
export type FaultTag =
  | "toolchain"
  | "git"
  | "index-lock"
  | "local-changes"
  | "lock-timeout"
  | "merge"
  | "fs"
  | "process"
  | "session"
  | "unexpected"

const GATE_FAULTS: Record<GateErrorTag, FaultTag> = {
  ToolchainInvalid: "toolchain",
  GitFailed: "git",
  EvidenceWriteFailed: "fs",
  ToolCrashed: "process",
  Aborted: "process",
}

const MERGE_FAULTS: Record<MergeErrorTag, FaultTag> = {
  LocalChangesInTheWay: "local-changes",
  LockTimeout: "lock-timeout",
  IndexLocked: "index-lock",
  GitFailed: "git",
  Refused: "merge",
}

export function faultOf(error: unknown): { tag: FaultTag; message: string } {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof GateError) return { tag: GATE_FAULTS[error.tag], message }
  if (error instanceof MergeQueue.MergeError) return { tag: MERGE_FAULTS[error.tag], message }
  if (error instanceof LockTimeout) return { tag: "lock-timeout", message }
  if (error instanceof Toolchain.RulesInvalid) return { tag: "toolchain", message }
  if (error instanceof GitCommandError) return { tag: "git", message }
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  if (code === "ENOSPC" || code === "EACCES" || code === "EROFS" || code === "EDQUOT") return { tag: "fs", message }
  return { tag: "unexpected", message }
}
