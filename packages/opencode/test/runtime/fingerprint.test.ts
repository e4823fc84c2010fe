import { describe, expect, test } from "vitest"
import { Fingerprint } from "../../src/scheduler/runtime/gates/fingerprint.ts"

const BASE = `#include "calc.h"

int legacy() {
  int a[2] = {0, 0};
  a[5] = 1;
  return a[0];
}
`.split("\n")

const finding = (line: number, over: Partial<Fingerprint.Located> = {}): Fingerprint.Located => ({
  file: "src/calc.cpp",
  line,
  id: "arrayIndexOutOfBounds",
  message: "Array 'a[2]' accessed at index 5, which is out of bounds.",
  tool: "cppcheck",
  ...over,
})

const judge = (taskLines: string[], task: Fingerprint.Located[], baseLines: string[], base: Fingerprint.Located[]) =>
  Fingerprint.inherited(
    task.map((f) => Fingerprint.keysOf(f, taskLines)),
    base.map((f) => Fingerprint.keysOf(f, baseLines)),
  )

describe("finding fingerprints", () => {
  test("messages lose their numbers and line references; source lines their whitespace", () => {
    expect(Fingerprint.normaliseMessage("Variable 'x' is reassigned a value before the old one has been used. (line 12)")).toBe(
      Fingerprint.normaliseMessage("Variable 'x' is reassigned a value before the old one has been used. (line 40)"),
    )
    expect(Fingerprint.normaliseMessage("see calc.cpp:12:3")).toBe("see calc.cpp:#")
    expect(Fingerprint.normaliseMessage("a  b\tc")).toBe("a b c")
    expect(Fingerprint.normaliseLine("   a[5]  =\t1;  ")).toBe("a[5] = 1;")
    expect(Fingerprint.normaliseLine(undefined)).toBe("")
  })

  test("the same finding at the same place is inherited", () => {
    expect(judge(BASE, [finding(5)], BASE, [finding(5)])).toEqual([true])
  })

  test("lines inserted above (right above, too) keep it inherited", () => {
    const task = ["// a new header comment", "#include <vector>", ...BASE.slice(0, 4), "  int added = 0;", ...BASE.slice(4)]
    expect(task[7]).toBe("  a[5] = 1;")
    expect(judge(task, [finding(8)], BASE, [finding(5)])).toEqual([true])
  })

  test("a function moved below another, re-indented, is still inherited", () => {
    const task = ['#include "calc.h"', "", "int other() { return 1; }", "", "int legacy() {", "    int a[2] = {0, 0};", "    a[5] = 1;", "    return a[0];", "}"]
    expect(judge(task, [finding(7)], BASE, [finding(5)])).toEqual([true])
  })

  test("a new finding of the same id on another line is new", () => {
    const task = [...BASE.slice(0, 7), "int fresh() {", "  int b[2] = {0, 0};", "  b[5] = 1;", "  return b[0];", "}"]
    const fresh = finding(10, { message: "Array 'b[2]' accessed at index 5, which is out of bounds." })
    expect(judge(task, [finding(5), fresh], BASE, [finding(5)])).toEqual([true, false])
  })

  test("a copy of the inherited line elsewhere is new: each base finding excuses one task finding", () => {
    const base = ["void f() {", "  a[5] = 1;", "}", "void g() {", "  a[5] = 1;", "}"]
    const task = [...base, "void h() {", "  a[5] = 1;", "}"]
    const result = judge(task, [finding(2), finding(5), finding(8)], base, [finding(2), finding(5)])
    expect(result.filter(Boolean)).toHaveLength(2)
    // The neighbourhood picks which one is new: h's copy.
    expect(result).toEqual([true, true, false])
  })

  test("another file, checker, message or tool is not the same finding", () => {
    expect(judge(BASE, [finding(5, { file: "src/other.cpp" })], BASE, [finding(5)])).toEqual([false])
    expect(judge(BASE, [finding(5, { id: "nullPointer" })], BASE, [finding(5)])).toEqual([false])
    expect(judge(BASE, [finding(5, { message: "Null pointer dereference: p" })], BASE, [finding(5)])).toEqual([false])
    expect(judge(BASE, [finding(5, { tool: "clang-tidy" })], BASE, [finding(5)])).toEqual([false])
  })

  test("the finding's own line changed is new, even with the same message", () => {
    const task = [...BASE]
    task[4] = "  a[5] = 2;"
    expect(judge(task, [finding(5)], BASE, [finding(5)])).toEqual([false])
  })

  test("with no base findings everything is new", () => {
    expect(judge(BASE, [finding(5), finding(5)], BASE, [])).toEqual([false, false])
  })
})
