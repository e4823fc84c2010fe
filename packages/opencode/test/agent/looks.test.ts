import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { DebugSteps } from "../../src/agent/debug-steps"
import { Evidence } from "../../src/agent/evidence"
import { Looks } from "../../src/agent/looks"
import type { DebugReport } from "../../src/scheduler/core/report.schema"

/**
 * A worker's look (air_capture, air_probe) in the Debugger's steps (issue 37, item 4): recorded like a bash command,
 * with the exit code of its verdict; a failing look of the task's own program reproduces a ui-capture or
 * service-probe failure, and a passing one after the last edit verifies the fix. A look at something else, a bash
 * command that only bears a look's name, or a look at a failure it cannot show (a build's) counts for nothing.
 */
const at = "2026-01-01T00:00:00.000Z"
const look = (command: string, exit: number): DebugSteps.Step => ({ kind: "command", seq: DebugSteps.next(), command, exit, at, tool: command.split(" ")[0] as Looks.Tool })
const run = (command: string, exit: number): DebugSteps.Step => ({ kind: "command", seq: DebugSteps.next(), command, exit, at })
const edit = (): DebugSteps.Step => ({ kind: "edit", seq: DebugSteps.next(), tool: "write", at })

const dir = mkdtempSync(join(tmpdir(), "air-looks-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A task's evidence directory whose newest report failed at `gate`, with its log (a PNG for ui-capture, as the gate writes). */
function failedAt(gate: string, log: string, message: string): Evidence.Failure {
  const evidence = join(dir, gate)
  const attempt = join(evidence, "attempt-1")
  mkdirSync(attempt, { recursive: true })
  const logPath = join(attempt, gate === "ui-capture" ? "capture-screenshot.png" : `${gate}.log`)
  writeFileSync(logPath, log)
  const gates = [{ gate, passed: false, ran: true, ms: 1, logPath, summary: "" }]
  writeFileSync(join(attempt, "report.json"), JSON.stringify({ taskId: "T-3", attempt: 1, kind: "ui", passed: false, failedGate: gate, message, gates, changedFiles: [], findings: [], requires: [], evidenceDir: attempt }))
  return Evidence.failureOf(evidence)!
}

const PROBE = "nc -N 127.0.0.1 7000"
const ONE_LINE = "(build/line-service & S=$!; out=$(printf 'PING\\n' | nc -N 127.0.0.1 7000 2>&1); rc=$?; kill $S; grep -qF PONG <<< \"$out\")"
const uiFailure = failedAt("ui-capture", "\x89PNG\r\n", "task T-3: the program's window did not pass its checks:\n  the window stayed blank (one colour, #2e8b57, over 100% of it)\nEvidence: /x/capture/screenshot.png")
const probeFailure = failedAt("service-probe", `service (cwd ., in a loopback-only network namespace, ports 7000): build/line-service\n$ ${PROBE}\n`, "task S-1: The service probe failed: the probe's output lacks 'PONG'")
const buildFailure = failedAt("build", "$ cmake --build .air-build\nsrc/app.cpp:3: error: expected ';'\n", "task T-3: build failed in src/app.cpp")

const report = (reproduction: string, verification = reproduction): DebugReport => ({
  symptom: "the gate failed",
  reproduction: { command: reproduction, output: "FAILED" },
  rootCause: { file: "src/app.cpp", line: 22, explanation: "the event loop ignores Expose" },
  fix: "draw on Expose",
  verification: { command: verification, output: "PASSED" },
  pattern: "none",
})

describe("a look's failure: the gates it reproduces name it as their command", () => {
  test("a ui-capture failure names air_capture, a service-probe failure air_probe first; a build failure neither", () => {
    expect(uiFailure.commands).toEqual(["air_capture"])
    expect(probeFailure.commands).toEqual(["air_probe", PROBE])
    expect(buildFailure.commands).toEqual(["cmake --build .air-build"])
  })

  test("only the task's own look reproduces it: not a look at something else, not the other look", () => {
    expect(Evidence.reproduces("air_capture", uiFailure)).toBe(true)
    expect(Evidence.reproduces("air_probe", probeFailure)).toBe(true)
    expect(Evidence.reproduces(ONE_LINE, probeFailure)).toBe(true)
    expect(Evidence.reproduces(Looks.command("air_capture", { command: "/usr/bin/xeyes" }), uiFailure)).toBe(false)
    expect(Evidence.reproduces(Looks.command("air_probe", { input: "HELLO\n" }), probeFailure)).toBe(false)
    expect(Evidence.reproduces("air_probe", uiFailure)).toBe(false)
    expect(Evidence.reproduces("air_capture", buildFailure)).toBe(false)
  })
})

describe("a look as the Debugger's evidence (the evidence-first rule)", () => {
  test("a look that reproduces the failure is evidence; one at a failure it cannot show is not", () => {
    expect(Evidence.classify("air_capture", {}, { failure: uiFailure })).toEqual({ kind: "test", tool: "air_capture", detail: "air_capture" })
    expect(Evidence.classify("air_probe", {}, { failure: probeFailure })).toMatchObject({ tool: "air_probe" })
    expect(Evidence.classify("air_capture", {}, { failure: buildFailure })).toBeUndefined()
    expect(Evidence.classify("air_capture", {}, {})).toMatchObject({ tool: "air_capture" })
  })

  test("it counts once it judged (an exit code), never when it could not (a missing tool, an error)", () => {
    const item = Evidence.classify("air_capture", {}, { failure: uiFailure })!
    expect(Evidence.ran(item, { exit: 1, output: "air_capture of task T-3: FAILED" })).toBe(true)
    expect(Evidence.ran(item, { exit: 0, output: "air_capture of task T-3: PASSED" })).toBe(true)
    expect(Evidence.ran(item, { output: "air_capture of task T-3: no verdict on the program: a tool is missing: Xvfb" })).toBe(false)
    expect(Evidence.ran(item, { output: "Error: air_capture looks at a ui task's program" })).toBe(false)
  })
})

describe("a look in the Debugger's steps", () => {
  test.each<[string, DebugReport, () => DebugSteps.Step[], Evidence.Failure]>([
    ["a failing capture reproduces a blank window, a passing one verifies the fix", report("air_capture"), () => [look("air_capture", 1), edit(), look("air_capture", 0)], uiFailure],
    ["a failing probe reproduces a wrong reply, a passing one verifies the fix", report("air_probe"), () => [look("air_probe", 1), edit(), look("air_probe", 0)], probeFailure],
    ["the one bash command reproduces, a passing probe verifies", report(ONE_LINE, "air_probe"), () => [run(ONE_LINE, 1), edit(), look("air_probe", 0)], probeFailure],
    ["a look that failed its build (exit 2) reproduces too", report("air_capture"), () => [look("air_capture", 2), edit(), look("air_capture", 0)], uiFailure],
  ])("accepted: %s", (_, debug, steps, failure) => {
    expect(DebugSteps.check(debug, steps(), failure)).toEqual({ ok: true, route: "gates" })
  })

  const other = Looks.command("air_capture", { command: "build/demo" })
  test.each<[string, DebugReport, () => DebugSteps.Step[], Evidence.Failure, string, RegExp]>([
    ["a look that passed before the edit", report("air_capture"), () => [look("air_capture", 0), edit(), look("air_capture", 0)], uiFailure, "reproduction", /did not show the failure/],
    ["a look only after the first edit", report("air_capture"), () => [edit(), look("air_capture", 1), edit(), look("air_capture", 0)], uiFailure, "reproduction", /only after your first edit/],
    ["a look at something else", report(other, "air_capture"), () => [look(other, 1), edit(), look("air_capture", 0)], uiFailure, "reproduction", /not the failing command/],
    ["the other look", report("air_probe", "air_capture"), () => [look("air_probe", 1), edit(), look("air_capture", 0)], uiFailure, "reproduction", /not the failing command/],
    ["a capture for a failed build", report("air_capture"), () => [look("air_capture", 1), edit(), look("air_capture", 0)], buildFailure, "reproduction", /not the failing command/],
    ["a bash command named like a look", report("air_capture"), () => [run("air_capture", 127), edit(), look("air_capture", 0)], uiFailure, "reproduction", /ran only after your first edit/],
    ["a verification look before the last edit", report("air_capture"), () => [look("air_capture", 1), edit(), look("air_capture", 0), edit()], uiFailure, "verification", /before your last edit/],
    ["a verification look that still fails", report("air_capture"), () => [look("air_capture", 1), edit(), look("air_capture", 1)], uiFailure, "verification", /still fails/],
    ["a verification by a look at something else", report("air_capture", other), () => [look("air_capture", 1), edit(), look(other, 0)], uiFailure, "verification", /not the command that failed/],
  ])("refused: %s", (_, debug, steps, failure, step, message) => {
    const verdict = DebugSteps.check(debug, steps(), failure)
    expect(verdict).toMatchObject({ ok: false, step })
    expect(verdict.ok ? "" : verdict.message).toMatch(message)
  })

  test("the guard's record: a look with the exit code of its verdict (the tool's metadata); one with no verdict is not recorded", () => {
    const session = "ses_debug_looks"
    DebugSteps.begin("l1", session, "air_capture", {})
    DebugSteps.end("l1", { exit: 1, truncated: false })
    DebugSteps.begin("l2", session, "air_capture", { command: "build/demo", args: ["--big"] })
    DebugSteps.end("l2", { exit: 0 })
    DebugSteps.begin("l3", session, "write", { filePath: "src/app.cpp" })
    DebugSteps.end("l3", {})
    DebugSteps.begin("l4", session, "air_capture", {})
    DebugSteps.end("l4", { truncated: false })
    DebugSteps.begin("l5", session, "air_capture", {})
    DebugSteps.end("l5", { exit: 0 })
    const steps = DebugSteps.of(session)
    expect(steps.map((s) => (s.kind === "command" ? `${s.tool ?? "bash"}: ${s.command} → ${s.exit}` : `edit ${s.tool}`))).toEqual([
      "air_capture: air_capture → 1",
      "air_capture: air_capture --command build/demo --args --big → 0",
      "edit write",
      "air_capture: air_capture → 0",
    ])
    expect(DebugSteps.check(report("air_capture"), steps, uiFailure)).toEqual({ ok: true, route: "gates" })
    DebugSteps.forget(session)
  })
})
