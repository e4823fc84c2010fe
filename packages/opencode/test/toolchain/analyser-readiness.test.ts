import { describe, expect, test } from "vitest"
import { AnalyserReadiness } from "../../src/scheduler/runtime/gates/analysers/readiness.ts"
import { REGISTRY } from "../../src/scheduler/runtime/gates/registry.ts"

const BACKENDS = REGISTRY.flatMap((gate) => ("backend" in gate ? [gate.backend] : []))
const backend = (tool: string) => BACKENDS.find((b) => b.tool === tool)!

describe("doctor: the analysers of other languages", () => {
  test("every backend the registry runs is checked by name, with the installed tool's own version (real go and cargo clippy)", async () => {
    const checks = await AnalyserReadiness.checks(process.cwd(), BACKENDS)
    expect(checks.map((c) => c.name)).toEqual(["mypy", "pylint", "tsc", "go-vet", "staticcheck", "clippy"])
    expect(checks.find((c) => c.name === "go-vet")).toEqual(expect.objectContaining({ ok: true, detail: expect.stringMatching(/^go version go1\.\d+.*: checks the changed Go files/) }))
    expect(checks.find((c) => c.name === "clippy")).toEqual(expect.objectContaining({ ok: true, detail: expect.stringMatching(/^clippy \d+\.\d+\.\d+.*: checks the changed Rust files/) }))
  })

  test("a missing tool is said and not run; it fails the check only where the rules require it; off says off", async () => {
    const optional = await AnalyserReadiness.check(process.cwd(), backend("clippy"), { binary: "/nonexistent/cargo", args: [] })
    expect(optional).toEqual(expect.objectContaining({ ok: true, detail: expect.stringContaining("records the clippy gate as not run") }))
    const required = await AnalyserReadiness.check(process.cwd(), backend("go-vet"), { binary: "/nonexistent/go", enabled: true, args: [] })
    expect(required).toEqual(expect.objectContaining({ ok: false, fix: "apt-get install golang-go" }))
    expect(required.detail).toMatch(/^required in .*toolchain\.json but `\/nonexistent\/go` is not installed/)
    expect((await AnalyserReadiness.check(process.cwd(), backend("mypy"), { enabled: false, args: [] })).detail).toMatch(/^off/)
  })
})
