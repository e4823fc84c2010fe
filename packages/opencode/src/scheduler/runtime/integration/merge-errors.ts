import type { MergeErrorTag } from "../errors.ts"
import { LockTimeout as RuntimeLockTimeout } from "../store/lock.ts"

/** Why a merge could not start or finish, tagged for the interpreter (`fault.ts`); nothing moved on the integration branch. */

/**
 * The merge cannot start or finish; `tag` tells the interpreter which event it is: `LocalChangesInTheWay`,
 * `LockTimeout`, `IndexLocked`, `GitFailed`, or `Refused` (a reason a person must fix; the message says which).
 * Nothing moved on the integration branch.
 */
export class MergeError extends Error {
  readonly _tag = "MergeError"
  constructor(
    readonly taskId: string,
    message: string,
    readonly tag: MergeErrorTag = "Refused",
    cause?: unknown,
  ) {
    super(`task ${taskId}: ${message}`, cause === undefined ? undefined : { cause })
    this.name = "MergeError"
  }
}

/** The merge would overwrite uncommitted changes in the user's checkout. Nothing moved. */
export class LocalChangesInTheWay extends MergeError {
  constructor(
    taskId: string,
    readonly checkout: string,
    readonly files: string[],
  ) {
    super(
      taskId,
      `not merged: it changes ${files.join(", ")}, which ${files.length === 1 ? "has" : "have"} ` +
        `uncommitted changes in ${checkout}. Commit or stash them there, then merge again; the task branch is ` +
        `unchanged and waiting.`,
      "LocalChangesInTheWay",
    )
    this.name = "LocalChangesInTheWay"
  }
}

/** Another process holds the merge lock past the timeout. */
export class LockTimeout extends MergeError {
  readonly lockPath: string
  constructor(taskId: string, cause: RuntimeLockTimeout) {
    super(taskId, `not merged: the merge lock ${cause.message}. The task waits; merge again when it is free.`, "LockTimeout", cause)
    this.lockPath = cause.path
    this.name = "MergeLockTimeout"
  }
}

/** A checkout's index is locked (`index.lock`): another git is running there, or one crashed. */
export class IndexLocked extends MergeError {
  constructor(
    taskId: string,
    readonly lockFile: string,
    cause?: unknown,
  ) {
    super(
      taskId,
      `not merged: ${lockFile} exists: another git process is running in that checkout, or one crashed there. ` +
        `If no git is running, delete ${lockFile}, then merge again. Nothing moved.`,
      "IndexLocked",
      cause,
    )
    this.name = "IndexLocked"
  }
}
