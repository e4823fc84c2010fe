import { inheritedBuildFailure } from "./baseline"
import type { Draft } from "./draft"
import { routeOfOldLogEvent } from "./gate-route"
import type { EventOf } from "./event.schema"
import { missingEvidence, requiredEvidence } from "./required-evidence"
import { findTask } from "./rule-guards"

/** The machine's rules for a task's gates: started, passed (with the evidence its task kind requires), failed (sent where the gate's route says) or unable to run. */

export function gatesStarted(d: Draft, e: EventOf<"gates.started">): string | undefined {
  const t = findTask(d, e.taskId, ["gating"])
  if (typeof t === "string") return t
  if (t.gatesStarted) return `the gates of task ${t.id} already started`
  d.patch(t.id, { gatesStarted: true })
}

export function gatesPassed(d: Draft, e: EventOf<"gates.passed">): string | undefined {
  const t = findTask(d, e.taskId, ["gating"])
  if (typeof t === "string") return t
  const node = d.node(t.id)
  const missing = missingEvidence(requiredEvidence(e.requires, node.kind), e)
  if (missing.length > 0)
    return `task ${t.id} (${node.kind}) cannot pass its gates without evidence for: ${missing.join(", ")}; run those gates, or report gates.failed with gate "evidence"`
  d.patch(t.id, { evidence: e.evidence, lastFailure: null })
  d.review(t.id, "gates passed")
  d.schedule()
}

export function gatesFailed(d: Draft, e: EventOf<"gates.failed">): string | undefined {
  const t = findTask(d, e.taskId, ["gating"])
  if (typeof t === "string") return t
  const route = e.route ?? routeOfOldLogEvent(e.gate)
  if (!route) return `the ${e.gate} gate's failure names no route (debugger, executor, user, …): the runtime writes the route its gate declares`
  const failure = { source: e.gate, message: e.message, evidencePath: e.evidencePath }
  const reason = `${e.gate} gate failed: ${e.message} (evidence: ${e.evidencePath})`
  switch (route) {
    case "debugger-unless-baseline-build-failed":
      // The baseline's build failed too and the user went on: not the task's fault, so no Debugger.
      if (inheritedBuildFailure(d.s)) {
        d.patch(t.id, { lastFailure: failure })
        d.block(t.id, `its build fails, as the integration branch's build did before any task (the baseline): ${e.message}`, "gates")
        break
      }
      d.repairOrConsult(t.id, "debugger", reason, failure, ["debug-again", "executor-again", "block"])
      break
    case "debugger":
      d.repairOrConsult(t.id, "debugger", reason, failure, ["debug-again", "executor-again", "block"])
      break
    case "executor":
      d.repairOrConsult(t.id, "executor", reason, failure, ["executor-again", "block"])
      break
    case "user":
      d.patch(t.id, { lastFailure: failure })
      d.block(t.id, `its ${e.gate} gate failed, and only a person can decide: ${e.message}`, "gates")
      break
    case "block-for-tool":
      d.patch(t.id, { lastFailure: failure })
      d.block(t.id, `a tool the gates need is missing: ${e.message}`, "gates")
      break
  }
  d.schedule()
}

export function gatesErrored(d: Draft, e: EventOf<"gates.errored">): string | undefined {
  const t = findTask(d, e.taskId, ["gating"])
  if (typeof t === "string") return t
  // Not the work's fault: nobody repairs it; the user hears the cause, and the answer runs the gates again.
  d.patch(t.id, { lastFailure: { source: `gates:${e.tag}`, message: e.message, evidencePath: null } })
  // A full disk: the gates already reset their build slot and ran again (machine-fault.ts); only a person frees space.
  const reason = e.tag === "disk-full" ? `the disk is full, not the task's code: ${e.message}` : `its gates could not run (${e.tag}): ${e.message}`
  d.block(t.id, reason, "gates")
  d.schedule()
}
