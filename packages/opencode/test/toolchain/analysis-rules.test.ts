import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { Readiness } from "../../src/scheduler/runtime/readiness.ts"
import { Verdict } from "../../src/scheduler/runtime/gates/verdict.ts"
import type { Finding } from "../../src/scheduler/runtime/gates/schema.ts"

describe("toolchain.json: analysis.failOn and analysis.clangTidy", () => {
  test("failOn is error by default; warning is accepted; anything else is refused naming the key", () => {
    const rules = Toolchain.parse(JSON.stringify({ schemaVersion: 1 }))
    expect(rules.analysis.failOn).toBe("error")
    expect(rules.analysis.clangTidy).toEqual({ binary: "clang-tidy", args: [] })
    expect(Toolchain.parse(JSON.stringify({ schemaVersion: 1, analysis: { failOn: "warning" } })).analysis.failOn).toBe("warning")
    expect(() => Toolchain.parse(JSON.stringify({ schemaVersion: 1, analysis: { failOn: "style" } }))).toThrow(/analysis\.failOn/)
  })

  test("a misspelt key gets the did-you-mean the other keys have", () => {
    expect(() => Toolchain.parse(JSON.stringify({ schemaVersion: 1, analysis: { failon: "warning" } }))).toThrow(/analysis\.failon.*did you mean failOn/)
    expect(() => Toolchain.parse(JSON.stringify({ schemaVersion: 1, analysis: { clang_tidy: {} } }))).toThrow(/did you mean clangTidy/)
    expect(() => Toolchain.parse(JSON.stringify({ schemaVersion: 1, analysis: { clangTidy: { enable: true } } }))).toThrow(/analysis\.clangTidy\.enable.*did you mean enabled/)
  })

  test("the verdict: the task's own findings at or above failOn fail; inherited ones never", () => {
    const f = (severity: Finding["severity"], inherited?: boolean): Finding => ({ file: "a.cpp", line: 1, severity, id: "x", message: "m", ...(inherited ? { inherited } : {}) })
    const findings = [f("error"), f("warning"), f("style"), f("error", true), f("warning", true)]
    expect(Verdict.failing(findings, "error")).toEqual([f("error")])
    expect(Verdict.failing(findings, "warning")).toEqual([f("error"), f("warning")])
  })
})

describe("doctor: the clang-tidy check", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "air-tidy-ready-"))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  const rules = (over: Partial<Toolchain.ClangTidyRules> = {}): Toolchain.ClangTidyRules => ({ binary: "clang-tidy", args: [], ...over })

  test("no .clang-tidy and not required: nothing to say", () => {
    expect(Readiness.clangTidyCheck(dir, rules())).toBeUndefined()
  })

  test("a .clang-tidy with clang-tidy missing is not ready and says the gate is not run; installed, it is ready", async () => {
    await writeFile(path.join(dir, ".clang-tidy"), "Checks: '-*,modernize-use-nullptr'\n")
    const missing = Readiness.clangTidyCheck(dir, rules({ binary: "/nonexistent/clang-tidy" }))
    expect(missing).toEqual(expect.objectContaining({ ok: false, fix: expect.stringContaining("apt-get install clang-tidy") }))
    expect(missing?.detail).toMatch(/recorded as not run/)
    expect(Readiness.clangTidyCheck(dir, rules({ binary: "/nonexistent/clang-tidy", enabled: true }))?.detail).toMatch(/required/)
    expect(Readiness.clangTidyCheck(dir, rules({ binary: process.execPath }))).toEqual(expect.objectContaining({ ok: true }))
    expect(Readiness.clangTidyCheck(dir, rules({ enabled: false }))).toEqual(expect.objectContaining({ ok: true, detail: expect.stringMatching(/^off/) }))
  })
})
