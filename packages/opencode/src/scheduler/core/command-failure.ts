import type { Command } from "./command"
import { failureEvent, type OutcomeEvent } from "./session-outcome"

/**
 * A command the runtime could not carry out (it threw where no code expected it) becomes the event its own
 * failure would have been, so the machine decides as for any failure — a fresh session, a blocked task with
 * a question — and nothing waits on a command that is gone. A session that never started is the session
 * table's "spawn-failed" (session-outcome.ts). `undefined`: nothing waits on the command (a message, a
 * question already asked, an abort). A command type added without its row does not compile.
 */
export function commandFailure(cmd: Command, message: string): OutcomeEvent | undefined {
  const failure = { message }
  switch (cmd.type) {
    case "dispatch":
      return failureEvent(cmd.role, { taskId: cmd.taskId, sessionId: "", attempt: cmd.attempt }, "spawn-failed", failure)
    case "review":
      return failureEvent("reviewer", { taskId: cmd.taskId, sessionId: "", run: cmd.run }, "spawn-failed", failure)
    case "plan":
      return failureEvent("architect", {}, "spawn-failed", failure)
    case "replan":
      return failureEvent("change", {}, "spawn-failed", failure)
    case "reviewMilestone":
      return failureEvent("milestone", { phase: cmd.phase }, "spawn-failed", failure)
    case "consult":
      return failureEvent("consult", { taskId: cmd.taskId, agent: cmd.agent }, "spawn-failed", failure)
    case "classifyAdr":
      return failureEvent("adr", { adr: cmd.adr, hash: cmd.hash }, "spawn-failed", failure)
    case "runGates":
      return { type: "gates.errored", taskId: cmd.taskId, tag: "unexpected", message }
    case "merge":
      return { type: "merge.blocked", taskId: cmd.tasks[0]!.taskId, tag: "unexpected", message }
    case "revert":
      // Not undone: the same as a revert that met a conflict, which the user is asked about.
      return { type: "revert.done", taskId: cmd.taskId, round: cmd.round, status: "conflicted" }
    case "finish":
      return { type: "finalCheck.done", status: "errored", message }
    case "runBaseline":
      return { type: "baseline.done", commit: cmd.commit ?? "unknown", status: "errored", failingTests: [], message }
    case "deploy":
      return { type: "deploy.failed", target: cmd.target, n: cmd.n, commit: null, cause: "errored", message, evidencePath: "", rolledBack: false, hashMatch: null, service: null, smoke: "not-run" }
    case "abort":
    case "notify":
    case "ask":
      return undefined
  }
}

