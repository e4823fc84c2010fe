/**
 * Where a failed gate sends its task. The gate declares its route (the runtime's registry), the runtime
 * writes it in `gates.failed`, and the machine decides by the route alone: the core knows no gate ids, so a
 * new gate needs no change here.
 */
export const FAILURE_ROUTES = [
  /** The code is wrong (a test, an analyser): the Debugger repairs it, or the scheduler agent is consulted when the repair budget is spent. */
  "debugger",
  /**
   * A build failure: the Debugger's like `debugger`, unless the integration branch's build already failed
   * before any task (the baseline) and the user went on: then it is not the task's fault, and the task blocks.
   */
  "debugger-unless-baseline-build-failed",
  /** The work was not handed in right (no commit, no diff, outside its write-set, a secret, missing evidence): back to the Executor. */
  "executor",
  /** Only a person can decide: the task blocks with the gate's message, and the answer runs the gates again. */
  "user",
  /** A tool the gates need is not installed: the task blocks until a person installs it, then runs the gates again. */
  "block-for-tool",
] as const
export type FailureRoute = (typeof FAILURE_ROUTES)[number]

/**
 * ONLY for reading old logs: `gates.failed` events written before they carried their route (when the event
 * schema listed the gate ids) get the route the machine's per-gate switch gave each id then. Never extend it:
 * every event written now carries its route, and a gate added since has none here.
 */
const ROUTES_OF_LOGS_WITHOUT_ROUTE: Readonly<Record<string, FailureRoute>> = {
  build: "debugger-unless-baseline-build-failed",
  test: "debugger",
  analysis: "debugger",
  "clang-tidy": "debugger",
  commit: "executor",
  diff: "executor",
  "write-set": "executor",
  secrets: "executor",
  evidence: "executor",
  "tool-missing": "block-for-tool",
}

/** The route of an event from an old log, by its gate id; undefined for an id that list never had. */
export function routeOfOldLogEvent(gate: string): FailureRoute | undefined {
  return Object.hasOwn(ROUTES_OF_LOGS_WITHOUT_ROUTE, gate) ? ROUTES_OF_LOGS_WITHOUT_ROUTE[gate] : undefined
}
