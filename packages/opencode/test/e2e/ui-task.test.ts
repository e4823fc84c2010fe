import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { makeSandbox, type Sandbox } from "../support/sandbox"
import { leftovers } from "../verify/ui-programs"
import { APP_COMMAND, APP_CPP, CENTRE, COLOUR_H, hex, NEW_COLOUR, OLD_COLOUR, pixel, TITLE, uiProjectFiles, VERSION_H } from "../support/ui-project"
import { commitStep, passingReviewer, planningArchitect, runScenario, submittingMain, trivialProject, uiSkillRows, type RunResult } from "../support/runs"

/**
 * A ui task end to end (issue 37, items 2 and 7): a small CMake project with an Xlib program whose window is
 * painted in the colour of src/colour.h, built by the real toolchain (cmake, Ninja, g++), gated by the real gates.
 * T-1 (ui) changes the colour: its window is captured on a private Xvfb, checked in code, and its base captured
 * too (the before picture). T-2 (code), beside it, needs no capture. T-3 (ui), after both, plants a window that
 * never draws: the ui-capture gate fails it and the Debugger gets the capture's failure. The Debugger looks with
 * `air_capture` (issue 37 item 4: the same capture on its worktree) and sees the blank window, fixes the program,
 * looks again and sees it drawn, and reports the failing look as its reproduction and the passing one as its
 * verification, which the code holds against its recorded steps; its repair is captured again by the gate before it merges.
 */
/** What every ui task of this run shows: the window titled TITLE in NEW_COLOUR at its centre (not blank, by default). */
const uiSpec = { command: APP_COMMAND, checks: { title: TITLE, pixels: [{ ...CENTRE, rgb: NEW_COLOUR }] } }
/** T-3 makes the badge 80x40: a point of the big badge outside the small one must be white. */
const BIG_BADGE = { width: 80, height: 40 }
const BIG_BADGE_POINT = { x: 70, y: 40 }
const t3Spec = { command: APP_COMMAND, checks: { title: TITLE, pixels: [{ ...CENTRE, rgb: NEW_COLOUR }, { ...BIG_BADGE_POINT, rgb: "#ffffff" }] } }
const requirement = "Paint the window green, bump the version, and make the badge bigger."
const tasks = [
  { id: "T-1", title: "Paint the window green", kind: "ui", writeSet: [{ path: "src/colour.h", action: "modify" }], doneWhen: `the window is ${NEW_COLOUR}`, ui: uiSpec },
  { id: "T-2", title: "Bump the version", kind: "code", writeSet: [{ path: "src/version.h", action: "modify" }], doneWhen: "the version is 1.1" },
  { id: "T-3", title: "Make the badge bigger", kind: "ui", deps: ["T-1", "T-2"], writeSet: [{ path: "src/app.cpp", action: "modify" }], doneWhen: "the badge is 80x40", ui: t3Spec },
]

/**
 * The Reviewer of T-1 (ui) is sent its after and before screenshots as pictures (the scripted model takes images)
 * and the evidence as text; the Reviewer of T-2 (code) gets no picture. The final review sees every capture.
 */
const reviewerSteps = (expect: Record<string, unknown>) => [{ ...passingReviewer.steps[0]!, expect }, ...passingReviewer.steps.slice(1)]
const uiReviewer = {
  agent: "reviewer",
  match: "^Review task (?<id>T-1):",
  steps: reviewerSteps({
    lastUserImages: 2,
    lastUserIncludes: [
      "Program evidence (ui task",
      `the title is "${TITLE}"`,
      `the pixel at (${CENTRE.x}, ${CENTRE.y}) is ${NEW_COLOUR}`,
      "The ui-capture gate's verdict: passed: window shown and checked",
      `Window tree (mapped top-level windows): "${TITLE}" 320x240 at (0, 0)`,
      "99.0% of the pixels",
      "attempt-1/capture/screenshot.png",
      "attempt-1/capture/before/screenshot.png",
      "attempt-1/capture/windows.json",
      "attached to this message as images, in this order: 1. T-1 after",
      // The ui rows its review must hold, named as the core checks them (review-rules.ts).
      "- UI skill: Layout",
      "- UI skill: QML conventions",
    ],
  }),
}
const codeReviewer = { agent: "reviewer", match: "^Review task (?<id>T-2):", steps: reviewerSteps({ lastUserImages: 0 }) }
const finalReviewOfCaptures = {
  agent: "architect",
  match: "^Final milestone review of phase (?<phase>\\d+):",
  steps: [
    {
      tool: "air_milestone",
      args: { verdict: "pass", findings: [] },
      expect: { lastUserImages: 4, lastUserIncludes: ["Captures of the run", "- T-1 (ui): Paint the window green", "- T-3 (ui): Make the badge bigger", "T-3/attempt-2/capture/screenshot.png", "1. T-1 after"] },
    },
    { text: "Final review of phase {{phase}} passed." },
  ],
}

const scenario = {
  name: "ui-task",
  scripts: [
    submittingMain(requirement),
    planningArchitect("A ui task, a code task beside it, a ui task after both.", tasks),
    {
      agent: "executor",
      match: "^Task T-1:",
      steps: [
        // The ui task's first request carries the UI design skill (issue 40); the code task's below does not.
        { tool: "edit", args: { filePath: "src/colour.h", oldString: hex(OLD_COLOUR), newString: hex(NEW_COLOUR) }, expect: { lastUserIncludes: ["UI design skill (", "## Colour and contrast", "## Keyboard access"] } },
        commitStep("paint the window green"),
        { tool: "air_report", args: { summary: "The window is green." } },
        { text: "Reported." },
      ],
    },
    {
      agent: "executor",
      match: "^Task T-2:",
      steps: [
        { tool: "write", args: { filePath: "src/version.h", content: VERSION_H("1.1") }, expect: { lastUserExcludes: ["UI design skill"] } },
        commitStep("version 1.1"),
        { tool: "air_report", args: { summary: "Version 1.1." } },
        { text: "Reported." },
      ],
    },
    {
      // Planted: the window is mapped and never drawn (no Expose handling), so it comes up one colour.
      agent: "executor",
      match: "^Task T-3:",
      steps: [
        { tool: "write", args: { filePath: "src/app.cpp", content: APP_CPP(false) } },
        commitStep("bigger badge"),
        { tool: "air_report", args: { summary: "The badge is bigger." } },
        { text: "Reported." },
      ],
    },
    {
      agent: "debugger",
      match: "^Task T-3:",
      steps: [
        { tool: "air_capture", args: {}, expect: { lastUserIncludes: ["ui-capture", "the window stayed blank", "air_capture"] } },
        { tool: "write", args: { filePath: "src/app.cpp", content: APP_CPP(true, BIG_BADGE) } },
        { tool: "air_capture", args: {} },
        commitStep("draw the 80x40 badge on Expose"),
        {
          tool: "air_report",
          args: {
            summary: "The window never drew: the Expose handler was gone. It draws the badge on Expose again.",
            debug: {
              symptom: "the ui-capture gate: the window stayed blank",
              reproduction: { command: "air_capture", output: "FAILED: the window stayed blank" },
              rootCause: { file: "src/app.cpp", line: 22, explanation: "the event loop ignores Expose, so nothing is ever drawn over the background" },
              fix: "draw the 80x40 badge on Expose",
              verification: { command: "air_capture", output: "PASSED: the window was shown and every check passed" },
              pattern: "none",
            },
          },
        },
        { text: "Fixed." },
      ],
    },
    uiReviewer,
    codeReviewer,
    passingReviewer,
    finalReviewOfCaptures,
  ],
}

let sandbox: Sandbox
let project: string
let r: RunResult

beforeAll(async () => {
  sandbox = makeSandbox("air-ui-task-")
  project = trivialProject(sandbox, uiProjectFiles())
  const started = Date.now()
  r = await runScenario(sandbox, project, scenario, { input: requirement })
  console.log(`ui-task run: ${((Date.now() - started) / 1000).toFixed(1)} s`)
}, 600_000)

afterAll(() => sandbox?.cleanup())

const git = (args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8", env: sandbox.env })
const report = (task: string, attempt: number) => JSON.parse(readFileSync(join(project, ".air/local/evidence", task, `attempt-${attempt}`, "report.json"), "utf8"))
const gate = (rep: any, id: string) => rep.gates.find((g: any) => g.gate === id)

describe("a ui task end to end: captured, checked in code, merged; a code task beside it needs no capture", () => {
  test("the run finishes done with the three tasks merged", () => {
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    expect(r.summary.status).toBe("done")
    expect(r.summary.tasks.map((t: any) => [t.id, t.state])).toEqual([["T-1", "merged"], ["T-2", "merged"], ["T-3", "merged"]])
    expect(git(["show", "main:src/colour.h"])).toBe(COLOUR_H(NEW_COLOUR))
    expect(git(["show", "main:src/app.cpp"])).toBe(APP_CPP(true, BIG_BADGE))
  })

  test("T-1: its window was captured and checked, and its screenshot's centre is the new colour", () => {
    const rep = report("T-1", 1)
    expect(rep.passed).toBe(true)
    expect(rep.requires).toContain("screenshot")
    const capture = gate(rep, "ui-capture")
    expect(capture).toMatchObject({ passed: true, ran: true })
    const shot = join(rep.evidenceDir, "capture", "screenshot.png")
    expect(capture.logPath).toBe(shot)
    // The test's own reading of the picture, not the gate's verdict.
    expect(pixel(shot, CENTRE.x, CENTRE.y)).toBe(NEW_COLOUR)
    expect(pixel(shot, 20, 15)).toBe("#ffffff")
    const windows = JSON.parse(readFileSync(join(rep.evidenceDir, "capture", "windows.json"), "utf8"))
    expect(windows.windows.map((w: any) => w.title)).toContain(TITLE)
  })

  test("T-1: the base commit was captured too: the before picture is the old colour, the changed share recorded", () => {
    const rep = report("T-1", 1)
    const capture = gate(rep, "ui-capture")
    const before = join(rep.evidenceDir, "capture", "before", "screenshot.png")
    expect(existsSync(before), capture.summary).toBe(true)
    expect(pixel(before, CENTRE.x, CENTRE.y)).toBe(OLD_COLOUR)
    const compare = JSON.parse(readFileSync(join(rep.evidenceDir, "capture", "compare.json"), "utf8"))
    // The commit T-1 branched from, whose colour.h is the old one.
    expect(git(["show", `${compare.base}:src/colour.h`])).toBe(COLOUR_H(OLD_COLOUR))
    // Everything but the white badge (40x20 of 320x240) changed colour.
    expect(compare.changedShare).toBeCloseTo(1 - (40 * 20) / (320 * 240), 3)
    expect(capture.summary).toMatch(/before picture of the base [0-9a-f]{12}: 99\.0% of the pixels changed/)
    // The base was built for this capture in the base tree (its compiler-cache hits are recorded when ccache is on).
    console.log(`T-1 base build: ${compare.baseBuild ?? "no compiler cache"}`)
    console.log(`T-1 ui-capture gate (the capture and the base's build and capture): ${capture.ms} ms: ${capture.summary}`)
  })

  test("T-2 (code) merged with no capture: the ui-capture gate did not run and no screenshot was required", () => {
    const rep = report("T-2", 1)
    expect(rep.passed).toBe(true)
    expect(rep.requires).not.toContain("screenshot")
    expect(gate(rep, "ui-capture")).toMatchObject({ ran: false, passed: true })
    expect(existsSync(join(rep.evidenceDir, "capture"))).toBe(false)
  })

  test("T-3: the planted blank window fails the ui-capture gate, and the Debugger gets the capture's failure", () => {
    const story = r.events
      .filter((e) => e.taskId === "T-3" && ["task.dispatched", "gates.passed", "gates.failed", "merge.succeeded"].includes(e.type))
      .map((e) => (e.type === "task.dispatched" ? `${e.role}:${e.attempt}` : e.type === "gates.failed" ? `failed:${e.gate}` : e.type))
    expect(story).toEqual(["executor:1", "failed:ui-capture", "debugger:2", "gates.passed", "merge.succeeded"])
    const failed = report("T-3", 1)
    expect(failed.failedGate).toBe("ui-capture")
    expect(failed.message).toMatch(/the window stayed blank/)
    // The blank window's picture is the evidence: one colour over all of it.
    const shot = join(failed.evidenceDir, "capture", "screenshot.png")
    expect(pixel(shot, 20, 15)).toBe(NEW_COLOUR)
    // The Debugger's prompt carried the capture's failure (its first request is the task's prompt).
    const debuggerPrompt = JSON.stringify(r.modelLog.find((l) => l.agent === "debugger") ?? {})
    expect(debuggerPrompt).toMatch(/the window stayed blank/)
    // It looked before it changed code, and again after: the looks' verdicts reached it, their evidence is the task's.
    const debuggerLog = JSON.stringify(r.modelLog.filter((l) => l.agent === "debugger"))
    expect(debuggerLog).toMatch(/air_capture of task T-3: FAILED/)
    expect(debuggerLog).toMatch(/air_capture of task T-3: PASSED/)
    const looks = readdirSync(join(project, ".air/local/evidence/T-3/looks")).sort()
    expect(looks).toEqual(["1-air_capture", "2-air_capture"])
    expect(pixel(join(project, ".air/local/evidence/T-3/looks/1-air_capture/screenshot.png"), 20, 15)).toBe(NEW_COLOUR)
    expect(pixel(join(project, ".air/local/evidence/T-3/looks/2-air_capture/screenshot.png"), BIG_BADGE_POINT.x, BIG_BADGE_POINT.y)).toBe("#ffffff")
    // The code held its report against the record of its steps: the failing look before the edit, the passing one after.
    const debugFile = readdirSync(join(project, ".air/local/evidence/T-3")).find((f) => /^debug-.*\.json$/.test(f))!
    const debug = JSON.parse(readFileSync(join(project, ".air/local/evidence/T-3", debugFile), "utf8"))
    expect(debug.verdict).toEqual({ ok: true, route: "gates" })
    expect(debug.steps.map((s: any) => (s.kind === "command" ? `${s.tool ?? "bash"} → ${s.exit}` : `edit ${s.tool}`)).filter((s: string) => !s.startsWith("bash"))).toEqual([
      "air_capture → 1",
      "edit write",
      "air_capture → 0",
    ])
    // Its repair was captured again by the gate, and passed.
    const repaired = report("T-3", 2)
    expect(gate(repaired, "ui-capture")).toMatchObject({ passed: true, ran: true })
    expect(pixel(join(repaired.evidenceDir, "capture", "screenshot.png"), BIG_BADGE_POINT.x, BIG_BADGE_POINT.y)).toBe("#ffffff")
    // Its before picture is the base's small badge: the point is the background there.
    expect(pixel(join(repaired.evidenceDir, "capture", "before", "screenshot.png"), BIG_BADGE_POINT.x, BIG_BADGE_POINT.y)).toBe(NEW_COLOUR)
  })

  test("the Reviewer of the ui task got its two screenshots as pictures and the evidence as text; the code task's Reviewer none; the final review every capture", () => {
    const reviews = r.modelLog.filter((l) => l.agent === "reviewer" && l.step === 0)
    const of = (task: string) => reviews.find((l) => String(l.lastUser).startsWith(`Review task ${task}:`))
    expect(of("T-1")?.images).toEqual(["image/png", "image/png"])
    expect(of("T-2")).toBeDefined()
    expect(of("T-2")?.images).toBeUndefined()
    const final = r.modelLog.find((l) => l.agent === "architect" && String(l.lastUser).startsWith("Final milestone review"))
    expect(final?.images).toEqual(["image/png", "image/png", "image/png", "image/png"])
    // Every scripted expectation held (a failed one is an error reply in the log).
    expect(r.modelLog.filter((l) => l.failure).map((l) => l.failure)).toEqual([])
  })

  test("a ui task's review was judged against every section of the skill; the code task's against none", () => {
    const reported = (task: string) => r.events.filter((e) => e.type === "review.reported" && e.taskId === task)
    expect(reported("T-1").map((e) => e.uiSkillSections)).toEqual([uiSkillRows.map((row) => row.designRef.replace(/^UI skill: /, ""))])
    expect(reported("T-3").map((e) => e.uiSkillSections?.length)).toEqual([uiSkillRows.length])
    expect(reported("T-2").map((e) => e.uiSkillSections)).toEqual([undefined])
  })

  test("nothing a capture started is left running (every capture's processes carry AIR_UI_CAPTURE=<its evidence dir>)", async () => {
    expect(await leftovers(join(project, ".air", "local", "evidence"))).toEqual([])
  })
})
