import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { MergeBuild } from "../../src/scheduler/runtime/integration/merge-build.ts"
import { MergeQueue } from "../../src/scheduler/runtime/integration/merge.ts"
import { CALC_CPP, createCppRepo, type CppRepo, type Workspace } from "./cpp-repo.ts"
import { taskBranches } from "./task-branch.ts"
import { callAdd, renameAdd } from "./calc-changes.ts"

/** The project's own build and tests, as toolchain.json would give them. */
const TOOLCHAIN = {
  schemaVersion: 1 as const,
  build: ["cmake -S . -B .air-build -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-on-failure"],
}

const edit = (file: string, content: string) => async (ws: Workspace) => {
  await ws.write(file, content)
  await ws.commitAll(`write ${file}`)
}

// The tests build on each other in one repository, in order.
describe("merge batches: queued tasks built and tested once together (real git, cmake, ctest)", () => {
  let repo: CppRepo
  const branches = taskBranches(() => repo, { gated: true })
  /** The task ids of each candidate the merge build was asked to build. */
  const built: string[][] = []

  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  const task = branches.task

  function mergeBatch(ids: string[]) {
    const evidenceDir = path.join(repo.root, ".air", "local", "evidence", "_merge", ids.join("+"))
    const real = MergeBuild.verifier({ evidenceDir, toolchain: TOOLCHAIN })
    return MergeQueue.mergeBatch({
      root: repo.root,
      integration: "main",
      tasks: ids.map((taskId) => ({ taskId, title: `task ${taskId}` })),
      verify: async (candidate) => {
        built.push(candidate.taskIds ?? [candidate.taskId])
        return real(candidate)
      },
    })
  }

  const firstParents = async () => (await repo.git(["rev-list", "--first-parent", "main"])).trim().split("\n")
  const tagged = async (id: string) => (await repo.git(["rev-parse", `air/done/${id}^{commit}`])).trim()

  test("three independent tasks land with one build: one merge commit over their own commits, each tagged", async () => {
    await task("A", edit("src/calc.cpp", `// calc: the library's arithmetic\n${CALC_CPP}`))
    await task("B", edit("include/extra.h", "#pragma once\ninline int three() { return 3; }\n"))
    await task("C", edit("NOTES.md", "# notes\n"))
    const before = await branches.tip()
    const parentsBefore = await firstParents()

    const result = await mergeBatch(["A", "B", "C"])

    expect(result.rejected).toBeUndefined()
    expect(result.outcomes.map((o) => [o.taskId, o.status])).toEqual([["A", "merged"], ["B", "merged"], ["C", "merged"]])
    expect(built).toEqual([["A", "B", "C"]])
    const head = await branches.tip()
    // One first-parent step: the merge commit, whose tree is the one that was built.
    expect(await firstParents()).toEqual([head, ...parentsBefore])
    const [first, second] = (await repo.git(["rev-list", "--parents", "-n", "1", head])).trim().split(" ").slice(1)
    expect(first).toBe(before)
    expect(second).toBe(await tagged("C"))
    const verdict = JSON.parse(await repo.read(path.join(".air", "local", "evidence", "_merge", "A+B+C", MergeBuild.RESULT_FILE)))
    expect(verdict).toMatchObject({ passed: true, base: before, candidate: second })
    // Each task's own commit: A on the head, B on A, C on B; each with its trailer; the merge commit says who.
    expect((await repo.git(["rev-parse", `${await tagged("A")}^`])).trim()).toBe(before)
    expect((await repo.git(["rev-parse", `${await tagged("B")}^`])).trim()).toBe(await tagged("A"))
    expect((await repo.git(["rev-parse", `${await tagged("C")}^`])).trim()).toBe(await tagged("B"))
    expect(await repo.git(["log", "-1", "--format=%B", await tagged("B")])).toContain(`${MergeQueue.TASK_TRAILER}: B`)
    expect(await repo.git(["log", "-1", "--format=%B", head])).toContain(`${MergeQueue.BATCH_TRAILER}: A B C`)
    for (const o of result.outcomes) expect(o).toMatchObject({ head })
    // The user's checkout came along.
    expect(await repo.read("NOTES.md")).toBe("# notes\n")
    expect((await repo.git(["status", "--porcelain"])).trim()).toBe("")
  })

  test("a crash after the branch moved but before the tags: asked again, each task's commit under the merge commit is found, tagged, not made twice", async () => {
    const commits = await Promise.all(["A", "B", "C"].map(tagged))
    const head = await branches.tip()
    await repo.git(["tag", "-d", "air/done/A", "air/done/B", "air/done/C"])
    const result = await mergeBatch(["A", "B", "C"])
    expect(result.outcomes.map((o) => [o.status, "commit" in o ? o.commit : null])).toEqual(commits.map((c) => ["already-merged", c]))
    expect(await Promise.all(["A", "B", "C"].map(tagged))).toEqual(commits)
    expect(await branches.tip()).toBe(head)
    expect(built).toHaveLength(1)
  })

  test("a task of a batch is reverted on its own: the others stay", async () => {
    const reverted = await MergeQueue.revert({ root: repo.root, taskId: "B", integration: "main" })
    expect(reverted.status).toBe("reverted")
    const files = (await repo.git(["ls-files"])).split("\n")
    expect(files).not.toContain("include/extra.h")
    expect(files).toContain("NOTES.md")
    expect(await repo.read("src/calc.cpp")).toContain("// calc: the library's arithmetic")
  })

  test("two tasks that pass alone but break the build together: the batch lands nothing and blames neither; each branch still merges alone", async () => {
    await task("R", renameAdd)
    await task("T", callAdd)
    const before = await branches.tip()

    const result = await mergeBatch(["R", "T"])

    expect(result.outcomes).toEqual([])
    expect(result.rejected).toMatchObject({ taskIds: ["R", "T"] })
    expect(result.rejected!.summary).toMatch(/merge build failed/)
    expect(await branches.tip()).toBe(before)
    await expect(repo.git(["rev-parse", "--verify", "--quiet", "refs/tags/air/done/R"])).rejects.toThrow()
    // No branch was rebased onto the other's unlanded change: each is on the head alone.
    expect((await repo.git(["merge-base", "--is-ancestor", "air/R", "air/T"]).then(() => true, () => false))).toBe(false)
    expect((await repo.git(["merge-base", "--is-ancestor", "air/T", "air/R"]).then(() => true, () => false))).toBe(false)

    // The halves, as the Scheduler tries them: R lands (its tree is its gated one: no build); T alone fails.
    const r = await mergeBatch(["R"])
    expect(r.outcomes).toMatchObject([{ taskId: "R", status: "merged", built: false }])
    const t = await mergeBatch(["T"])
    expect(t.rejected).toBeUndefined()
    expect(t.outcomes).toMatchObject([{ taskId: "T", status: "rejected" }])
    expect((t.outcomes[0] as { message: string }).message).toMatch(/add/)
    expect(await branches.tip()).toBe(await tagged("R"))
  })

  test("uncommitted work in the user's checkout blocks the task whose files it is in, not the batch's first; nothing moves", async () => {
    await repo.write("Q.md", "q\n")
    await repo.commitAll("Q.md")
    await task("P", edit("P.md", "p\n"))
    await task("Q", edit("Q.md", "q, changed by Q\n"))
    await repo.write("Q.md", "q, the user's own edit\n")
    const before = await branches.tip()
    const error = await mergeBatch(["P", "Q"]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MergeQueue.LocalChangesInTheWay)
    expect(error).toMatchObject({ taskId: "Q", files: ["Q.md"] })
    expect(await branches.tip()).toBe(before)
    expect(await repo.read("Q.md")).toBe("q, the user's own edit\n")
    await repo.git(["checkout", "--", "Q.md"])
  })

  test("a task whose change meets an earlier one of its batch waits for its own merge; the rest lands", async () => {
    await task("X", edit("NOTES.md", "# notes\nfrom X\n"))
    await task("Y", edit("NOTES.md", "# notes\nfrom Y\n"))
    const result = await mergeBatch(["X", "Y"])
    expect(result.outcomes.map((o) => [o.taskId, o.status])).toEqual([["Y", "deferred"], ["X", "merged"]])
    // Merged alone, after X landed, Y conflicts with the head as any merge does: the executor resolves it.
    const y = await mergeBatch(["Y"])
    expect(y.outcomes).toMatchObject([{ taskId: "Y", status: "conflict", files: ["NOTES.md"] }])
  })
})
