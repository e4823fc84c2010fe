import { existsSync } from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { MergeQueue } from "../../src/scheduler/runtime/integration/merge.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { CALC_CPP, createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { taskBranches } from "./task-branch.ts"

// The tests build on each other in one repository, in order.
describe("merge queue: squash, replay, rebase, conflicts", () => {
  let repo: CppRepo

  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  const { tip, task, merge } = taskBranches(() => repo)

  test("a task is squash-merged onto the integration branch as one commit, tagged air/done/<id>", async () => {
    const before = await tip()
    await task("M-1", async (ws) => {
      await ws.write("src/calc.cpp", CALC_CPP + "\nint mul(int a, int b) { return a * b; }\n")
      await ws.commitAll("mul")
      await ws.write("include/calc.h", (await ws.read("include/calc.h")) + "int mul(int a, int b);\n")
      await ws.commitAll("declare mul")
    })
    const result = await merge("M-1", "Add mul")
    expect(result).toMatchObject({ status: "merged", tag: "air/done/M-1", rebased: false })
    if (result.status !== "merged") throw new Error("unreachable")
    expect(await tip()).toBe(result.commit)
    expect((await repo.git(["rev-list", "--parents", "-n", "1", result.commit])).trim().split(" ")).toEqual([
      result.commit,
      before,
    ])
    expect(await tip("air/done/M-1^{commit}")).toBe(result.commit)
    const message = await repo.git(["log", "-1", "--format=%B", result.commit])
    expect(message).toMatch(/^Add mul\n\nwork of M-1\n\nSquash-merged from air\/M-1 \(2 commits\)\.\n\nAir-Task: M-1\n/)
    // The user's checkout of main follows, clean.
    expect(await repo.read("src/calc.cpp")).toContain("int mul(int a, int b)")
    expect(await repo.read("include/calc.h")).toContain("int mul(int a, int b);")
    expect((await repo.git(["status", "--porcelain"])).trim()).toBe("")
    // Now the branch may go.
    expect(await Worktrees.remove(repo.root, "M-1")).toEqual({ removed: true })
  })

  test("merging a merged task again is recognised, not done twice", async () => {
    const before = await tip()
    const again = await merge("M-1", "Add mul")
    expect(again).toEqual({ status: "already-merged", commit: before, tag: "air/done/M-1" })
    expect(await tip()).toBe(before)
  })

  test("a crash after the branch moved but before the tag: the replay finds the squash commit and tags it", async () => {
    await task("M-2", async (ws) => {
      await ws.write("docs/m2.md", "m2\n")
      await ws.commitAll("m2")
    })
    const first = await merge("M-2")
    if (first.status !== "merged") throw new Error(JSON.stringify(first))
    await repo.git(["tag", "-d", "air/done/M-2"])
    const replay = await merge("M-2")
    expect(replay).toEqual({ status: "already-merged", commit: first.commit, tag: "air/done/M-2" })
    expect(await tip()).toBe(first.commit)
    expect(await tip("air/done/M-2^{commit}")).toBe(first.commit)
  })

  test("two tasks adding functions at the top and at the bottom of the same file are both merged, nothing lost", async () => {
    const base = await repo.read("src/calc.cpp")
    const top = "int first_fn() { return 1; }\n"
    const bottom = "int last_fn() { return 2; }\n"
    await task("TOP", async (ws) => {
      await ws.write("src/calc.cpp", base.replace('#include "calc.h"\n', `#include "calc.h"\n\n${top}`))
      await ws.commitAll("first_fn at the top")
    })
    await task("BOTTOM", async (ws) => {
      await ws.write("src/calc.cpp", base + "\n" + bottom)
      await ws.commitAll("last_fn at the bottom")
    })
    const a = await merge("TOP")
    const b = await merge("BOTTOM")
    expect(a.status).toBe("merged")
    expect(b).toMatchObject({ status: "merged", rebased: true })
    const merged = await repo.read("src/calc.cpp")
    expect(merged).toContain(top)
    expect(merged).toContain(bottom)
    expect(merged).toContain("int mul(int a, int b)")
    expect(await repo.git(["show", "main:src/calc.cpp"])).toBe(merged)
    // Each squash commit carries only its own task's change.
    expect(await repo.git(["show", "--format=", "air/done/BOTTOM"])).not.toContain("first_fn")
  })

  test("a worktree left on a detached HEAD still merges its branch on top of everything merged before", async () => {
    const { ws } = await task("D-1", async (ws) => {
      await ws.write("docs/d1.md", "d1\n")
      await ws.commitAll("d1")
      await ws.git(["switch", "--quiet", "--detach", "HEAD~1"])
    })
    // Meanwhile someone commits on the integration branch, so the task must be rebased.
    await repo.write("docs/meanwhile.md", "meanwhile\n")
    const before = await repo.commitAll("meanwhile, on main")
    const result = await merge("D-1")
    expect(result).toMatchObject({ status: "merged", rebased: true })
    expect((await repo.git(["rev-parse", "main^"])).trim()).toBe(before)
    expect(await repo.read("docs/d1.md")).toBe("d1\n")
    expect(await repo.read("docs/meanwhile.md")).toBe("meanwhile\n")
    expect((await ws.git(["symbolic-ref", "--short", "HEAD"])).trim()).toBe("air/D-1")
  })

  test("a conflict returns the files, merges nothing, and leaves the branch and worktree as they were", async () => {
    const base = await repo.read("src/calc.cpp")
    await task("C-1", async (ws) => {
      await ws.write("src/calc.cpp", base.replace("return a + b;", "return b + a;"))
      await ws.commitAll("commutative add")
    })
    const { wt, ws } = await task("C-2", async (ws) => {
      await ws.write("src/calc.cpp", base.replace("return a + b;", "return (a + b);"))
      await ws.commitAll("parenthesised add")
    })
    expect((await merge("C-1")).status).toBe("merged")
    const main = await tip()
    const branchTip = await tip("air/C-2")
    const result = await merge("C-2")
    expect(result.status).toBe("conflict")
    if (result.status !== "conflict") throw new Error("unreachable")
    expect(result.files).toEqual(["src/calc.cpp"])
    expect(result.message).toContain("conflict in src/calc.cpp")
    expect(result.message).toContain(wt.path)
    expect(await tip()).toBe(main)
    expect(await tip("air/C-2")).toBe(branchTip)
    expect(existsSync(path.join(wt.path, ".git"))).toBe(true)
    expect((await ws.git(["status", "--porcelain"])).trim()).toBe("")
    expect(await ws.read("src/calc.cpp")).toContain("return (a + b);")
    expect(await repo.git(["tag", "--list", "air/done/C-2"])).toBe("")
    await expect(Worktrees.remove(repo.root, "C-2")).rejects.toBeInstanceOf(Worktrees.NotMerged)

    // The executor resolves it on its branch; then the merge goes through.
    await ws.git(["merge", "--quiet", "-X", "theirs", "main", "-m", "merge main"])
    await ws.write("src/calc.cpp", (await ws.read("src/calc.cpp")).replace("return b + a;", "return (b + a);"))
    await ws.commitAll("resolve: keep both intents")
    const again = await merge("C-2")
    expect(again.status).toBe("merged")
    expect(await repo.read("src/calc.cpp")).toContain("return (b + a);")
  })

  test("a revert that conflicts with later work reports the files and changes nothing", async () => {
    // M-1 added mul at the end of calc.cpp; BOTTOM later added last_fn right after it.
    const before = await tip()
    const result = await MergeQueue.revert({ root: repo.root, taskId: "M-1", integration: "main" })
    expect(result).toMatchObject({ status: "conflict", files: ["src/calc.cpp"] })
    expect(await tip()).toBe(before)
    expect((await repo.git(["status", "--porcelain"])).trim()).toBe("")
    expect(await repo.git(["tag", "--list", "air/reverted/M-1"])).toBe("")
    await expect(MergeQueue.revert({ root: repo.root, taskId: "never-merged", integration: "main" })).rejects.toThrow(
      /never merged/,
    )
  })

  test("bad input is refused before anything runs", async () => {
    await expect(merge("../x")).rejects.toBeInstanceOf(Worktrees.InvalidTaskId)
    await expect(merge("no-such-task")).rejects.toThrow(/there is no branch air\/no-such-task/)
    await expect(
      MergeQueue.merge({ root: repo.root, taskId: "M-9", integration: "--force", title: "x" }),
    ).rejects.toThrow(/not a usable integration branch/)
  })
})
