/**
 * Errors the interpreter must tell apart, as classes with a `tag`: each becomes its own event
 * (`gates.errored`, `merge.blocked`, …) instead of a log line. `cause` keeps the original error.
 */

export const GATE_ERROR_TAGS = ["ToolchainInvalid", "GitFailed", "EvidenceWriteFailed", "ToolCrashed", "Aborted", "DiskFull"] as const
export type GateErrorTag = (typeof GATE_ERROR_TAGS)[number]

/** The gates could not reach a verdict: nothing about the task's work is known, nothing was passed. */
export class GateError extends Error {
  readonly _tag = "GateError"
  constructor(
    readonly tag: GateErrorTag,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = `GateError(${tag})`
  }
}

/** `Refused`: a reason a person must fix that is none of the others (the message says which). */
export const MERGE_ERROR_TAGS = ["LocalChangesInTheWay", "LockTimeout", "IndexLocked", "GitFailed", "Refused"] as const
export type MergeErrorTag = (typeof MERGE_ERROR_TAGS)[number]
