import { describe, expect, it } from "vitest"
import { parsePlanAnswer } from "../../src/scheduler/core/answer"

describe("a person's answer to a proposed plan", () => {
  it.each(["", "  ", "yes", "Yes.", "y", "ok", "go ahead", "LGTM", "是", "好的", "确认", "同意！"])("%j confirms it", (text) => {
    expect(parsePlanAnswer(text)).toEqual({ kind: "confirm" })
  })

  it.each([
    ["change: split T-1 in two", "split T-1 in two"],
    ["修改：先写测试", "先写测试"],
    ["yes, but put the docs first", "yes, but put the docs first"],
    ["no, use CMake presets", "no, use CMake presets"],
  ])("%j asks for changes", (text, change) => {
    expect(parsePlanAnswer(text)).toEqual({ kind: "change", text: change })
  })
})
