import { readdirSync, readFileSync, statSync } from "node:fs"
import path from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { buildGate } from "../../src/scheduler/runtime/gates/build.ts"
import { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { uiCaptureGate } from "../../src/scheduler/runtime/gates/ui-capture.ts"
import { UiTools } from "../../src/scheduler/runtime/verify/ui-tools.ts"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { taskBranches } from "../runtime/task-branch.ts"
import { APP_CPP, CENTRE, COLOUR_H, NEW_COLOUR, OLD_COLOUR, TITLE, pixel } from "../support/ui-project.ts"

/**
 * The before picture (issue 37, item 2): the ui-capture gate also captures the task's base, built in the project's
 * base tree, and records both pictures and the changed share. A base that does not build or shows no window is a
 * note in the evidence, never the task's failure. Real g++ with Xlib, real bwrap and Xvfb.
 */
const BUILD = "mkdir -p build && g++ -O0 -Isrc -o build/app src/app.cpp -lX11"
const spec = { command: "build/app", waitMs: 10_000, checks: { title: TITLE, pixels: [{ ...CENTRE, rgb: NEW_COLOUR }] } }

describe.skipIf(!Sandbox.check().ok || UiTools.missing(process.env.PATH) !== undefined)("the ui-capture gate's before picture", () => {
  let repo: CppRepo | undefined
  afterEach(async () => {
    await repo?.cleanup()
    repo = undefined
  })

  /** A repository whose main holds `base`, and a task that paints the window NEW_COLOUR with the drawing program. */
  async function taskOver(base: Record<string, string>) {
    repo = await createCppRepo({ empty: true, files: base })
    const { task } = taskBranches(() => repo!, { commit: true })
    const { wt } = await task("ui1", async (ws) => {
      await ws.write("src/colour.h", COLOUR_H(NEW_COLOUR))
      await ws.write("src/app.cpp", APP_CPP(true))
    })
    const gates = (attempt: number) =>
      Gates.run({
        root: repo!.root,
        worktree: wt.path,
        taskId: "ui1",
        base: "main",
        kind: "ui",
        attempt,
        evidenceDir: path.join(repo!.root, ".air", "local", "evidence", "ui1", `attempt-${attempt}`),
        requires: [],
        toolchain: { schemaVersion: 1, build: [BUILD], analysis: { cppcheck: { enabled: false } } },
        gates: [buildGate, uiCaptureGate],
        program: { ui: spec },
      })
    return { gates, base: (await repo.git(["rev-parse", "main"])).trim() }
  }
  const captureOf = (report: Gates.GateReport) => report.gates.find((g) => g.gate === "ui-capture")!
  const comparison = (report: Gates.GateReport) => JSON.parse(readFileSync(path.join(report.evidenceDir, "capture", "compare.json"), "utf8"))

  test("a base that builds: its picture is the old colour, the task's the new one, and the changed share is recorded", async () => {
    const { gates, base } = await taskOver({ "src/app.cpp": APP_CPP(true), "src/colour.h": COLOUR_H(OLD_COLOUR) })
    const report = await gates(1)
    expect(report.passed, report.message).toBe(true)
    const c = comparison(report)
    expect(c.base).toBe(base)
    expect(pixel(c.before, CENTRE.x, CENTRE.y)).toBe(OLD_COLOUR)
    expect(pixel(c.after, CENTRE.x, CENTRE.y)).toBe(NEW_COLOUR)
    // All but the white badge (40x20 of 320x240) changed.
    expect(c.changedShare).toBeCloseTo(1 - (40 * 20) / (320 * 240), 3)
    expect(captureOf(report).summary).toMatch(/before picture of the base [0-9a-f]{12}: 99\.0% of the pixels changed/)

    // The second attempt on the same base reuses the kept capture: the base is neither built nor captured again.
    const kept = path.join(repo!.root, ".air", "local", "evidence", "_baseline", base, "ui")
    const keptLog = (dir: string) => path.join(kept, dir, "build.log")
    const [dir] = readdirSync(kept)
    const before = statSync(keptLog(dir!)).mtimeMs
    const again = await gates(2)
    expect(again.passed, again.message).toBe(true)
    expect(statSync(keptLog(dir!)).mtimeMs).toBe(before)
    expect(pixel(comparison(again).before, CENTRE.x, CENTRE.y)).toBe(OLD_COLOUR)
  }, 120_000)

  test("a base that does not build: no before picture, with the reason, and the task still passes", async () => {
    const { gates } = await taskOver({ "src/app.cpp": "int main( {\n", "src/colour.h": COLOUR_H(OLD_COLOUR) })
    const report = await gates(1)
    expect(report.passed, report.message).toBe(true)
    const c = comparison(report)
    expect(c.before).toBeUndefined()
    expect(c.changedShare).toBeUndefined()
    expect(c.note).toMatch(/^no before picture: the base does not build \(`mkdir -p build && g\+\+ .*` exited with 1; see before\/build\.log\)$/)
    expect(readFileSync(path.join(report.evidenceDir, "capture", "before", "build.log"), "utf8")).toMatch(/error/)
    expect(captureOf(report).summary).toMatch(/window shown and checked: .*; no before picture: the base does not build/)
  }, 120_000)

  test("a base that shows no window: no before picture, with the capture's reason", async () => {
    const { gates } = await taskOver({ "src/app.cpp": "int main() { return 3; }\n", "src/colour.h": COLOUR_H(OLD_COLOUR) })
    const report = await gates(1)
    expect(report.passed, report.message).toBe(true)
    expect(comparison(report).note).toMatch(/^no before picture: the base shows no window: .*exited with 3/)
  }, 120_000)
})
