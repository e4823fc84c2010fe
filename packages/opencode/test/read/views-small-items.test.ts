import { describe, expect, test } from "vitest"
import { copyFixture } from "../cli-view/helpers"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { RunView } from "../../src/read/view"
import { ViewText } from "../../src/read/view-text"
import { ViewRender } from "../../src/read/view-render"
import { TerminalText } from "../../src/text/terminal-text"
import { GateProgress } from "../../src/scheduler/runtime/store/gate-progress"
import { tCount } from "../../src/text/words"
import { TuiView } from "../../src/tui/view"
import { transition } from "../../src/scheduler/core/machine"
import { initialState } from "../../src/scheduler/core/state"

/**
 * Issue 39's small items and the progress of the run's own checks: counts read right in both languages, a toast
 * keeps a path whole, a word longer than the line wraps without a false "…", and the baseline and the final check
 * show their step, count and time like a task's gates, the time counted to the view's clock.
 */
describe("words that count", () => {
  test("one test, one more line: the singular where the count is 1, in English; Chinese has one form", () => {
    expect(ViewText.reusedText("en", "test", { tests: 1, savedMs: 1_000 })).toBe("test ✓ reused (1 test, 1s saved)")
    expect(ViewText.reusedText("en", "test", { tests: 2, savedMs: 1_000 })).toBe("test ✓ reused (2 tests, 1s saved)")
    expect(ViewText.reusedText("zh-CN", "test", { tests: 1, savedMs: 1_000 })).toBe("test ✓ 复用（1 个测试，节省 1s）")
    expect(tCount("en", "tui.plan.more", 1)).toBe("… 1 more line (PgDn)")
    expect(tCount("en", "tui.plan.more", 7)).toBe("… 7 more lines (PgDn)")
    expect(tCount("zh-CN", "tui.plan.more", 1)).toBe("… 还有 1 行（PgDn）")
  })
})

describe("text broken into lines", () => {
  const path = "/tmp/air-demo-Qx81/.air/local/evidence/T-1/build.log"
  const longPath = "/tmp/air-demo-Qx81/.air/local/evidence/T-1/attempt-2/build.log"
  test("a toast's lines are broken at spaces to fit the engine's toast: a path starts a line and stays whole", () => {
    const message = `T-1 blocked: the build gate failed, see ${path} for the first error`
    const lines = TuiView.toastText(message, 80).split("\n")
    expect(lines.every((l) => TerminalText.displayWidth(l) <= 54)).toBe(true)
    expect(lines).toContain(path)
    expect(lines.join(" ")).toBe(message)
    // A narrow terminal's toast is narrower: still no line wider than it.
    expect(TuiView.toastText(message, 50).split("\n").every((l) => TerminalText.displayWidth(l) <= 38)).toBe(true)
  })

  test("a word longer than the line goes on on the next line, whole, with no ellipsis", () => {
    const lines = TerminalText.wrap(`see ${longPath}`, 24)
    expect(lines.every((l) => TerminalText.displayWidth(l) <= 24)).toBe(true)
    expect(lines[0]).toBe("see")
    expect(lines.slice(1).join("")).toBe(longPath)
    expect(lines.join("")).not.toContain("…")
  })
})

describe("the baseline and the final check show their progress like a task's gates", () => {
  test("step, count and the time since the command started, to the view's clock; nothing when no check runs", () => {
    const { root, cleanup } = copyFixture()
    try {
      const { state } = RunData.load(root)
      const file = (check: GateProgress.Check): GateProgress.File => ({
        taskId: GateProgress.CHECK_IDS[check],
        gate: "build",
        command: "cmake --build build",
        startedAt: "2026-11-29T09:00:00.000Z",
        updatedAt: "2026-11-29T09:00:01.000Z",
        done: 3,
        total: 10,
        percent: 30,
        step: "Building CXX object src/calc.cpp.o",
      })
      const progress = { _baseline: file("baseline") }
      // The tool printed nothing since 09:00:01; the view's clock is at 09:00:26: 26 s, not 1 s.
      const v = RunView.build({ state, progress, now: "2026-11-29T09:00:26.000Z" })
      expect(v.checks).toEqual([expect.objectContaining({ check: "baseline", done: 3, total: 10, elapsedMs: 26_000 })])
      expect(ViewRender.render(v, "en", 100)).toMatch(/^baseline: build \[3\/10\] 30% · 26s · Building CXX object src\/calc\.cpp\.o$/m)
      expect(ViewRender.render(v, "zh-CN", 100)).toMatch(/^基线：|^基线: /m)
      const sidebar = TuiView.sidebar(v, "en", 30, 60).tasks.map((l) => l.text)
      expect(sidebar, sidebar.join("\n")).toContain("baseline: build [3/10] 30% · 26s · Building CXX object src/…")
      const final = RunView.build({ state, progress: { _final: file("final") }, now: "2026-11-29T09:01:00.000Z" })
      expect(ViewRender.render(final, "en", 100)).toMatch(/^final check: build \[3\/10\] 30% · 1m00s · /m)
      expect(RunView.build({ state, progress: {}, now: "2026-11-29T09:01:00.000Z" }).checks).toBeUndefined()
    } finally {
      cleanup()
    }
  })
})

describe("a merge build shows its progress under the task it merges", () => {
  test("the task merging, its build's step, count and time in the status and the sidebar", () => {
    const { root, cleanup } = copyFixture()
    try {
      const entries = RunData.load(root).entries
      const n = entries.findIndex((e) => e.event.type === "merge.started") + 1
      // The state right after T-1's merge started: fold the log's first n events.
      const cut = entries.slice(0, n)
      const state = cut.reduce((s, e) => (e.refused ? s : (transition(s, e.event) as { state: typeof s }).state), initialState())
      expect(state.tasks.find((t) => t.id === "T-1")?.status).toBe("merging")
      const progress = { "T-1": { taskId: "T-1", gate: "build", command: "cmake --build build", startedAt: "2026-11-29T09:03:00.000Z", updatedAt: "2026-11-29T09:03:02.000Z", done: 7, total: 9, percent: 77, step: "Linking CXX executable calc_tests" } }
      const v = RunView.build({ state, progress, now: "2026-11-29T09:03:27.000Z" })
      expect(v.tasks.find((t) => t.id === "T-1")?.progress).toMatchObject({ done: 7, total: 9, elapsedMs: 27_000 })
      expect(ViewRender.render(v, "en", 100)).toMatch(/^  T-1: build \[7\/9\] 77% · 27s · Linking CXX executable calc_tests$/m)
    } finally {
      cleanup()
    }
  })
})
