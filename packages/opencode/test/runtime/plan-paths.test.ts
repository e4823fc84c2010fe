import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PlanPaths } from "../../src/scheduler/runtime/plan-paths"

/**
 * A write-set path is checked against the repository on disk when the plan is written: one that leads out
 * through a symbolic link is refused there, not accepted and then blocked write by write.
 */
let base: string
let repo: string

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "air-plan-paths-"))
  repo = join(base, "repo")
  const outside = join(base, "outside")
  mkdirSync(join(repo, "src"), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(repo, "src", "calc.cpp"), "int x;\n")
  writeFileSync(join(outside, "secret.txt"), "no\n")
  symlinkSync(outside, join(repo, "vendor"))
  symlinkSync(join(repo, "src"), join(repo, "code"))
  symlinkSync(join(outside, "secret.txt"), join(repo, "notes.txt"))
  symlinkSync(join(outside, "gone", "file"), join(repo, "dangling.txt"))
  symlinkSync("src", join(repo, "rel-src"))
})

afterAll(() => rmSync(base, { recursive: true, force: true }))

describe("write-set paths against the repository", () => {
  it.each([
    ["a directory link that leads out", "vendor/lib.cpp"],
    ["a file link that leads out", "notes.txt"],
    ["a dangling link whose target is outside", "dangling.txt"],
  ])("%s is refused: %s", (_what, path) => {
    const errors = PlanPaths.writeSetProblems(repo, [{ id: "T-1", writeSet: [{ path: "src/calc.cpp", action: "modify" }, { path, action: "modify" }] }], (i) => `tasks[${i}]`)
    expect(errors).toEqual([
      {
        path: "tasks[0].writeSet[1].path",
        taskId: "T-1",
        message: expect.stringMatching(new RegExp(`write-set path "${path.replace(/\./g, "\\.")}" leads out of the repository through a symbolic link \\(it resolves to ${base}/outside`)),
        fix: expect.stringContaining("inside the repository"),
      },
    ])
  })

  it.each([
    ["a file that exists", "src/calc.cpp"],
    ["a file to create in a new directory", "src/new/dir/thing.cpp"],
    ["a link that stays inside", "code/calc.cpp"],
    ["a relative link that stays inside", "rel-src/calc.cpp"],
  ])("%s is accepted: %s", (_what, path) => {
    expect(PlanPaths.writeSetProblems(repo, [{ id: "T-1", writeSet: [{ path, action: "create" }] }], (i) => `tasks[${i}]`)).toEqual([])
  })

  it("a delta is checked where it adds tasks and where it changes a write-set, with the delta's own paths", () => {
    const errors = PlanPaths.deltaProblems(repo, {
      schemaVersion: 1,
      add: [{ id: "T-9", title: "t", kind: "code", phase: 1, deps: [], writeSet: [{ path: "vendor/a.cpp", action: "create" }], keep: [], doneWhen: "d", validation: [], adrRefs: [] }],
      modify: [{ id: "T-2", patch: { title: "only the title" } }, { id: "T-3", patch: { writeSet: [{ path: "notes.txt", action: "modify" }] } }],
      remove: [],
    } as never)
    expect(errors.map((e) => [e.path, e.taskId])).toEqual([
      ["add[0].writeSet[0].path", "T-9"],
      ["modify[1].patch.writeSet[0].path", "T-3"],
    ])
  })
})
