import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { reproduction } from "../../src/scheduler/runtime/gates/service-probe"
import { ServiceProbe } from "../../src/scheduler/runtime/verify/service-probe"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { projectPrograms, SERVICE_BUILD, serviceField, serviceProjectFiles } from "../support/service-project"
import { passingReviewer, planningArchitect, runScenario, shellStep, submittingMain, trivialProject, type RunResult } from "../support/runs"

/**
 * Issue 37 item 7, the service half: a service task is verified by what goes over the wire. One headless run on a
 * small CMake project with a TCP line service (real cmake, ninja, g++, ctest; the real gates, bwrap, tcpdump, nc):
 * T-1 changes the reply and merges with a capture holding the new bytes; T-2, a code task beside it, needs no
 * capture; T-3's executor plants a wrong reply, the probe names it, and the Debugger reproduces it by starting the
 * service and running the probe in its worktree (one bash command), fixes it, verifies with `air_probe` (the gate's
 * own probe on its worktree, issue 37 item 4), and T-3 merges.
 */
const requirement = "Version the service's reply."
const tasks = [
  { id: "T-1", title: "Reply PONG v2", kind: "service", writeSet: [{ path: "src/reply.h", action: "modify" }], doneWhen: "the service answers PING with PONG v2", service: serviceField("PONG v2") },
  { id: "T-2", title: "Comment twice()", kind: "code", writeSet: [{ path: "src/util.cpp", action: "modify" }], doneWhen: "twice() has a comment" },
  { id: "T-3", title: "Reply PONG v3", kind: "service", deps: ["T-1", "T-2"], writeSet: [{ path: "src/reply.h", action: "modify" }], doneWhen: "the service answers PING with PONG v3", service: serviceField("PONG v3") },
]

const commit = (change: string, msg: string) => shellStep(`${change} && git add -A && git commit -qm '${msg}'`)
const executor = (id: string, change: string, msg: string) => ({
  agent: "executor",
  match: `^Task ${id}:`,
  steps: [commit(change, msg), { tool: "air_report", args: { summary: msg } }, { text: "Reported." }],
})

/**
 * What the gate's log offers: build (the gates built in a build slot, so the Debugger's worktree holds no build yet),
 * start the service and run the gate's probe command (its log's `$ ` line) in one bash call, which prints the reply
 * and fails when it is wrong.
 */
const PROBE_IN_WORKTREE = reproduction(ServiceProbe.Spec.parse(serviceField("PONG v3")), SERVICE_BUILD)

const debuggerT3 = {
  agent: "debugger",
  match: "^Task T-3:",
  steps: [
    { tool: "bash", args: { command: PROBE_IN_WORKTREE, description: "Reproduce the probe's failure" }, expect: { lastUserIncludes: ["service-probe", "PONX v3"] } },
    { tool: "edit", args: { filePath: "src/reply.h", oldString: "PONX v3", newString: "PONG v3" }, expect: { lastToolResultIncludes: ["PONX v3"] } },
    { tool: "air_probe", args: {} },
    { ...commit("true", "Fix the reply: PONG v3"), expect: { lastToolResultIncludes: ["air_probe of task T-3: PASSED", "PONG v3"] } },
    {
      tool: "air_report",
      args: {
        summary: "The service answered PONX v3; src/reply.h had a typo. Fixed; the probe gets PONG v3.",
        debug: {
          symptom: "the probe's output lacks 'PONG v3' (it printed 'PONX v3')",
          reproduction: { command: PROBE_IN_WORKTREE, output: "PONX v3 (grep found no PONG v3, exit 1)" },
          rootCause: { file: "src/reply.h", line: 2, explanation: "SERVICE_REPLY is spelled PONX v3" },
          fix: "spelled the reply PONG v3",
          verification: { command: "air_probe", output: "air_probe of task T-3: PASSED" },
          pattern: "none",
        },
      },
    },
    { text: "Fixed and reported." },
  ],
}

/** The Reviewer of T-1 gets the probe's verdict, the network summary (the new reply on the wire) and the files; no picture. */
const serviceReviewer = {
  agent: "reviewer",
  match: "^Review task (?<id>T-1):",
  steps: [
    { ...passingReviewer.steps[0]!, expect: { lastUserImages: 0, lastUserIncludes: ["Program evidence (service task", "The service-probe gate's verdict: passed", "Network summary", "| PONG v2", "attempt-1/probe/capture.pcap"] } },
    ...passingReviewer.steps.slice(1),
  ],
}

const scenario = {
  name: "service-task",
  scripts: [
    submittingMain(requirement),
    planningArchitect("Two service tasks and a code task.", tasks),
    executor("T-1", "sed -i 's/PONG v1/PONG v2/' src/reply.h", "Reply PONG v2"),
    executor("T-2", "sed -i '1a // twice(): doubles x, no overflow check' src/util.cpp", "Comment twice()"),
    // The planted fault: a wrong reply that builds and passes the tests.
    executor("T-3", "sed -i 's/PONG v2/PONX v3/' src/reply.h", "Reply PONG v3"),
    debuggerT3,
    serviceReviewer,
    passingReviewer,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult
const evidence = (...parts: string[]) => join(project, ".air/local/evidence", ...parts)
const report = (id: string, attempt: number) => JSON.parse(readFileSync(evidence(id, `attempt-${attempt}`, "report.json"), "utf8"))

beforeAll(async () => {
  sandbox = makeSandbox("air-service-")
  project = trivialProject(sandbox, serviceProjectFiles(), {}, "lineservice")
  r = await runScenario(sandbox, project, scenario, { input: requirement, timeoutMs: 420_000, env: { AIRCODING_CONCURRENCY: "2" } })
}, 900_000)

afterAll(() => sandbox?.cleanup())

describe("service tasks, end to end (issue 37 item 7)", () => {
  test("the run ends well: all three merge", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"], ["T-2", "merged"], ["T-3", "merged"]])
    expect(r.events.filter((e) => e.type === "gates.errored" || e.type === "runtime.fault")).toEqual([])
  })

  test("T-1 merges with a capture holding the new reply and exact byte counts each way", () => {
    const probeDir = evidence("T-1", "attempt-1", "probe")
    expect(readFileSync(join(probeDir, "capture.pcap")).includes(Buffer.from("PONG v2\n"))).toBe(true)
    const summary = JSON.parse(readFileSync(join(probeDir, "summary.json"), "utf8"))
    expect(summary.verdict).toMatchObject({ ok: true, kind: "passed" })
    const connections = summary.capture.connections
    expect(connections).toHaveLength(1)
    // "PING\n" out, "PONG v2\n" back.
    expect(connections[0].toServer.bytes).toBe(5)
    expect(connections[0].toClient.bytes).toBe(8)
    const passed = r.events.find((e) => e.type === "gates.passed" && e.taskId === "T-1")
    expect(passed.requires).toContain("probe")
    expect(report("T-1", 1).gates.find((g: any) => g.gate === "service-probe")).toMatchObject({ passed: true, ran: true })
  })

  test("T-2, a code task in the same run, merges without a probe: not run, not required", () => {
    expect(report("T-2", 1).gates.find((g: any) => g.gate === "service-probe")).toMatchObject({ passed: true, ran: false })
    const passed = r.events.find((e) => e.type === "gates.passed" && e.taskId === "T-2")
    expect(passed.requires).not.toContain("probe")
    expect(existsSync(evidence("T-2", "attempt-1", "probe", "capture.pcap"))).toBe(false)
  })

  test("T-3's wrong reply fails at the probe, named, and the Debugger gets that failure", () => {
    const failed = r.events.find((e) => e.type === "gates.failed" && e.taskId === "T-3")
    expect(failed).toMatchObject({ gate: "service-probe" })
    expect(JSON.stringify(failed)).toContain("PONX v3")
    const first = report("T-3", 1)
    expect(first).toMatchObject({ passed: false, failedGate: "service-probe" })
    expect(first.message).toContain("PONX v3")
    // The gate's log names the probe command as the build gate names its commands: the Debugger's rule reads it.
    const log = readFileSync(first.gates.find((g: any) => g.gate === "service-probe").logPath, "utf8")
    expect(log).toMatch(/^\$ nc -N 127\.0\.0\.1 7000$/m)
    expect(r.events.filter((e) => e.type === "task.dispatched" && e.taskId === "T-3" && e.role === "debugger")).toHaveLength(1)
    const debuggerPrompt = r.modelLog.find((l) => l.agent === "debugger")
    expect(debuggerPrompt?.lastUser).toContain("service-probe")
  })

  test("the Debugger reproduces with the probe, fixes, verifies with air_probe, and T-3 merges with PONG v3 on the wire", () => {
    expect(r.modelLog.filter((l) => l.failure)).toEqual([])
    const reported = r.events.find((e) => e.type === "worker.reported" && e.taskId === "T-3" && e.result.role === "debugger")
    expect(reported?.result.debug.reproduction.command).toBe(PROBE_IN_WORKTREE)
    expect(reported?.result.debug.verification.command).toBe("air_probe")
    // The Debugger's steps as the guard saw them and DebugSteps judged them: the probe failed before the edit (bash), the
    // look passed after it (air_probe, recorded with its verdict's exit code).
    const stepsFile = readdirSync(evidence("T-3")).find((f) => /^debug-.*\.json$/.test(f))
    expect(stepsFile).toBeDefined()
    const steps = JSON.parse(readFileSync(evidence("T-3", stepsFile!), "utf8"))
    expect(steps.verdict).toEqual({ ok: true, route: "gates" })
    const runs = steps.steps.filter((s: any) => s.kind === "command" && (s.command === PROBE_IN_WORKTREE || s.tool === "air_probe"))
    const edit = steps.steps.find((s: any) => s.kind === "edit")
    expect(runs.map((s: any) => `${s.tool ?? "bash"} → ${s.exit}`)).toEqual(["bash → 1", "air_probe → 0"])
    expect(runs[0].seq).toBeLessThan(edit.seq)
    expect(runs[1].seq).toBeGreaterThan(edit.seq)
    // The look's evidence is the task's: its capture holds the fixed reply.
    const look = evidence("T-3", "looks", "1-air_probe", "capture.pcap")
    expect(readFileSync(look).includes(Buffer.from("PONG v3\n"))).toBe(true)
    const last = [2, 3].map((n) => evidence("T-3", `attempt-${n}`, "probe", "capture.pcap")).filter(existsSync).at(-1)
    expect(last, "T-3's passing attempt has a capture").toBeDefined()
    expect(readFileSync(last!).includes(Buffer.from("PONG v3\n"))).toBe(true)
    expect(readFileSync(join(project, "src/reply.h"), "utf8")).toContain('"PONG v3"')
  })

  test("T-1's Reviewer was told the probe's verdict and the network summary (every scripted expectation held)", () => {
    expect(r.modelLog.filter((l) => l.failure).map((l) => l.failure)).toEqual([])
    expect(r.modelLog.some((l) => l.agent === "reviewer" && String(l.lastUser).startsWith("Review task T-1:"))).toBe(true)
  })

  test("no service outlives its probe: neither the gates' nor the Debugger's", () => {
    expect(projectPrograms(project)).toEqual([])
  })
})
