/**
 * The Debugger's reproduction of a failed service probe (issue 37 item 4): the service-probe gate's log names the
 * probe command as a `$ ` line, so the evidence rule (agent/evidence.ts) knows it, and offers one bash command that
 * starts the service and runs that probe. Here that command runs as a worker's does, in the real OS sandbox (a
 * network namespace of its own), against the real line service: it fails and prints the wrong reply, it passes on
 * the right one, and it counts as reproducing the failure while merely starting the service does not.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Evidence } from "../../src/agent/evidence"
import { Paths } from "../../src/agent/paths"
import { reproduction, serviceProbeLog } from "../../src/scheduler/runtime/gates/service-probe"
import { Proc } from "../../src/scheduler/runtime/process"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { ServiceProbe } from "../../src/scheduler/runtime/verify/service-probe"
import { type LineServiceWorktree, makeLineServiceWorktree } from "./line-service"

let w: LineServiceWorktree
beforeAll(() => {
  w = makeLineServiceWorktree()
})
afterAll(() => w?.cleanup())

/** `command` run by bash as a worker's shell runs it: in the sandbox, without the host's network. */
async function inWorkerShell(command: string): Promise<Proc.Result> {
  const policy = Sandbox.plan({ worktree: w.worktree, git: false })
  const argv = Sandbox.wrap(["/bin/bash", "-c", command], policy)
  // A stall far beyond the listen wait and the probe: the outcome must come before it.
  return Proc.run(argv[0]!, argv.slice(1), { cwd: w.worktree, env: process.env, timeoutMs: 60_000 })
}

/** The task's evidence dir after a failed probe gate: report.json naming the gate's log, as the pipeline writes it. */
function failedTask(name: string, log: string, message: string): string {
  const dir = join(w.dir, "tasks", name)
  mkdirSync(join(dir, "attempt-1"), { recursive: true })
  const logPath = join(dir, "attempt-1", "service-probe.log")
  writeFileSync(logPath, log)
  writeFileSync(join(dir, "attempt-1", "report.json"), JSON.stringify({ passed: false, failedGate: "service-probe", message, gates: [{ gate: "service-probe", logPath }] }))
  return dir
}

describe("reproducing a failed service probe in a worktree", () => {
  test("the gate's log names the probe; its reproduction fails on the wrong reply and passes on the right one", async () => {
    const wrong = ServiceProbe.Spec.parse(w.spec(["--reply", "PANG"]))
    const result = await ServiceProbe.run(wrong, { worktree: w.worktree, outDir: w.outDir("wrong") })
    expect(result.verdict.kind).toBe("probe-output")
    const log = serviceProbeLog(wrong, result)
    expect(log).toMatch(/^\$ nc -N 127\.0\.0\.1 7000$/m)
    expect(log).toContain(reproduction(wrong))
    expect(log).toContain("PANG")

    const failing = await inWorkerShell(reproduction(wrong))
    expect(failing.code, failing.output).toBe(1)
    expect(failing.output).toContain("PANG")

    const right = ServiceProbe.Spec.parse(w.spec(["--reply", "PONG"]))
    const passing = await inWorkerShell(reproduction(right))
    expect(passing.code, passing.output).toBe(0)
    expect(passing.output).toContain("PONG")

    // The right reply from a probe that exits otherwise than the task says: still a failure.
    const wrongExit = ServiceProbe.Spec.parse(w.spec(["--reply", "PONG"], { probe: { command: "sh", args: ["-c", "nc -N 127.0.0.1 7000; exit 3"], input: "PING\n", expect: { contains: "PONG" }, exitCode: 0 } }))
    const exited = await inWorkerShell(reproduction(wrongExit))
    expect(exited.code, exited.output).toBe(1)
    expect(exited.output).toContain("PONG")
  }, 120_000)

  test("the reproduction counts as evidence of the failure; starting the service alone does not", async () => {
    const spec = ServiceProbe.Spec.parse(w.spec(["--reply", "PANG"]))
    const result = await ServiceProbe.run(spec, { worktree: w.worktree, outDir: w.outDir("evidence") })
    const failure = Evidence.failureOf(failedTask("T-9", serviceProbeLog(spec, result), `T-9: ${ServiceProbe.describe(result)}`))
    // The worker's look (air_probe) first, then the probe command of the gate's log.
    expect(failure?.commands).toEqual(["air_probe", "nc -N 127.0.0.1 7000"])
    const command = `cmake --build .air-build > /dev/null && ${reproduction(spec)}`
    expect(Evidence.writesFiles(command)).toBe(false)
    expect(Evidence.reproduces(command, failure!)).toBe(true)
    expect(Evidence.fromBash(command, [], w.worktree, failure)).toMatchObject({ tool: "bash" })
    // The guard's reading of a worker's command lets it through (no path outside the worktree).
    expect(Paths.bash(command, { root: w.worktree })).toMatchObject({ ok: true })
    expect(Evidence.reproduces("build/line-service --reply PANG", failure!)).toBe(false)
    expect(Evidence.reproduces("nc -z 127.0.0.1 7000", failure!)).toBe(false)
  }, 120_000)

  test("a probe with its own working directory, two ports and an expected text over two lines stays one line of shell", () => {
    const spec = ServiceProbe.Spec.parse({
      service: { command: "./line-service", cwd: "build" },
      ports: [7000, 7001],
      probe: { command: "nc", args: ["-N", "127.0.0.1", "7000"], cwd: "build", input: "A\nB\n", expect: { contains: "X\nY" } },
    })
    const command = reproduction(spec)
    expect(command).not.toContain("\n")
    expect(command).toContain(":1B59 [0-9A-F]+:0000 0A ")
    expect(command).toContain("printf 'A\\nB\\n'")
    expect(command).toContain("grep -qF X ")
    expect(command).toContain("grep -qF Y ")
  })
})
