import { describe, expect, test } from "vitest"
import { RunView as View } from "../../src/read/view.ts"
import { Readiness } from "../../src/scheduler/runtime/toolchain/readiness.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"

/** What people see of reuse: the gates column of `aircoding status` and doctor's results-store line. */
describe("reuse in the views", () => {
  test("a reused gate says so with the tests and the time saved, in both languages", () => {
    const gates = [
      { gate: "build", passed: true, ms: 4000 },
      { gate: "test", passed: true, ms: 20, reused: { tests: 20, savedMs: 75_000 } },
    ]
    expect(View.gatesText("en", gates)).toBe("build ✓ test ✓ reused (20 tests, 1m15s saved)")
    expect(View.gatesText("zh-CN", gates)).toMatch(/复用（20 个测试，节省 1m15s）/)
    expect(View.gatesText("en", [{ gate: "test", passed: false, reused: { tests: 1, savedMs: 1 } }])).not.toMatch(/reused/)
  })

  test("doctor names the store, its size against the limit, and says when it is off", async () => {
    const rules = Toolchain.parse(JSON.stringify({ schemaVersion: 1, cache: { results: { remote: "redis://127.0.0.1:1", remoteMode: "read-only" } } }))
    const check = await Readiness.resultsCheck("/nonexistent-air-project", rules, {})
    expect(check.detail).toMatch(/^\.air\/local\/results: 0 result\(s\), 0\.0 MB of 1G; no lookup yet, about 0 s saved; shared at redis:\/\/127\.0\.0\.1:1 \(read-only\)$/)
    const off = await Readiness.resultsCheck("/x", Toolchain.parse(JSON.stringify({ schemaVersion: 1, cache: { results: { enabled: false } } })))
    expect(off.detail).toMatch(/^off/)
  })
})
