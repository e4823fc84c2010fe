import { describe, expect, it } from "vitest"
import { WriteSetGate } from "../../src/scheduler/runtime/gates/write-set"

describe("WriteSetGate.violations", () => {
  const writeSet: WriteSetGate.Entry[] = [
    { path: "src/parser.cpp", action: "modify" },
    { path: "src/parser.h", action: "create" },
    { path: "src/old.cpp", action: "delete" },
    { path: "src/api.h", action: "keep" },
    { path: "test/parser/", action: "modify" },
  ]

  it("passes a diff inside the write-set", () => {
    expect(WriteSetGate.violations(["src/parser.cpp", "src/parser.h", "test/parser/a_test.cpp"], ["src/old.cpp"], writeSet)).toEqual([])
  })

  it("lists files outside it, kept files changed, and deletions it does not declare", () => {
    expect(
      WriteSetGate.violations(
        ["src/parser.cpp", ".air/shared/rules/toolchain.json", "src/api.h", "CMakeLists.txt"],
        ["src/parser.h", "src/main.cpp"],
        writeSet,
      ),
    ).toEqual([
      { path: ".air/shared/rules/toolchain.json", why: "outside" },
      { path: "CMakeLists.txt", why: "outside" },
      { path: "src/api.h", why: "kept" },
      { path: "src/main.cpp", why: "deleted" },
      { path: "src/parser.h", why: "deleted" },
    ])
  })

  it("an empty write-set allows no change at all (the V1 incident: src/ deleted)", () => {
    const v = WriteSetGate.violations([], ["src/a.cpp", "src/b.cpp"], [])
    expect(v.map((x) => x.why)).toEqual(["deleted", "deleted"])
    expect(WriteSetGate.message("task T-1", v)).toMatch(/src\/a\.cpp: deleted[\s\S]*consult/)
  })

  it("reads directory and pattern entries, and normalises paths", () => {
    expect(WriteSetGate.covers("src/*.cpp", "src/a.cpp")).toBe(true)
    expect(WriteSetGate.covers("test/", "./test/x/y.cpp")).toBe(true)
    expect(WriteSetGate.covers("src/a.cpp", "src/a.cppx")).toBe(false)
    expect(WriteSetGate.covers("src", "src/a.cpp")).toBe(false)
  })
})
