import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, test } from "vitest"
import { CheckReuse } from "../../src/read/check-reuse.ts"
import { RunData } from "../../src/scheduler/runtime/store/run-data.ts"
import { RunReport } from "../../src/scheduler/runtime/report/run-report.ts"
import { readStatus } from "../../src/read/status-read.ts"
import { ViewText } from "../../src/read/view-text.ts"
import { ViewRender } from "../../src/read/view-render.ts"
import { TuiView } from "../../src/tui/view.ts"
import { copyFixture } from "../cli-view/helpers.ts"
import { Readiness } from "../../src/scheduler/runtime/readiness.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"

/** What people see of reuse: the gates column of `aircoding status` and doctor's results-store line. */
describe("reuse in the views", () => {
  test("a reused gate says so with the tests and the time saved, in both languages", () => {
    const gates = [
      { gate: "build", passed: true, ms: 4000 },
      { gate: "test", passed: true, ms: 20, reused: { tests: 20, savedMs: 75_000 } },
    ]
    expect(ViewText.gatesText("en", gates)).toBe("build ✓ test ✓ reused (20 tests, 1m15s saved)")
    expect(ViewText.gatesText("zh-CN", gates)).toMatch(/复用（20 个测试，节省 1m15s）/)
    expect(ViewText.gatesText("en", [{ gate: "test", passed: false, reused: { tests: 1, savedMs: 1 } }])).not.toMatch(/reused/)
  })

  test("a reused analysis says the time saved without a test count", () => {
    const gates = [{ gate: "analysis", passed: true, ms: 5, reused: { tests: 0, savedMs: 2_000 } }]
    expect(ViewText.gatesText("en", gates)).toBe("cppcheck ✓ reused (2s saved)")
    expect(ViewText.gatesText("zh-CN", gates)).toBe("cppcheck ✓ 复用（节省 2s）")
  })

  test("a reused baseline and final check show in aircoding status, the TUI's sidebar and the end of the run, read from their records", () => {
    const fixture = copyFixture()
    try {
      const loaded = RunData.load(fixture.root)
      const commit = "0123456789abcdef0123456789abcdef01234567"
      const state = {
        ...loaded.state,
        baseline: { commandId: "baseline-1", runs: 1, status: "passed" as const, commit, buildFailed: false, failingTests: [], message: "", accepted: false, questionId: null },
        finalCheck: { status: "passed" as const, message: "integration branch builds and its tests pass: reused: same build inputs as …" },
      }
      const evidence = RunData.evidenceRoot(fixture.root)
      const reused = (tests: number, savedMs: number) => ({ commit, at: "2026-12-02T10:00:00.000Z", key: "k".repeat(64), savedMs, tests, source: "local" })
      // Before the records are there, nothing is said: a check that ran is not a reuse.
      expect(readStatus(fixture.root, state, loaded.entries).reusedChecks).toBeUndefined()
      mkdirSync(join(evidence, "_baseline", commit), { recursive: true })
      writeFileSync(join(evidence, "_baseline", commit, "baseline.json"), JSON.stringify({ commit, status: "passed", reused: reused(3, 75_000) }))
      mkdirSync(join(evidence, "_final"), { recursive: true })
      writeFileSync(join(evidence, "_final", "result.json"), JSON.stringify({ passed: true, summary: "…", evidenceDir: join(evidence, "_final"), commands: [], reused: reused(3, 80_000) }))

      const v = readStatus(fixture.root, state, loaded.entries)
      expect(v.reusedChecks).toEqual({ baseline: { tests: 3, savedMs: 75_000 }, final: { tests: 3, savedMs: 80_000 } })
      const text = ViewRender.render(v, "en", 100)
      expect(text).toMatch(/^baseline ✓ reused \(3 tests, 1m15s saved\)$/m)
      expect(text).toMatch(/^final check ✓ reused \(3 tests, 1m20s saved\)$/m)
      expect(ViewRender.render(v, "zh-CN", 100)).toMatch(/^最终检查 ✓ 复用（3 个测试，节省 1m20s）$/m)
      const sidebar = TuiView.sidebar(v, "en", 30, 60).tasks.map((line) => line.text)
      // The sidebar leaves the test count out, never the time saved (issue 39).
      expect(sidebar).toContain("final check ✓ reused (1m20s saved)")
      expect(sidebar).toContain("baseline ✓ reused (1m15s saved)")
      expect(RunReport.endText(fixture.root, state)).toMatch(/^Final check of the integration branch: passed, reused \(.*nothing ran, 1m20s saved\)\.$/m)

      // A final check the state does not know of yet (a record from an earlier run) is not this run's.
      expect(CheckReuse.read(fixture.root, { ...state, finalCheck: null })).toEqual({ baseline: { tests: 3, savedMs: 75_000 } })
    } finally {
      fixture.cleanup()
    }
  })

  test("doctor names the store, its size against the limit, and says when it is off", async () => {
    const rules = Toolchain.parse(JSON.stringify({ schemaVersion: 1, cache: { results: { remote: "redis://127.0.0.1:1", remoteMode: "read-only" } } }))
    const check = await Readiness.resultsCheck("/nonexistent-air-project", rules, {})
    expect(check.detail).toMatch(/^\.air\/local\/results: 0 result\(s\), 0\.0 MB of 1G; no lookup yet, about 0 s saved; shared at redis:\/\/127\.0\.0\.1:1 \(read-only\)$/)
    const off = await Readiness.resultsCheck("/x", Toolchain.parse(JSON.stringify({ schemaVersion: 1, cache: { results: { enabled: false } } })))
    expect(off.detail).toMatch(/^off/)
  })
})
