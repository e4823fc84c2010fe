import { chmod, mkdir, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { GateError } from "../../src/scheduler/runtime/errors.ts"
import type { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { gateFacts, gateFailureText, gateLabel } from "../../src/read/gate-words.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { firstGates, taskBranches } from "./task-branch.ts"

/** A Go module on the integration branch whose legacy package has one printf mistake nobody touched. */
const GO_MOD = "module example.com/calc\n\ngo 1.19\n"
const LEGACY_GO = `package calc

import "fmt"

// Label is old code.
func Label(n int) string {
	return fmt.Sprintf("%d", "n")
}
`

/** A Rust crate (no dependency: cargo works offline) with one denied clippy lint nobody touched. */
const CARGO_TOML = '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
const LEGACY_RS = `pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub fn legacy(x: i32) -> bool {
    x == x
}
`

const NO_CPPCHECK = { cppcheck: { enabled: false } }
type Backends = Record<string, { enabled?: boolean; binary?: string }>

/** The fake tools' directory: inside the project, which the gates' sandbox shows (its /tmp is private). */
async function fakeDir(root: string): Promise<string> {
  const dir = path.join(root, ".air", "local", "fake-tools")
  await mkdir(dir, { recursive: true })
  return dir
}

/** A tool that dies by a signal, and one that prints what no parser reads and exits 0. */
async function fakeTools(dir: string) {
  const segv = path.join(dir, "segv")
  const babble = path.join(dir, "babble")
  await writeFile(segv, "#!/bin/sh\nkill -SEGV $$\n")
  await writeFile(babble, "#!/bin/sh\necho 'all fine, probably'\nexit 0\n")
  await Promise.all([chmod(segv, 0o755), chmod(babble, 0o755)])
  return { segv, babble }
}

describe.concurrent("the Go analyser (real go vet)", () => {
  let repo: CppRepo
  let scratch: string
  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { "tools/go.mod": GO_MOD, "tools/calc/calc.go": LEGACY_GO } })
    scratch = await fakeDir(repo.root)
  })
  afterAll(async () => {
    await repo?.cleanup()
    await rm(scratch, { recursive: true, force: true })
  })
  const { task } = taskBranches(() => repo, { commit: true })
  const gates = (taskId: string, worktree: string, backends: Backends = {}) =>
    firstGates(repo.root, taskId, worktree, { requires: ["diff"], toolchain: { schemaVersion: 1, analysis: { ...NO_CPPCHECK, backends } } as Gates.RunInput["toolchain"] })

  test("a new vet finding fails with file:line and the analyser's name; the inherited one is recorded, not blamed", async () => {
    const fresh = '\n// Count is new.\nfunc Count(n int) {\n\tfmt.Printf("%s\\n", n)\n}\n'
    const { wt } = await task("go-new", (ws) => ws.write("tools/calc/calc.go", LEGACY_GO + fresh))
    const report = await gates("go-new", wt.path)
    expect(report.failedGate, report.message).toBe("go-vet")
    expect(report.message).toContain("tools/calc/calc.go:12: error: printf: fmt.Printf format %s has arg n of wrong type int")
    expect(report.message).not.toContain("calc.go:7:")
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "tools/calc/calc.go", line: 7, tool: "go-vet", id: "printf", inherited: true }))
    expect(gateLabel("en", "go-vet")).toBe("go vet")
    expect(gateFailureText("en", gateFacts("go-vet", report))).toBe("1 finding(s), 1 error(s), in tools/calc/calc.go; 1 inherited from the base")
  })

  test("a file with an old finding passes with it inherited, lines inserted above it; the pass is recorded under go-vet and reused", async () => {
    const { wt } = await task("go-old", (ws) => ws.write("tools/calc/calc.go", LEGACY_GO.replace("// Label is old code.", "// Label is old code,\n// still untouched.")))
    const report = await gates("go-old", wt.path)
    expect(report.passed, report.message).toBe(true)
    expect(report.gates.find((g) => g.gate === "go-vet")?.summary).toMatch(/^go-vet on 1 file\(s\): no new errors; recorded 1 error; 1 inherited/)
    expect(report.findings).toContainEqual(expect.objectContaining({ line: 8, tool: "go-vet", id: "printf", inherited: true }))
    const again = await gates("go-old", wt.path)
    expect(again.passed, again.message).toBe(true)
    expect(again.gates.find((g) => g.gate === "go-vet")?.summary).toMatch(/^reused: same analysed files, go-vet and config as /)
  })

  test("staticcheck fails a new bug it finds that vet does not, the legacy one inherited; its simplifications are recorded as style", async () => {
    const fresh = '\n// Spin is new.\nfunc Spin() {\n\tfor {\n\t}\n}\n\n// Has is new.\nfunc Has(s string) bool {\n\treturn strings.Index(s, "x") != -1\n}\n'
    const { wt } = await task("go-sc", (ws) => ws.write("tools/calc/calc.go", LEGACY_GO.replace('import "fmt"', 'import (\n\t"fmt"\n\t"strings"\n)') + fresh))
    const report = await gates("go-sc", wt.path)
    expect(report.failedGate, report.message).toBe("staticcheck")
    expect(report.gates.find((g) => g.gate === "go-vet")?.passed).toBe(true)
    expect(report.message).toContain("tools/calc/calc.go:15: error: SA5002: this loop will spin, using 100% CPU")
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "tools/calc/calc.go", line: 10, tool: "staticcheck", id: "SA5009", inherited: true }))
    expect(report.findings).toContainEqual(expect.objectContaining({ line: 21, tool: "staticcheck", id: "S1003", severity: "style" }))
    expect(gateLabel("en", "staticcheck")).toBe("staticcheck")
  })

  test("a type error is the file's finding (the code is wrong), not a crash", async () => {
    const { wt } = await task("go-typo", (ws) => ws.write("tools/calc/calc.go", LEGACY_GO + '\nfunc Broken() int { return "s" }\n'))
    const report = await gates("go-typo", wt.path)
    expect(report.failedGate, report.message).toBe("go-vet")
    expect(report.message).toMatch(/tools\/calc\/calc\.go:10: error: typecheck: cannot use "s"/)
  })

  test("a tool that crashes gives no verdict (ToolCrashed); one printing what nobody reads fails, never a pass", async () => {
    const { segv, babble } = await fakeTools(scratch)
    const { wt } = await task("go-bad", (ws) => ws.write("tools/calc/calc.go", LEGACY_GO + "\n// more\n"))
    const crashed = await gates("go-bad", wt.path, { "go-vet": { binary: segv } }).catch((e: unknown) => e)
    expect(crashed).toBeInstanceOf(GateError)
    expect((crashed as GateError).tag).toBe("ToolCrashed")
    expect((crashed as GateError).message).toMatch(/go-vet crashed \((killed by SIGSEGV|exit 139)\) in tools while analysing tools\/calc\/calc\.go/)
    const unread = await gates("go-bad", wt.path, { "go-vet": { binary: babble } })
    expect(unread.failedGate).toBe("go-vet")
    expect(unread.message).toContain("output AirCoding does not understand")
    expect(unread.message).toContain("all fine, probably")
  })
})

describe.concurrent("the Rust analyser (real cargo clippy)", () => {
  let repo: CppRepo
  let scratch: string
  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { "crates/calc/Cargo.toml": CARGO_TOML, "crates/calc/src/lib.rs": LEGACY_RS } })
    scratch = await fakeDir(repo.root)
  })
  afterAll(async () => {
    await repo?.cleanup()
    await rm(scratch, { recursive: true, force: true })
  })
  const { task } = taskBranches(() => repo, { commit: true })
  const gates = (taskId: string, worktree: string, backends: Backends = {}) =>
    firstGates(repo.root, taskId, worktree, { requires: ["diff"], toolchain: { schemaVersion: 1, analysis: { ...NO_CPPCHECK, backends } } as Gates.RunInput["toolchain"] })

  test("a new denied lint fails with file:line; the inherited one is recorded, not blamed; warnings are recorded, not failing", async () => {
    const fresh = "\npub fn fresh(y: i32) -> bool {\n    y != y\n}\n\npub fn wordy(z: i32) -> i32 {\n    return z;\n}\n"
    const { wt, ws } = await task("rs-new", (w) => w.write("crates/calc/src/lib.rs", LEGACY_RS + fresh))
    const report = await gates("rs-new", wt.path)
    expect(report.failedGate, report.message).toBe("clippy")
    expect(report.message).toMatch(/crates\/calc\/src\/lib\.rs:10: error: clippy::eq_op: equal expressions as operands to `!=`/)
    expect(report.message).not.toContain("lib.rs:6:")
    expect(report.findings).toContainEqual(expect.objectContaining({ file: "crates/calc/src/lib.rs", line: 6, tool: "clippy", id: "clippy::eq_op", inherited: true }))
    expect(report.findings).toContainEqual(expect.objectContaining({ line: 14, tool: "clippy", id: "clippy::needless_return", severity: "warning" }))
    expect(gateLabel("zh-CN", "clippy")).toBe("clippy")
    // The Cargo.lock clippy wrote for a crate without one is not left in the task's worktree.
    expect(await ws.git(["status", "--porcelain"])).toBe("")
  })

  test("a file with an old finding passes with it inherited; the pass is recorded under clippy and reused", async () => {
    const { wt } = await task("rs-old", (ws) => ws.write("crates/calc/src/lib.rs", "// The calculator.\n" + LEGACY_RS))
    const report = await gates("rs-old", wt.path)
    expect(report.passed, report.message).toBe(true)
    expect(report.gates.find((g) => g.gate === "clippy")?.summary).toMatch(/^clippy on 1 file\(s\): no new errors; recorded 1 error; 1 inherited/)
    const again = await gates("rs-old", wt.path)
    expect(again.gates.find((g) => g.gate === "clippy")?.summary).toMatch(/^reused: same analysed files, clippy and config as /)
  })

  test("a tool that crashes gives no verdict (ToolCrashed); one printing what nobody reads fails, never a pass", async () => {
    const { segv, babble } = await fakeTools(scratch)
    const { wt } = await task("rs-bad", (ws) => ws.write("crates/calc/src/lib.rs", LEGACY_RS + "\n// more\n"))
    const crashed = await gates("rs-bad", wt.path, { clippy: { binary: segv } }).catch((e: unknown) => e)
    expect(crashed).toBeInstanceOf(GateError)
    expect((crashed as GateError).tag).toBe("ToolCrashed")
    const unread = await gates("rs-bad", wt.path, { clippy: { binary: babble } })
    expect(unread.failedGate).toBe("clippy")
    expect(unread.message).toContain("all fine, probably")
  })
})
