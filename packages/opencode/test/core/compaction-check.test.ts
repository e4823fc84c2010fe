import fc from "fast-check"
import { describe, expect, test } from "vitest"
import { CompactionCheck } from "../../src/scheduler/core/compaction-check"

/**
 * Issue 38, item 4: a compaction's summary is checked in code against the conversation it replaces. A table
 * of what each class recognises (and what it must not), then properties over generated conversations: the
 * counts add up, a faithful summary passes, one that drops a class fails, and the repair always passes.
 */

const none = { path: [], adr: [], task: [], marker: [], invariant: [] }

describe("what each class recognises", () => {
  const rows: [string, string, Partial<CompactionCheck.Items>][] = [
    ["slash paths and bare file names", "edit src/calc.cpp and include/calc.h, then CMakeLists.txt", { path: ["CMakeLists.txt", "include/calc.h", "src/calc.cpp"] }],
    ["./ and trailing slash are dropped; absolute paths stay", "see ./test/calc_test.cpp, build in .air-build/ and /usr/include/stdio.h", { path: [".air-build", "/usr/include/stdio.h", "test/calc_test.cpp"] }],
    ["prose with slashes and dotted words is no path", "and/or 3/4 e.g. v1.18.33 i.e. ok.", {}],
    ["URLs are no paths", "docs at https://example.com/a/b.html today", {}],
    ["a path at the end of a sentence", "The bug is in src/parse.cc.", { path: ["src/parse.cc"] }],
    ["ADR ids, normalised", "per ADR-3 and ADR-012 (ADR-3 again)", { adr: ["ADR-12", "ADR-3"] }],
    ["task ids", "T-1 blocks T-12 and T-2.1", { task: ["T-1", "T-12", "T-2.1"] }],
    ["markers by kind and first words", "// TODO: handle negative numbers\n# FIXME(perf) slow loop here\nHACK keep the cast", { marker: ["FIXME perf slow loop here", "HACK keep the cast", "TODO handle negative numbers"] }],
    ["invariant ids in their spellings", "by invariant 4, Invariant #13 and INV-9", { invariant: ["invariant 13", "invariant 4", "invariant 9"] }],
    ["nothing in plain prose", "The reviewer agreed; merge it.", {}],
  ]
  test.each(rows)("%s", (_name, text, expected) => {
    expect(CompactionCheck.extract(text)).toEqual({ ...none, ...expected })
  })
})

describe("the verdict", () => {
  const original = "We changed src/a.cpp, src/b.cpp, src/c.cpp and include/a.h under ADR-2 for T-3. TODO: drop the shim. Invariant 9 holds."
  const rows: [string, string, number, CompactionCheck.Verdict, CompactionCheck.KeptClass[]][] = [
    ["everything kept", original, 1, "kept", []],
    ["one path of four lost (25%) passes", "src/a.cpp src/b.cpp src/c.cpp ADR-2 T-3 TODO: drop the shim. invariant 9", 1, "kept", []],
    ["two paths of four lost (50%) is retried", "src/a.cpp src/b.cpp ADR-2 T-3 TODO: drop the shim. invariant 9", 1, "retry", ["path"]],
    ["the retry losing them again is repaired", "src/a.cpp src/b.cpp ADR-2 T-3 TODO: drop the shim. invariant 9", 2, "repair", ["path"]],
    ["the one ADR lost fails its class", "src/a.cpp src/b.cpp src/c.cpp include/a.h T-3 TODO: drop the shim. invariant 9", 1, "retry", ["adr"]],
    ["an empty summary fails every class", "", 1, "retry", ["path", "adr", "task", "marker", "invariant"]],
  ]
  test.each(rows)("%s", (_name, summary, attempt, verdict, failed) => {
    const check = CompactionCheck.compare(original, summary)
    expect(check.failed).toEqual(failed)
    expect(CompactionCheck.verdict(check, attempt)).toBe(verdict)
  })

  test("the counts the event carries", () => {
    const check = CompactionCheck.compare(original, "src/a.cpp src/b.cpp ADR-2 T-3")
    expect(CompactionCheck.counts(check)).toEqual({
      path: { kept: 2, lost: 2 },
      adr: { kept: 1, lost: 0 },
      task: { kept: 1, lost: 0 },
      marker: { kept: 0, lost: 1 },
      invariant: { kept: 0, lost: 1 },
    })
    expect(CompactionCheck.lostItems(check)).toEqual({ path: ["include/a.h", "src/c.cpp"], marker: ["TODO drop the shim"], invariant: ["invariant 9"] })
  })

  test("the retry's prompt names each lost item as written", () => {
    const text = CompactionCheck.retryContext({ path: ["src/c.cpp"], adr: ["ADR-2"] })
    expect(text).toContain("- src/c.cpp")
    expect(text).toContain("- ADR-2")
  })
})

describe("compacting before a request the estimate says will not fit", () => {
  const limits = { context: 200_000, output: 32_000 }
  const rows: [number, { context: number; output: number }, boolean][] = [
    [100_000, limits, false],
    [142_799, limits, false],
    [142_800, limits, true],
    [190_000, limits, true],
    [1_000_000, { context: 0, output: 0 }, false],
    [7_000, { context: 8_192, output: 1_024 }, true],
  ]
  test.each(rows)("%d estimated tokens, limits %o → %s", (tokens, l, compact) => {
    expect(CompactionCheck.compactBefore(tokens, l)).toBe(compact)
  })
})

// Generated conversations: items of every class embedded in filler prose.
const PATHS = ["src/calc.cpp", "include/calc.h", "test/calc_test.cpp", "CMakeLists.txt", "src/net/socket.cc", "/etc/hosts.conf"]
const ITEMS: Record<CompactionCheck.KeptClass, string[]> = {
  path: PATHS,
  adr: ["ADR-1", "ADR-2", "ADR-17"],
  task: ["T-1", "T-2", "T-40"],
  marker: ["TODO: handle overflow", "FIXME: leaks the fd", "HACK: sleep before retry"],
  invariant: ["invariant 4", "invariant 13"],
}
const FILLER = ["the", "scheduler", "merged", "it", "after", "review", "and", "the", "gates", "passed", "so", "we", "go", "on"]
const piece = fc.oneof(
  ...CompactionCheck.CLASSES.map((c) => fc.constantFrom(...ITEMS[c])),
  fc.array(fc.constantFrom(...FILLER), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(" ")),
)
// Markers run to the end of their line: each piece on its own line keeps items apart.
const conversation = fc.array(piece, { minLength: 1, maxLength: 30 }).map((ps) => ps.join("\n"))

describe("properties over generated conversations", () => {
  test("counts add up and shares lie in [0, 1]", () => {
    fc.assert(
      fc.property(conversation, conversation, (original, summary) => {
        const check = CompactionCheck.compare(original, summary)
        for (const c of CompactionCheck.CLASSES) {
          const n = check.classes[c]
          expect(n.kept + n.lost.length).toBe(n.total)
          expect(n.share).toBeGreaterThanOrEqual(0)
          expect(n.share).toBeLessThanOrEqual(1)
          expect(check.failed.includes(c)).toBe(n.share > CompactionCheck.LOSS_LIMIT)
        }
      }),
      { numRuns: 300 },
    )
  })

  test("a summary that holds the whole conversation loses nothing, with any words around it", () => {
    fc.assert(
      fc.property(conversation, conversation, (original, extra) => {
        const check = CompactionCheck.compare(original, `${extra}\n${original}\n${extra}`)
        expect(check.failed).toEqual([])
        expect(CompactionCheck.verdict(check, 1)).toBe("kept")
      }),
      { numRuns: 300 },
    )
  })

  test("dropping every line of one class fails that class", () => {
    fc.assert(
      fc.property(conversation, fc.constantFrom(...CompactionCheck.CLASSES), (original, dropped) => {
        const before = CompactionCheck.extract(original)
        fc.pre(before[dropped].length > 0)
        const summary = original
          .split("\n")
          .filter((line) => !ITEMS[dropped].includes(line))
          .join("\n")
        const check = CompactionCheck.compare(original, summary)
        expect(check.failed).toContain(dropped)
        expect(check.classes[dropped].share).toBe(1)
      }),
      { numRuns: 300 },
    )
  })

  test("the repair from the record always passes the check, whatever the summary kept", () => {
    fc.assert(
      fc.property(conversation, conversation, (original, summary) => {
        const lost = CompactionCheck.lostItems(CompactionCheck.compare(original, summary))
        const repaired = `${summary}\n\n${CompactionCheck.repairText(lost)}`
        const check = CompactionCheck.compare(original, repaired)
        expect(check.failed).toEqual([])
        for (const c of CompactionCheck.CLASSES) expect(check.classes[c].lost).toEqual([])
      }),
      { numRuns: 300 },
    )
  })
})
