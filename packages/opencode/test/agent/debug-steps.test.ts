import { describe, expect, test } from "vitest"
import { DebugSteps } from "../../src/agent/debug-steps"
import type { Evidence } from "../../src/agent/evidence"
import type { DebugReport } from "../../src/scheduler/core/report.schema"

/**
 * The Debugger's steps against the session's record of commands and edits: each step refused when it is
 * missing or out of order; a failure that will not reproduce goes to the Architect, with nothing edited.
 */
const at = "2026-01-01T00:00:00.000Z"
const run = (command: string, exit: number): DebugSteps.Step => ({ kind: "command", seq: DebugSteps.next(), command, exit, at })
const edit = (tool = "edit"): DebugSteps.Step => ({ kind: "edit", seq: DebugSteps.next(), tool, at })

const failing = "ctest --test-dir .air-build --output-on-failure -j 2"
const failure: Evidence.Failure = { commands: [failing], names: ["calc_test", "src/calc.cpp"] }
const repro = "ctest --test-dir .air-build --output-on-failure -R calc_test"

const full: DebugReport = {
  symptom: "calc_test: sub(5, 3) expected 2, got 8",
  reproduction: { command: repro, output: "FAIL: sub(5, 3): expected 2, got 8" },
  rootCause: { file: "src/calc.cpp", line: 8, explanation: "sub adds instead of subtracting" },
  fix: "a - b in sub",
  verification: { command: repro, output: "100% tests passed" },
  pattern: "none",
}
const good = () => [run("cat .air/local/evidence/T-1/attempt-1/test.log", 0), run(repro, 8), edit(), run("cmake --build .air-build", 0), run(repro, 0)]

describe("the Debugger's steps", () => {
  test("a report with every step, in order, goes to the gates", () => {
    expect(DebugSteps.check(full, good(), failure)).toEqual({ ok: true, route: "gates" })
  })

  test.each<[string, DebugReport, () => DebugSteps.Step[], string, RegExp]>([
    ["no reproduction", { ...full, reproduction: undefined }, good, "reproduction", /reproduction is missing/],
    ["a reproduction that never ran", full, () => [edit(), run(failing, 0)], "reproduction", /did not run in this session/],
    ["a reproduction run only after the first edit", full, () => [edit(), run(repro, 8), edit(), run(repro, 0)], "reproduction", /only after your first edit/],
    ["a reproduction that passed", full, () => [run(repro, 0), edit(), run(repro, 0)], "reproduction", /did not show the failure/],
    [
      "a reproduction that is not the failing command",
      { ...full, reproduction: { command: "make lint", output: "error" } },
      () => [run("make lint", 2), edit(), run(repro, 0)],
      "reproduction",
      /not the failing command/,
    ],
    ["no root cause", { ...full, rootCause: undefined }, good, "rootCause", /root cause is missing/],
    ["no fix", { ...full, fix: undefined }, good, "fix", /fix is missing/],
    ["a fix with no edit", full, () => [run(repro, 8), run(repro, 0)], "fix", /changed no file/],
    ["no verification", { ...full, verification: undefined }, good, "verification", /verification is missing/],
    ["a verification run before the last edit", full, () => [run(repro, 8), edit(), run(repro, 0), edit("write")], "verification", /before your last edit/],
    ["a verification that still fails", full, () => [run(repro, 8), edit(), run(repro, 8)], "verification", /still fails/],
    [
      "a verification of another command",
      { ...full, verification: { command: "cmake --build .air-build", output: "ok" } },
      good,
      "verification",
      /not the command that failed/,
    ],
  ])("refused: %s", (_, report, steps, step, message) => {
    const verdict = DebugSteps.check(report, steps(), failure)
    expect(verdict).toMatchObject({ ok: false, step })
    expect(verdict.ok ? "" : verdict.message).toMatch(message)
  })

  test("a report without its steps is refused, with a fix or without one", () => {
    expect(DebugSteps.check(undefined, good(), failure)).toMatchObject({ ok: false, step: "steps", message: expect.stringMatching(/carries its steps/) })
    expect(DebugSteps.check(undefined, [run(repro, 8)], failure)).toMatchObject({ ok: false, step: "steps" })
    expect(DebugSteps.check(undefined, [], undefined)).toMatchObject({ ok: false, step: "steps" })
  })

  test("not reproducible: every command tried ran and nothing was edited → the Architect, not the gates", () => {
    const report: DebugReport = { symptom: "calc_test fails on the gate", notReproducible: { tried: [repro, failing], note: "passes here every time" } }
    expect(DebugSteps.check(report, [run(repro, 0), run(failing, 0)], failure)).toEqual({ ok: true, route: "architect" })
    expect(DebugSteps.check(report, [run(repro, 0)], failure)).toMatchObject({ ok: false, step: "notReproducible", message: expect.stringMatching(/did not run/) })
    expect(DebugSteps.check(report, [run(repro, 0), run(failing, 0), edit()], failure)).toMatchObject({ ok: false, step: "notReproducible", message: expect.stringMatching(/gets no fix/) })
    expect(DebugSteps.check({ ...full, notReproducible: { tried: [repro], note: "" } }, good(), failure)).toMatchObject({ ok: false, step: "reproduction" })
  })

  test("the guard's record: a command with its exit code, a file-changing command and a write tool as edits, in order", () => {
    const session = "ses_debug_record"
    DebugSteps.begin("k1", session, "bash", { command: repro })
    DebugSteps.end("k1", { exit: 8 })
    DebugSteps.begin("k2", session, "edit", { filePath: "src/calc.cpp" })
    DebugSteps.end("k2", {})
    DebugSteps.begin("k3", session, "bash", { command: "sed -i s/+/-/ src/calc.cpp" })
    DebugSteps.end("k3", { exit: 0 })
    DebugSteps.begin("k4", session, "bash", { command: repro })
    DebugSteps.end("k4", { exit: 0 })
    const steps = DebugSteps.of(session)
    expect(steps.map((s) => (s.kind === "command" ? `${s.command} → ${s.exit}` : `edit ${s.tool}`))).toEqual([
      `${repro} → 8`,
      "edit edit",
      "sed -i s/+/-/ src/calc.cpp → 0",
      "edit bash",
      `${repro} → 0`,
    ])
    expect(DebugSteps.check(full, steps, failure)).toEqual({ ok: true, route: "gates" })
    DebugSteps.forget(session)
  })
})
