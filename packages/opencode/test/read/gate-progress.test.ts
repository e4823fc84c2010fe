import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { GateProgress } from "../../src/scheduler/runtime/store/gate-progress"
import { ProgressWriter } from "../../src/scheduler/runtime/gates/progress"
import { Proc } from "../../src/scheduler/runtime/process"
import { ViewText } from "../../src/read/view-text"

describe("a running gate's progress", () => {
  test("Ninja's [n/N], make's [ nn%] and CTest's n/N Test #k are read from the output; the last count wins", () => {
    expect(GateProgress.parse("[3/12] Building CXX object src/CMakeFiles/calc.dir/calc.cpp.o\n[4/12] Linking CXX static library libcalc.a")).toEqual({
      done: 4,
      total: 12,
      percent: 33,
      step: "Linking CXX static library libcalc.a",
    })
    expect(GateProgress.parse("[ 45%] Building CXX object src/parser.cpp.o\n")).toMatchObject({ done: null, percent: 45, step: "Building CXX object src/parser.cpp.o" })
    const ctest = GateProgress.parse("    Start 7: parser_nested\n7/40 Test  #7: parser_nested ....................   Passed    0.02 sec\n    Start 8: parser_slow")
    expect(ctest).toMatchObject({ done: 7, total: 40, percent: 17, step: "#8 parser_slow" })
    // A line without a count keeps the count and changes only the step.
    expect(GateProgress.parse("warning: unused variable", { done: 2, total: 5, percent: 40, step: "x" })).toEqual({ done: 2, total: 5, percent: 40, step: "warning: unused variable" })
  })

  let root: string | undefined
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true })
    root = undefined
  })

  test("a build's progress file exists while it runs, follows its output, and is gone when it ends", async () => {
    root = mkdtempSync(join(tmpdir(), "air-progress-"))
    const writer = new ProgressWriter(root, "T-1", "build", "ninja", 50)
    const script = 'for i in 1 2 3 4 5; do echo "[$i/5] Building step$i"; sleep 0.2; done'
    const seen: (number | null)[] = []
    const watch = setInterval(() => seen.push(GateProgress.readAll(root!)["T-1"]?.done ?? null), 100)
    const result = await Proc.run(script, [], { cwd: root, env: process.env, shell: true, onOutput: writer.onOutput })
    clearInterval(watch)
    writer.end()
    expect(result.ok).toBe(true)
    // The capture is unchanged by the listener.
    expect(result.output).toContain("[5/5] Building step5")
    const counts = seen.filter((n): n is number => n !== null)
    expect(counts.length).toBeGreaterThan(1)
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(4)
    expect(GateProgress.readAll(root)).toEqual({})
  })

  test("the status view shows a gating task's progress in one line that fits 80 columns", () => {
    const file: GateProgress.File = { taskId: "T-1", gate: "test", command: "ctest", startedAt: "2026-12-01T10:00:00.000Z", updatedAt: "2026-12-01T10:01:05.000Z", done: 7, total: 40, percent: 17, step: "#8 parser_slow" }
    const text = ViewText.progressText("en", { ...file, elapsedMs: 65_000 })
    expect(text).toBe("test [7/40] 17% · 1m05s · #8 parser_slow")
  })
})
