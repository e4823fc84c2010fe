import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { Evidence, Guard, Sessions } from "../../src/agent"

const base = realpathSync(mkdtempSync(join(tmpdir(), "air-evidence-")))
const project = join(base, "project")
const worktree = join(project, ".air", "local", "worktrees", "T7")
const evidenceDir = join(project, ".air", "local", "evidence", "T7")
mkdirSync(join(worktree, "src"), { recursive: true })
mkdirSync(join(evidenceDir, "attempt-1"), { recursive: true })
writeFileSync(join(evidenceDir, "attempt-1", "test.log"), "1 test failed")
afterAll(() => rmSync(base, { recursive: true, force: true }))

const edit = { filePath: join(worktree, "src", "a.cpp"), oldString: "a", newString: "b" }

describe("the debugger's evidence-first rule", () => {
  beforeEach(() => Sessions.clear())

  function debuggerSession(id: string) {
    Sessions.record(id, { agent: "debugger", worktree, directory: worktree, taskId: "T7", commands: ["./build/run_checks --all"] })
  }

  it("refuses edit, write and apply_patch before evidence, and says how to get it", async () => {
    debuggerSession("d1")
    for (const tool of ["edit", "write", "apply_patch"]) {
      const args = tool === "apply_patch" ? { patchText: "*** Begin Patch\n*** Update File: src/a.cpp\n*** End Patch" } : { ...edit, content: "x" }
      const d = Guard.decide("d1", tool, args)
      expect([tool, d.allow]).toEqual([tool, false])
      if (!d.allow) {
        expect(d.reason).toBe("evidence")
        expect(d.message).toMatch(/evidence/)
        expect(d.message).toContain("./build/run_checks --all")
      }
    }
    // writing through the shell is an edit too
    await expect(Guard.before({ tool: "bash", sessionID: "d1" }, { args: { command: "sed -i 's/a/b/' src/a.cpp" } })).rejects.toThrow(/evidence/)
    await expect(Guard.before({ tool: "bash", sessionID: "d1" }, { args: { command: "echo 'int a;' > src/a.cpp" } })).rejects.toThrow(/evidence/)
    // looking around is fine
    await expect(Guard.before({ tool: "read", sessionID: "d1" }, { args: { filePath: "src/a.cpp" } })).resolves.toBeUndefined()
    await expect(Guard.before({ tool: "bash", sessionID: "d1" }, { args: { command: "git log --oneline | head" } })).resolves.toBeUndefined()
    expect(Sessions.get("d1")?.evidence).toEqual([])
  })

  it("allows edits after a ctest run, and records the evidence", async () => {
    debuggerSession("d2")
    const events: Record<string, unknown>[] = []
    Sessions.configure({ onEvent: (e) => events.push(e) })
    await expect(Guard.before({ tool: "edit", sessionID: "d2" }, { args: { ...edit } })).rejects.toThrow()
    Sessions.nextTurn("d2")
    await Guard.before({ tool: "bash", sessionID: "d2", callID: "c1" }, { args: { command: "ctest --test-dir build --output-on-failure" } })
    // not evidence until it has run
    expect(Sessions.get("d2")?.evidence).toEqual([])
    await Guard.after({ tool: "bash", sessionID: "d2", callID: "c1" }, { output: "1 test failed", metadata: { exit: 8 } })
    expect(Sessions.get("d2")?.evidence).toEqual([expect.objectContaining({ kind: "test", tool: "bash", detail: "ctest --test-dir build --output-on-failure", turn: 1 })])
    expect(events.map((e) => e.type)).toEqual(["guard.refused", "guard.evidence"])
    // an edit in the same turn as the look does not count on it
    await expect(Guard.before({ tool: "edit", sessionID: "d2" }, { args: { ...edit } })).rejects.toThrow(/evidence/)
    Sessions.nextTurn("d2")
    await expect(Guard.before({ tool: "edit", sessionID: "d2" }, { args: { ...edit } })).resolves.toBeUndefined()
  })

  it("allows edits after reading the gate output", async () => {
    debuggerSession("d3")
    await Guard.before({ tool: "read", sessionID: "d3", callID: "r1" }, { args: { filePath: join(evidenceDir, "attempt-1", "test.log") } })
    await Guard.after({ tool: "read", sessionID: "d3", callID: "r1" }, { output: "<file>\n1 test failed\n</file>", metadata: {} })
    expect(Sessions.get("d3")?.evidence).toHaveLength(1)
    await expect(Guard.before({ tool: "write", sessionID: "d3" }, { args: { filePath: "src/b.cpp", content: "int b;" } })).resolves.toBeUndefined()
  })

  it("a look that did not run is no evidence: a missing log, a command not found, a timeout", async () => {
    debuggerSession("d5")
    const tries: [string, Record<string, unknown>, { output: string; metadata: Record<string, unknown> }][] = [
      ["bash", { command: "cat missing.log" }, { output: "cat: missing.log: No such file", metadata: { exit: 1 } }],
      ["bash", { command: "ctest --test-dir build" }, { output: "bash: ctest: command not found", metadata: { exit: 127 } }],
      ["bash", { command: "make -C build" }, { output: "terminated", metadata: { exit: null } }],
    ]
    let n = 0
    for (const [tool, args, result] of tries) {
      const callID = `m${n++}`
      await Guard.before({ tool, sessionID: "d5", callID }, { args: { ...args } })
      await Guard.after({ tool, sessionID: "d5", callID }, result)
    }
    // a read of a missing file fails in the engine: no after hook, nothing recorded
    await Guard.before({ tool: "read", sessionID: "d5", callID: "m9" }, { args: { filePath: join(evidenceDir, "attempt-1", "nope.log") } })
    Sessions.nextTurn("d5")
    expect(Sessions.get("d5")?.evidence).toEqual([])
    await expect(Guard.before({ tool: "edit", sessionID: "d5" }, { args: { ...edit } })).rejects.toThrow(/evidence/)
  })

  it("a refused call is no evidence", async () => {
    debuggerSession("d4")
    await expect(Guard.before({ tool: "bash", sessionID: "d4" }, { args: { command: "cd / && make" } })).rejects.toThrow()
    await expect(Guard.before({ tool: "read", sessionID: "d4" }, { args: { filePath: join(project, ".air", "local", "evidence", "T8", "x.log") } })).rejects.toThrow()
    expect(Sessions.get("d4")?.evidence).toEqual([])
    await expect(Guard.before({ tool: "edit", sessionID: "d4" }, { args: { ...edit } })).rejects.toThrow(/evidence/)
  })

  it("does not hold the executor to it", () => {
    Sessions.record("e1", { agent: "executor", worktree })
    expect(Guard.decide("e1", "edit", { ...edit }).allow).toBe(true)
  })
})

describe("what counts as evidence", () => {
  it("recognises build, test and analysis commands and log readers", () => {
    const cases: [string, string | undefined][] = [
      ["cmake --build build -j2", "build"],
      ["cd build && make 2>&1 | tail -30", "build"],
      ["VERBOSE=1 timeout 120 ninja -C build", "build"],
      ["/usr/bin/g++ -c src/a.cpp", "build"],
      ["ctest --output-on-failure", "test"],
      ["./build/tests/unit_tests --gtest_filter=A.*", "test"],
      ["cppcheck --enable=all src", "analysis"],
      ["tail -n 100 build/Testing/Temporary/LastTest.log", "log"],
      ["cat build.log", "log"],
      ["ls -la", undefined],
      ["git diff", undefined],
      ["echo make", undefined],
      // tricks: a version banner, a test of a file's existence, a look bundled with an edit
      ["cmake --version", undefined],
      ["g++ --version", undefined],
      ["cmake -E echo hi", undefined],
      ["/usr/bin/test -e a.txt", undefined],
      ["test -e build/a_test", undefined],
      ["cmake --version; echo fixed > f", undefined],
      ["ctest --test-dir build; sed -i s/a/b/ src/a.cpp", undefined],
    ]
    for (const [command, kind] of cases) expect([command, Evidence.fromBash(command)?.kind]).toEqual([command, kind])
    expect(Evidence.fromBash("npm run check", ["npm run check"])?.kind).toBe("build")
  })

  it("spots shell commands that change files", () => {
    for (const c of [
      "sed -i s/a/b/ x",
      "echo x > a.cpp",
      "cat a >> b",
      "cp a b",
      "git checkout -- a.cpp",
      "tee a.cpp",
      "perl -pi -e s/a/b/ x",
      "sort -o src/a.cpp src/a.cpp",
      "find src -name '*.o' -delete",
      "find . -name x -exec rm {} +",
      "cmake -E remove src/a.cpp",
    ])
      expect([c, Evidence.writesFiles(c)]).toEqual([c, true])
    for (const c of ["make 2>&1", "ls > /dev/null", "grep -n x a.cpp", "git log", "ctest 2>/dev/null", "cmake --build build 2>&1 | tail"])
      expect([c, Evidence.writesFiles(c)]).toEqual([c, false])
  })
})
