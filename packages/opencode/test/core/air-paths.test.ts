import { posix } from "node:path"
import { describe, expect, test } from "vitest"
import { AirPaths } from "../../src/scheduler/core/air-paths"

/**
 * The core's AirPaths joins paths by itself (the core imports no `node:path`); the users it replaced called
 * node's `join`, so the two must agree on every root and part, odd ones included (relative, ".", "..",
 * trailing slashes, empty parts).
 */
const PIECES = ["", ".", "..", "/", "a", "b/", "/c", "./d", "e/..", "../f", "g//h", "/abs/root", "rel/root/", "x/./y"]

describe("AirPaths", () => {
  test("joins like node's posix join, for every root and parts from odd pieces", () => {
    const differ: string[] = []
    for (const root of PIECES)
      for (const a of PIECES)
        for (const b of PIECES) {
          const got = AirPaths.evidence(root, a, b)
          const want = posix.join(root, AirPaths.EVIDENCE, a, b)
          if (got !== want) differ.push(`${JSON.stringify([root, a, b])}: ${got} ≠ ${want}`)
          const state = AirPaths.stateIn(root)
          if (state !== posix.join(root, "local", "state")) differ.push(`stateIn(${root}): ${state}`)
        }
    expect(differ).toEqual([])
  })

  test("names the paths the runtime used before (a few, spelled out)", () => {
    expect(AirPaths.state("/p", "jobs.json")).toBe("/p/.air/local/state/jobs.json")
    expect(AirPaths.evidence(".", "t1")).toBe(".air/local/evidence/t1")
    expect(AirPaths.adrs("/p/", "ADR-1.md")).toBe("/p/.air/shared/plan/adr/ADR-1.md")
    expect(AirPaths.worktrees("/p", "t1")).toBe("/p/.air/local/worktrees/t1")
    expect(AirPaths.HOUSE_RULES).toBe(".air/shared/rules/house.json")
  })

  test("a name as a pattern: its dots escaped, its separators as asked", () => {
    expect(new RegExp(`^${AirPaths.pattern(AirPaths.LOCAL, "[\\\\/]+")}$`).test(".air\\\\local")).toBe(true)
    expect(new RegExp(`^${AirPaths.pattern(AirPaths.LOCAL)}$`).test("xair/local")).toBe(false)
    expect(AirPaths.partsOf(AirPaths.WORKTREES)).toEqual([".air", "local", "worktrees"])
  })
})
