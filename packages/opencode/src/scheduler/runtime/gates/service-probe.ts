import path from "node:path"
import { ServiceProbe } from "../verify/service-probe.ts"
import type { Gate, GateContext, GateOutcome } from "./gate.ts"
import { TOOL_MISSING } from "./schema.ts"

/**
 * A service task is verified by what goes over the wire (issue 37, invariant 16): its service is started from the
 * task's build in a loopback-only network namespace, the task's probe talks to it while tcpdump captures the
 * loopback, and the probe's output is judged in code (runtime/verify/service-probe.ts). The evidence (`probe`: the
 * capture's summary, beside the pcap, the probe's and the service's logs) is required of service tasks only, so a
 * code task never waits on it. A wrong reply, a service that never listens or crashes goes to the Debugger with the
 * captured exchange; a missing tool or privilege to a person, with the install command.
 */
export const serviceProbeGate = {
  id: "service-probe",
  reportsNotRun: true,
  provides: "probe",
  requiredFor: ["service"],
  program: { field: "service", schema: ServiceProbe.Spec },
  route: "debugger",
  logs: [],
  run: probe,
  missingEvidence: (_ctx, result) => (result?.ran ? undefined : "the service was not probed (a service task says how in its service field)"),
} as const satisfies Gate

async function probe(ctx: GateContext): Promise<GateOutcome> {
  const raw = ctx.program?.service
  if (raw === undefined) return { ran: false, summary: `no service to probe in a ${ctx.kind} task` }
  const spec = ServiceProbe.Spec.safeParse(raw)
  if (!spec.success) {
    const summary = `the task's service field is not valid: ${spec.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`
    // The plan's words, not the code's: only the Architect or a person can change them.
    return { ran: false, summary, failure: { gate: "plan", summary, message: `${ctx.label}: ${summary}. The plan must say how to start the service and probe it.` } }
  }
  const ready = ServiceProbe.readiness(ctx.env)
  if (!ready.ok) {
    const summary = `the service probe cannot run here: ${ready.message}`
    return { ran: false, summary, failure: { gate: TOOL_MISSING, missingTool: "tcpdump", summary, message: `${ctx.label}: ${summary}${ready.install ? `. Install it: ${ready.install}` : ""}. Then run the gates again.` } }
  }
  const outDir = path.join(ctx.evidenceDir, "probe")
  const result = await ServiceProbe.run(spec.data, { worktree: ctx.worktree, outDir, env: ctx.env, ...(ctx.signal ? { signal: ctx.signal } : {}) })
  const logPath = result.files.summaryText ?? result.files.probeLog
  const described = ServiceProbe.describe(result)
  if (result.verdict.ok) return { ran: true, summary: `probe passed: ${result.verdict.reason}`, ...(logPath ? { logPath } : {}) }
  if (result.verdict.cause === "environment") {
    const summary = `the service probe cannot run here: ${result.verdict.reason}`
    return { ran: false, summary, failure: { gate: TOOL_MISSING, missingTool: result.verdict.missingTool ?? "tcpdump", summary, message: `${ctx.label}: ${described}` } }
  }
  const summary = `probe failed: ${result.verdict.reason}`
  return {
    ran: true,
    summary,
    ...(logPath ? { logPath } : {}),
    failure: { summary, message: `${ctx.label}: ${described}\nReproduce it with air_probe in your worktree (or start the service and run the probe by hand), fix the service, commit, and report again.` },
  }
}
