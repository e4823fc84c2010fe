import path from "node:path"
import { GateError } from "../errors.ts"
import { UiCapture } from "../verify/ui-capture.ts"
import type { Gate, GateContext, GateOutcome } from "./gate.ts"
import { programSpec } from "./program-field.ts"
import { TOOL_MISSING } from "./schema.ts"
import { UiBefore } from "./ui-before.ts"

/**
 * A ui task is verified by what its window shows (issue 37, invariant 16): its program is started from the task's
 * build on a private Xvfb display inside the sandbox, photographed once its window is mapped, and the task's checks
 * (title, size, not blank, pixels) are judged in code (runtime/verify/ui-capture.ts). The evidence (`screenshot`,
 * beside the window tree and the program's output) is required of ui tasks only, so a code task never waits on a
 * display. A blank window, no window, a crash go to the Debugger with the capture; a missing tool to a person.
 * Once the program ran, the task's base is captured too (ui-before.ts): the before picture and the changed share
 * go in the evidence and the summary, never into the verdict.
 */
export const uiCaptureGate = {
  id: "ui-capture",
  tree: "build",
  reportsNotRun: true,
  provides: "screenshot",
  requiredFor: ["ui"],
  program: { field: "ui", schema: UiCapture.Spec },
  route: "debugger",
  logs: [],
  run: captureWindow,
  missingEvidence: (_ctx, result) => (result?.ran ? undefined : "the program's window was not captured (a ui task says how to start it in its ui field)"),
} as const satisfies Gate

async function captureWindow(ctx: GateContext): Promise<GateOutcome> {
  const read = programSpec(ctx, "ui", UiCapture.Spec, "no window to capture", "how to start the program and what its window shows")
  if ("outcome" in read) return read.outcome
  const spec = read.spec
  const outDir = path.join(ctx.evidenceDir, "capture")
  const result = await UiCapture.capture(spec, { worktree: ctx.worktree, outDir, project: ctx.root, env: ctx.env, ...(ctx.signal ? { signal: ctx.signal } : {}) })
  const files = [result.evidence.screenshot, result.evidence.windows, result.evidence.log].filter((f): f is string => !!f)
  if (result.outcome === "missing-tool") {
    const summary = `the window capture cannot run here: ${result.missingTool?.tools.join(", ") ?? "a tool"} missing`
    return { ran: false, summary, failure: { gate: TOOL_MISSING, missingTool: result.missingTool?.tools[0] ?? "Xvfb", summary, message: `${ctx.label}: ${summary}. Install: ${result.missingTool?.install ?? "apt-get install -y xvfb x11-apps x11-utils"}. Then run the gates again.` } }
  }
  if (result.outcome === "failed-to-start")
    throw new GateError("ToolCrashed", `${ctx.label}: the display for the window capture could not start, so there is no verdict on the program: ${result.failures.join("; ")}. Evidence: ${files.join(", ")}`)
  if (result.outcome === "aborted") throw new GateError("Aborted", `${ctx.label}: the window capture was stopped (the run was aborted)`)
  const comparison = await UiBefore.compare(ctx, spec, result.evidence.screenshot, outDir)
  if (ctx.signal?.aborted) throw new GateError("Aborted", `${ctx.label}: the window capture was stopped (the run was aborted)`)
  const before = UiBefore.describe(comparison)
  const shown = `${result.windowsShown} window(s)${result.evidence.screenshot ? `, screenshot ${result.evidence.screenshot}` : ""}`
  if (result.ok) return { ran: true, summary: `window shown and checked: ${shown}; ${before}`, ...(result.evidence.screenshot ? { logPath: result.evidence.screenshot } : {}) }
  const summary = `window check failed: ${result.failures.join("; ")}`
  return {
    ran: true,
    summary,
    ...(result.evidence.screenshot ? { logPath: result.evidence.screenshot } : {}),
    failure: {
      summary,
      message:
        `${ctx.label}: the program's window did not pass its checks:\n` +
        result.failures.map((f) => `  ${f}`).join("\n") +
        `\nThe program: ${[result.program.command, ...result.program.args].join(" ")} (exit ${result.program.exitCode ?? "none: stopped by the capture"}).` +
        `\nEvidence: ${files.join(", ")}\nThe base, for comparison: ${before}${comparison.before ? ` (${comparison.before})` : ""}.\nLook before changing code: air_capture runs this same capture on your worktree (a failing look is the reproduction); read the screenshot and the window tree, fix the program, look again (a passing look after your last edit is the verification), commit, and report again.`,
    },
  }
}
