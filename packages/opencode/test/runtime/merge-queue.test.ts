import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { MergeQueue } from "../../src/scheduler/runtime/integration/merge.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { taskBranches } from "./task-branch.ts"

// The tests build on each other in one repository, in order.
describe("merge queue: the user's checkout, concurrent requests, the lock, revert", () => {
  let repo: CppRepo

  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  const { tip, task, merge } = taskBranches(() => repo)

  test("the user's uncommitted changes survive a merge; a merge that would overwrite them is refused", async () => {
    await repo.write("README.md", "local notes, not committed\n")
    await task("U-1", async (ws) => {
      await ws.write("docs/u1.md", "u1\n")
      await ws.commitAll("u1")
    })
    expect((await merge("U-1")).status).toBe("merged")
    expect(await repo.read("README.md")).toBe("local notes, not committed\n")
    expect(await repo.read("docs/u1.md")).toBe("u1\n")

    await task("U-2", async (ws) => {
      await ws.write("README.md", "calc, by U-2\n")
      await ws.commitAll("readme")
    })
    const main = await tip()
    const error = await merge("U-2").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MergeQueue.LocalChangesInTheWay)
    expect((error as MergeQueue.MergeError).tag).toBe("LocalChangesInTheWay")
    expect((error as MergeQueue.LocalChangesInTheWay).files).toEqual(["README.md"])
    expect(await tip()).toBe(main)
    expect(await repo.read("README.md")).toBe("local notes, not committed\n")
    expect(await repo.git(["tag", "--list", "air/done/U-2"])).toBe("")

    await repo.git(["rm", "--quiet", "--cached", "README.md"]).catch(() => undefined)
    const { rm } = await import("node:fs/promises")
    await rm(path.join(repo.root, "README.md"))
    expect((await merge("U-2")).status).toBe("merged")
    expect(await repo.read("README.md")).toBe("calc, by U-2\n")
  })

  test("merges requested at the same time go one after the other, each on the previous one's commit", async () => {
    for (const id of ["P-1", "P-2", "P-3"]) {
      await task(id, async (ws) => {
        await ws.write(`docs/${id}.md`, `${id}\n`)
        await ws.commitAll(id)
      })
    }
    const before = await tip()
    const results = await Promise.all(["P-1", "P-2", "P-3"].map((id) => merge(id)))
    expect(results.map((r) => r.status)).toEqual(["merged", "merged", "merged"])
    const chain = (await repo.git(["rev-list", "--first-parent", `${before}..main`])).trim().split("\n").reverse()
    expect(chain).toEqual(results.map((r) => (r.status === "merged" ? r.commit : "")))
    for (const id of ["P-1", "P-2", "P-3"]) expect(await repo.read(`docs/${id}.md`)).toBe(`${id}\n`)
  })

  test("a lock left by a dead process is taken over; a live holder makes the merge wait, then time out", async () => {
    const lock = path.join(repo.root, MergeQueue.LOCK_PATH)
    await mkdir(path.dirname(lock), { recursive: true })
    const dead = await deadPid()
    const { hostname } = await import("node:os")
    await writeFile(lock, JSON.stringify({ pid: dead, host: hostname(), what: "old merge", since: "then" }))
    await task("L-1", async (ws) => {
      await ws.write("docs/l1.md", "l1\n")
      await ws.commitAll("l1")
    })
    expect((await merge("L-1")).status).toBe("merged")
    expect(existsSync(lock)).toBe(false)

    await writeFile(lock, JSON.stringify({ pid: process.ppid, host: hostname(), what: "someone's merge", since: "now" }))
    await task("L-2", async (ws) => {
      await ws.write("docs/l2.md", "l2\n")
      await ws.commitAll("l2")
    })
    const main = await tip()
    const error = await MergeQueue.merge({
      root: repo.root,
      taskId: "L-2",
      integration: "main",
      title: "l2",
      lockTimeoutMs: 300,
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MergeQueue.LockTimeout)
    expect((error as MergeQueue.MergeError).tag).toBe("LockTimeout")
    expect((error as Error).message).toContain("task L-2: not merged: the merge lock")
    expect((error as Error).message).toContain(`process ${process.ppid}`)
    expect(await tip()).toBe(main)
    const { rm } = await import("node:fs/promises")
    await rm(lock)
    expect((await merge("L-2")).status).toBe("merged")
  })

  test("an index.lock left in the user's checkout: the merge is refused as IndexLocked, nothing moves, and it merges once cleared", async () => {
    await task("I-1", async (ws) => {
      await ws.write("docs/i1.md", "i1\n")
      await ws.commitAll("i1")
    })
    const indexLock = path.join(repo.root, ".git", "index.lock")
    await writeFile(indexLock, "")
    const main = await tip()
    const error = await merge("I-1").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MergeQueue.MergeError)
    expect((error as MergeQueue.MergeError).tag).toBe("IndexLocked")
    expect((error as Error).message).toContain("index.lock exists")
    expect(await tip()).toBe(main)
    expect(await repo.git(["tag", "--list", "air/done/I-1"])).toBe("")
    const { rm } = await import("node:fs/promises")
    await rm(indexLock)
    expect((await merge("I-1")).status).toBe("merged")
    expect(await repo.read("docs/i1.md")).toBe("i1\n")
  })

  test("revert undoes a merged task with a new commit and tags it air/reverted/<id>, once", async () => {
    await task("R-1", async (ws) => {
      await ws.write("src/r1.cpp", '#include "calc.h"\n\nint twice(int a) { return add(a, a); }\n')
      await ws.write("CMakeLists.txt", (await ws.read("CMakeLists.txt")).replace("src/calc.cpp)", "src/calc.cpp src/r1.cpp)"))
      await ws.commitAll("twice")
    })
    expect((await merge("R-1")).status).toBe("merged")
    await task("R-2", async (ws) => {
      await ws.write("docs/r2.md", "after R-1\n")
      await ws.commitAll("r2")
    })
    expect((await merge("R-2")).status).toBe("merged")

    const before = await tip()
    const result = await MergeQueue.revert({ root: repo.root, taskId: "R-1", integration: "main" })
    expect(result).toMatchObject({ status: "reverted", tag: "air/reverted/R-1" })
    if (result.status !== "reverted") throw new Error("unreachable")
    expect(await tip()).toBe(result.commit)
    expect((await repo.git(["rev-parse", `${result.commit}^`])).trim()).toBe(before)
    expect(existsSync(path.join(repo.root, "src", "r1.cpp"))).toBe(false)
    expect(await repo.read("CMakeLists.txt")).not.toContain("r1.cpp")
    expect(await repo.read("docs/r2.md")).toBe("after R-1\n")
    expect((await repo.git(["status", "--porcelain"])).trim()).toBe("")
    expect(await repo.git(["log", "-1", "--format=%B"])).toContain("Air-Reverts: R-1")
    expect(await MergeQueue.revert({ root: repo.root, taskId: "R-1", integration: "main" })).toEqual({
      status: "already-reverted",
      commit: result.commit,
      tag: "air/reverted/R-1",
    })
    expect((await repo.git(["worktree", "list"])).includes("_revert-")).toBe(false)
  })

  test("a reverted task done again lands as round 2 under its own tag and trailer, and round 2 reverts on its own", async () => {
    // R-1 was merged and reverted above; its worktree and branch went with the merge.
    await Worktrees.remove(repo.root, "R-1", { integration: "main" })
    await task("R-1", async (ws) => {
      expect(await ws.read("docs/r2.md")).toBe("after R-1\n")
      await ws.write("docs/r1.md", "R-1, second round\n")
      await ws.commitAll("r1 again")
    })
    const first = (await repo.git(["rev-parse", "air/done/R-1^{commit}"])).trim()
    const redo = await MergeQueue.merge({ root: repo.root, taskId: "R-1", round: 2, integration: "main", title: "R-1 again" })
    expect(redo).toMatchObject({ status: "merged", tag: "air/done/R-1+2" })
    if (redo.status !== "merged") throw new Error(JSON.stringify(redo))
    expect(await repo.git(["log", "-1", "--format=%B", redo.commit])).toMatch(/\nAir-Task: R-1\+2\n/)
    expect((await repo.git(["rev-parse", "air/done/R-1^{commit}"])).trim()).toBe(first)
    expect(await repo.read("docs/r1.md")).toBe("R-1, second round\n")
    // The round 2 merge, replayed after a crash that lost its tag, finds its own squash commit, not round 1's.
    await repo.git(["tag", "-d", "air/done/R-1+2"])
    expect(await MergeQueue.merge({ root: repo.root, taskId: "R-1", round: 2, integration: "main", title: "R-1 again" })).toEqual({ status: "already-merged", commit: redo.commit, tag: "air/done/R-1+2" })
    await Worktrees.remove(repo.root, "R-1", { integration: "main", round: 2 })

    const undo = await MergeQueue.revert({ root: repo.root, taskId: "R-1", round: 2, integration: "main" })
    expect(undo).toMatchObject({ status: "reverted", tag: "air/reverted/R-1+2" })
    expect(existsSync(path.join(repo.root, "docs", "r1.md"))).toBe(false)
    expect(await repo.git(["log", "-1", "--format=%B"])).toContain("Air-Reverts: R-1+2")
    expect((await MergeQueue.revert({ root: repo.root, taskId: "R-1", round: 2, integration: "main" })).status).toBe("already-reverted")
    expect((await repo.git(["tag", "--list", "air/*R-1*"])).trim().split("\n").sort()).toEqual(["air/done/R-1", "air/done/R-1+2", "air/reverted/R-1", "air/reverted/R-1+2"])
  })
})

function deadPid(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", () => resolve(child.pid!))
  })
}
