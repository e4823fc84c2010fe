import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseTaskGraphFast } from "../../src/scheduler/core/fast-parse"
import { TaskGraph } from "../../src/scheduler/core/task.schema"

/** Values that are mostly right, sometimes wrong in one field: where the two parsers could drift apart. */
const maybe = <T,>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 8, arbitrary: good }, { weight: 1, arbitrary: fc.anything() }, { weight: 1, arbitrary: fc.constant(undefined) })
const entry = fc.record({ path: maybe(fc.string()), action: maybe(fc.constantFrom("create", "modify", "delete", "keep", "rename")), region: maybe(fc.string()) }, { requiredKeys: ["path", "action"] })
const task = fc.record(
  {
    id: maybe(fc.string()),
    title: maybe(fc.string()),
    kind: maybe(fc.constantFrom("code", "test", "docs", "build", "refactor", "fix", "verify", "poetry")),
    phase: maybe(fc.oneof(fc.integer({ min: -1, max: 4 }), fc.double())),
    deps: maybe(fc.array(maybe(fc.string()), { maxLength: 3 })),
    writeSet: maybe(fc.array(entry, { maxLength: 3 })),
    keep: maybe(fc.array(fc.string(), { maxLength: 2 })),
    doneWhen: maybe(fc.string()),
    validation: maybe(fc.array(fc.string(), { maxLength: 2 })),
    adrRefs: maybe(fc.array(fc.string(), { maxLength: 2 })),
    files: maybe(fc.array(fc.string(), { maxLength: 2 })),
    status: maybe(fc.constantFrom("pending", "merged", "invalidated", "gone")),
    extra: fc.anything(),
  },
  { requiredKeys: ["id", "title", "kind", "doneWhen"] },
)
const graph = fc.record({ schemaVersion: maybe(fc.constant(1)), requirement: maybe(fc.string()), tasks: maybe(fc.array(task, { maxLength: 4 })) }, { requiredKeys: ["schemaVersion", "tasks"] })

describe("the fast graph parser", () => {
  it("answers like the zod schema whenever it answers at all", () => {
    let answered = 0
    fc.assert(
      fc.property(graph, (input) => {
        const fast = parseTaskGraphFast(input)
        const slow = TaskGraph.safeParse(input)
        if (fast === null) return
        answered++
        expect(slow.success).toBe(true)
        expect(JSON.stringify(fast)).toBe(JSON.stringify(slow.data))
      }),
      { numRuns: 3000 },
    )
    expect(answered).toBeGreaterThan(50)
  })

  it("leaves an unknown key at any level to zod, which refuses it (the schema is strict)", () => {
    const ok = { id: "T-1", title: "t", kind: "code", doneWhen: "d", writeSet: [{ path: "a.cpp", action: "modify" }] }
    expect(parseTaskGraphFast({ schemaVersion: 1, tasks: [ok] })).not.toBeNull()
    for (const input of [
      { schemaVersion: 1, tasks: [ok], taks: [] },
      { schemaVersion: 1, tasks: [{ ...ok, depends_on: [] }] },
      { schemaVersion: 1, tasks: [{ ...ok, writeSet: [{ path: "a.cpp", action: "modify", regoin: "f" }] }] },
    ]) {
      expect(parseTaskGraphFast(input)).toBeNull()
      expect(TaskGraph.safeParse(input).success).toBe(false)
    }
  })
})
