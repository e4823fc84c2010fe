import { readFileSync } from "node:fs"
import path from "node:path"
import { Sandbox } from "../sandbox/sandbox.ts"
import { ServiceProbe } from "../verify/service-probe.ts"
import type { Gate, GateContext, GateOutcome } from "./gate.ts"
import { programSpec } from "./program-field.ts"
import { TOOL_MISSING } from "./schema.ts"

/**
 * A service task is verified by what goes over the wire (issue 37, invariant 16): its service is started from the
 * task's build in a loopback-only network namespace, the task's probe talks to it while tcpdump captures the
 * loopback, and the probe's output is judged in code (runtime/verify/service-probe.ts). The evidence (`probe`: the
 * capture's summary, beside the pcap, the probe's and the service's logs) is required of service tasks only, so a
 * code task never waits on it. A wrong reply, a service that never listens or crashes goes to the Debugger with the
 * captured exchange; a missing tool or privilege to a person, with the install command.
 */
const SERVICE_PROBE_LOG = "service-probe.log"

export const serviceProbeGate = {
  id: "service-probe",
  tree: "build",
  reportsNotRun: true,
  provides: "probe",
  requiredFor: ["service"],
  program: { field: "service", schema: ServiceProbe.Spec },
  route: "debugger",
  logs: [SERVICE_PROBE_LOG],
  run: probe,
  missingEvidence: (_ctx, result) => (result?.ran ? undefined : "the service was not probed (a service task says how in its service field)"),
} as const satisfies Gate

async function probe(ctx: GateContext): Promise<GateOutcome> {
  const read = programSpec(ctx, "service", ServiceProbe.Spec, "no service to probe", "how to start the service and probe it")
  if ("outcome" in read) return read.outcome
  const spec = read.spec
  const ready = ServiceProbe.readiness(ctx.env)
  if (!ready.ok) {
    const summary = `the service probe cannot run here: ${ready.message}`
    return { ran: false, summary, failure: { gate: TOOL_MISSING, missingTool: "tcpdump", summary, message: `${ctx.label}: ${summary}${ready.install ? `. Install it: ${ready.install}` : ""}. Then run the gates again.` } }
  }
  const outDir = path.join(ctx.evidenceDir, "probe")
  const result = await ServiceProbe.run(spec, { worktree: ctx.worktree, outDir, env: ctx.env, ...(ctx.signal ? { signal: ctx.signal } : {}) })
  const logPath = await ctx.write(SERVICE_PROBE_LOG, serviceProbeLog(spec, result, ctx.rules.build))
  const described = ServiceProbe.describe(result)
  if (result.verdict.ok) return { ran: true, summary: `probe passed: ${result.verdict.reason}`, logPath }
  if (result.verdict.cause === "environment") {
    const summary = `the service probe cannot run here: ${result.verdict.reason}`
    return { ran: false, summary, failure: { gate: TOOL_MISSING, missingTool: result.verdict.missingTool ?? "tcpdump", summary, message: `${ctx.label}: ${described}` } }
  }
  const summary = `probe failed: ${result.verdict.reason}`
  return {
    ran: true,
    summary,
    logPath,
    failure: { summary, message: `${ctx.label}: ${described}\nLook before changing code: air_probe runs this same probe on your worktree (a failing look is the reproduction; or build, then start the service and run the probe in one bash command: ${reproduction(spec, ctx.rules.build)}), fix the service, look again (a passing look after your last edit is the verification), commit, and report again.` },
  }
}

const shell = (argv: readonly string[]) => argv.map(Sandbox.quote).join(" ")

/**
 * One bash command that does in a worker's worktree what the gate did: build (`build`, the toolchain's commands), start the service, wait until its ports
 * listen (bounded by the task's listenTimeoutS), run the probe with its input, stop the service, print what the
 * probe got, and exit non-zero when that lacks what the task expects or the probe's exit is not the one it names (grep's reading of `contains`, or of `matches`
 * as an extended regular expression: close to the gate's JavaScript one, not the same). A worker's shell has a
 * network namespace of its own (the sandbox), so the port is free there whatever runs on the host.
 */
export function reproduction(spec: ServiceProbe.Spec, build: readonly string[] = []): string {
  const inCwd = (cwd: string, argv: readonly string[]) => (cwd === "." ? shell(argv) : `(cd ${Sandbox.quote(cwd)} && exec ${shell(argv)})`)
  const service = inCwd(spec.service.cwd, [spec.service.command, ...spec.service.args])
  const probe = inCwd(spec.probe.cwd, [spec.probe.command, ...spec.probe.args])
  const tries = Math.ceil(spec.listenTimeoutS * 10)
  // Listening, read from the shell's own network namespace (state 0A is LISTEN): /proc/self is a path the guard lets
  // a worker name, where bash's /dev/tcp is refused as outside the worktree.
  const listens = (port: number) => `grep -qsE ':${port.toString(16).toUpperCase().padStart(4, "0")} [0-9A-F]+:0000 0A ' /proc/self/net/tcp /proc/self/net/tcp6`
  const wait = spec.ports.map((port) => `for i in $(seq ${tries}); do ${listens(port)} && break; sleep 0.1; done`).join("; ")
  const input = spec.probe.input !== undefined ? `printf ${Sandbox.quote(printfFormat(spec.probe.input))} | ` : ""
  const { contains, matches } = spec.probe.expect
  // One line of shell: an expected text over several lines is checked line by line.
  const wanted = (contains ?? "").split("\n").filter(Boolean)
  const checks = [...wanted.map((line) => `grep -qF ${Sandbox.quote(line)} <<< "$out"`), ...(matches !== undefined ? [`grep -qE ${Sandbox.quote(matches)} <<< "$out"`] : [])]
  if (spec.probe.exitCode !== undefined) checks.push(`[ $rc -eq ${spec.probe.exitCode} ]`)
  const check = checks.join(" && ")
  // The build first, as the gate's was: the gates built in a build slot, so a worker's worktree may hold no build yet.
  const built = build.map((command) => `${command} > /dev/null && `).join("")
  return `${built}(${service} & S=$!; ${wait}; out=$(${input}${probe} 2>&1); rc=$?; kill $S; printf '%s\\n' "$out"; ${check})`
}

/** Text as printf's format that prints it: one line of shell, its newlines as `\n` (a bash command split over lines reads as several). */
function printfFormat(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/%/g, "%%").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")
}

/**
 * The gate's log: the probe command as a `$ ` line, as the build and test gates name theirs, so the Debugger's
 * evidence rule (agent/evidence.ts, `failureOf` and `reproduces`) knows the command that showed the failure; then
 * how the service was started, the reproduction in one bash command, and the probe's summary (verdict, exchange).
 */
export function serviceProbeLog(spec: ServiceProbe.Spec, result: ServiceProbe.Result, build: readonly string[] = []): string {
  const summary = result.files.summaryText ? readSummary(result.files.summaryText) : `verdict: ${result.verdict.ok ? "passed" : "failed"}: ${result.verdict.reason}\n`
  return [
    `service (cwd ${spec.service.cwd}, in a loopback-only network namespace, ports ${spec.ports.join(", ")}): ${shell([spec.service.command, ...spec.service.args])}`,
    `probe (cwd ${spec.probe.cwd}${spec.probe.input !== undefined ? `, stdin ${JSON.stringify(spec.probe.input)}` : ""}), once every port listened:`,
    `$ ${shell([spec.probe.command, ...spec.probe.args])}`,
    `reproduce it in a worktree (one bash command): ${reproduction(spec, build)}`,
    "",
    summary,
  ].join("\n")
}

function readSummary(file: string): string {
  try {
    return readFileSync(file, "utf8")
  } catch {
    return ""
  }
}
