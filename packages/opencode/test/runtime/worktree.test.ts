import { existsSync } from "node:fs"
import { readFile, rm, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"

describe("task worktrees", () => {
  let repo: CppRepo

  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("a task gets its own worktree on air/<id> from the integration tip, hidden from git status", async () => {
    const tip = (await repo.git(["rev-parse", "main"])).trim()
    const wt = await Worktrees.create(repo.root, "T-1", "main")
    expect(wt.branch).toBe("air/T-1")
    expect(wt.path).toBe(path.join(await Worktrees.repoRoot(repo.root), ".air", "local", "worktrees", "T-1"))
    expect(wt.baseCommit).toBe(tip)
    expect((await repo.at(wt.path).git(["rev-parse", "--abbrev-ref", "HEAD"])).trim()).toBe("air/T-1")
    expect(existsSync(path.join(wt.path, "src", "calc.cpp"))).toBe(true)

    const exclude = await readFile(path.join(repo.root, ".git", "info", "exclude"), "utf8")
    expect(exclude).toContain(".air/local/")
    expect(exclude).toContain(".air-build/")
    expect((await repo.git(["status", "--porcelain"])).trim()).toBe("")
    expect(await repo.read(".gitignore").catch(() => "none")).toBe("none")
  })

  test("a worktree left on a detached HEAD by a sandboxed command killed mid-way is settled: the branch takes its commit", async () => {
    const first = await Worktrees.create(repo.root, "T-DH", "main")
    const ws = repo.at(first.path)
    // What the sandbox does around a worker's command: HEAD detached at the branch tip, a commit made there.
    await ws.git(["checkout", "-q", "--detach"])
    await ws.write("src/detached.cpp", "int detached() { return 2; }\n")
    await ws.commitAll("made while detached")
    const made = (await ws.git(["rev-parse", "HEAD"])).trim()
    // The process died before the command's end re-attached HEAD; the run resumes and dispatches again.
    const again = await Worktrees.create(repo.root, "T-DH", "main")
    expect(again.path).toBe(first.path)
    expect((await ws.git(["rev-parse", "--abbrev-ref", "HEAD"])).trim()).toBe("air/T-DH")
    expect((await repo.git(["rev-parse", "air/T-DH"])).trim()).toBe(made)
    // Not merged, so not the Scheduler's to remove: the test cleans up after itself (the list test counts worktrees).
    await repo.git(["worktree", "remove", "--force", first.path])
    await repo.git(["branch", "-D", "air/T-DH"])
  })

  test("creating it again (a resume after a crash) reuses the worktree and keeps its work", async () => {
    const first = await Worktrees.create(repo.root, "T-2", "main")
    const ws = repo.at(first.path)
    await ws.write("src/extra.cpp", "int extra() { return 1; }\n")
    await ws.commitAll("extra")
    await ws.write("NOTES.txt", "uncommitted notes\n")
    const again = await Worktrees.create(repo.root, "T-2", "main")
    expect(again).toEqual(first)
    expect(await ws.read("NOTES.txt")).toBe("uncommitted notes\n")
    expect(await Worktrees.commitsAhead(repo.root, "T-2", "main")).toBe(1)
    expect(await Worktrees.changedFiles(repo.root, "T-2", "main")).toEqual(["src/extra.cpp"])
  })

  test("changes a dead session left uncommitted are saved as a patch and the worktree reset to its branch's last commit", async () => {
    const wt = await Worktrees.create(repo.root, "T-SA", "main")
    const ws = repo.at(wt.path)
    await ws.write("src/kept.cpp", "int kept() { return 1; }\n")
    const commit = await ws.commitAll("kept")
    // Killed between two edits: one file changed, one staged, one new, plus a build dir git ignores.
    await ws.write("src/calc.cpp", (await ws.read("src/calc.cpp")) + "int avg3(int a, int b, int c) { return (a + b + c) / 3; }\n")
    await ws.write("src/half.cpp", "int half() { return 0; }\n")
    await ws.git(["add", "src/half.cpp"])
    await ws.write("notes/draft.md", "draft\n")
    await ws.write(".air-build/cache.txt", "ignored\n")
    const patchFile = path.join(repo.root, ".air", "local", "evidence", "T-SA", "uncommitted-before-attempt-2.patch")

    const aside = await Worktrees.setAside(wt.path, patchFile)
    expect(aside).toEqual({ files: expect.arrayContaining(["src/calc.cpp", "src/half.cpp", "notes/draft.md"]), patch: patchFile, commit })
    expect(aside!.files).toHaveLength(3)
    expect(await Worktrees.uncommittedFiles(wt.path, { untracked: true })).toEqual([])
    expect(await ws.read("src/calc.cpp")).not.toContain("avg3")
    expect(existsSync(path.join(wt.path, "notes"))).toBe(false)
    expect(await ws.read(".air-build/cache.txt")).toBe("ignored\n")
    expect((await ws.git(["rev-parse", "--abbrev-ref", "HEAD"])).trim()).toBe("air/T-SA")
    // The patch gives the work back exactly, new files included.
    await ws.git(["apply", "--index", patchFile])
    expect(await ws.read("src/calc.cpp")).toContain("int avg3(")
    expect(await ws.read("notes/draft.md")).toBe("draft\n")
    // A clean worktree: nothing written, nothing touched.
    await ws.git(["reset", "--hard", "--quiet"])
    expect(await Worktrees.setAside(wt.path, patchFile + ".2")).toBeUndefined()
    expect(existsSync(patchFile + ".2")).toBe(false)
    await repo.git(["worktree", "remove", "--force", wt.path])
    await repo.git(["branch", "-D", "air/T-SA"])
  })

  test("a worktree whose directory was deleted is re-created on its existing branch", async () => {
    const wt = await Worktrees.create(repo.root, "T-3", "main")
    const ws = repo.at(wt.path)
    await ws.write("src/three.cpp", "int three() { return 3; }\n")
    const commit = await ws.commitAll("three")
    const { rm } = await import("node:fs/promises")
    await rm(wt.path, { recursive: true, force: true })
    const again = await Worktrees.create(repo.root, "T-3", "main")
    expect((await repo.at(again.path).git(["rev-parse", "HEAD"])).trim()).toBe(commit)
  })

  test("changedFiles, diff, commitsAhead and hasUncommittedChanges describe the task branch against its merge-base", async () => {
    const wt = await Worktrees.create(repo.root, "T-4", "main")
    const ws = repo.at(wt.path)
    expect(await Worktrees.commitsAhead(repo.root, "T-4", "main")).toBe(0)
    expect(await Worktrees.diff(repo.root, "T-4", "main")).toBe("")
    await ws.write("src/calc.cpp", (await ws.read("src/calc.cpp")) + "\nint mul(int a, int b) { return a * b; }\n")
    expect(await Worktrees.hasUncommittedChanges(wt.path)).toBe(true)
    await ws.git(["rm", "--quiet", "test/calc_test.cpp"])
    await ws.commitAll("mul, drop test")
    expect(await Worktrees.hasUncommittedChanges(wt.path)).toBe(false)
    // The integration branch moving on does not show up as the task's change.
    await repo.write("README.md", "calc\n")
    await repo.commitAll("readme on main")
    expect(await Worktrees.changes(repo.root, "T-4", "main")).toEqual([
      { path: "src/calc.cpp", status: "modified" },
      { path: "test/calc_test.cpp", status: "deleted" },
    ])
    expect(await Worktrees.commitsAhead(repo.root, "T-4", "main")).toBe(1)
    const patch = await Worktrees.diff(repo.root, "T-4", "main")
    expect(patch).toContain("+int mul(int a, int b)")
    expect(patch).not.toContain("README")
  })

  test("list shows the task worktrees, not the user's checkout", async () => {
    const listed = await Worktrees.list(repo.root)
    expect(listed.map((w) => w.taskId)).toEqual(["T-1", "T-2", "T-3", "T-4"])
    expect(listed.every((w) => w.branch === `air/${w.taskId}` && !w.missing)).toBe(true)
  })

  test("removing a worktree whose branch is not merged is refused and changes nothing", async () => {
    const error = await Worktrees.remove(repo.root, "T-2").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Worktrees.NotMerged)
    expect((error as Error).message).toContain("air/done/T-2")
    expect(existsSync(path.join(repo.root, ".air", "local", "worktrees", "T-2"))).toBe(true)
    expect((await repo.git(["branch", "--list", "air/T-2"])).trim()).not.toBe("")
  })

  test("a branch whose tip the integration branch contains is removed with its worktree", async () => {
    const wt = await Worktrees.create(repo.root, "T-5", "main")
    const ws = repo.at(wt.path)
    await ws.write("src/five.cpp", "int five() { return 5; }\n")
    await ws.commitAll("five")
    await repo.git(["merge", "--quiet", "--ff-only", "air/T-5"])
    expect(await Worktrees.remove(repo.root, "T-5", { integration: "main" })).toEqual({ removed: true })
    expect(existsSync(wt.path)).toBe(false)
    expect((await repo.git(["branch", "--list", "air/T-5"])).trim()).toBe("")
    expect(await Worktrees.remove(repo.root, "T-5", { integration: "main" })).toEqual({ removed: false })
  })

  test("a branch tagged air/done/<id> on a commit with the same files counts as merged; a later change does not", async () => {
    const wt = await Worktrees.create(repo.root, "T-6", "main")
    const ws = repo.at(wt.path)
    await ws.write("src/six.cpp", "int six() { return 6; }\n")
    await ws.commitAll("six")
    await repo.git(["tag", "air/done/T-6", "air/T-6"])
    await ws.write("src/six.cpp", "int six() { return 66; }\n")
    await ws.commitAll("six, changed after the merge")
    await expect(Worktrees.remove(repo.root, "T-6")).rejects.toBeInstanceOf(Worktrees.NotMerged)
    await ws.git(["reset", "--quiet", "--hard", "HEAD~1"])
    expect(await Worktrees.remove(repo.root, "T-6")).toEqual({ removed: true })
  })

  /** What `git worktree add` leaves when it is killed: the worktree marked "initializing", maybe mid-checkout. */
  async function interruptAdd(taskId: string, checkoutDone: boolean) {
    const admin = path.join(repo.root, ".git", "worktrees", taskId)
    await writeFile(path.join(admin, "locked"), "initializing")
    if (!checkoutDone) {
      await rm(path.join(admin, "index"), { force: true })
      await writeFile(path.join(admin, "index.lock"), "")
    }
    return admin
  }

  test("a worktree whose `git worktree add` was killed mid-checkout is made again, and then works", async () => {
    const first = await Worktrees.create(repo.root, "K-1", "main")
    await repo.at(first.path).write("notes.md", "written while git could not commit\n")
    await interruptAdd("K-1", false)
    expect((await repo.at(first.path).git(["add", "-A"]).catch((e: Error) => e.message))).toMatch(/index\.lock/)
    const again = await Worktrees.create(repo.root, "K-1", "main")
    expect(again.recovered).toMatch(/half-created .* made again/)
    const ws = repo.at(again.path)
    expect(existsSync(path.join(again.path, "notes.md"))).toBe(false)
    await ws.write("notes.md", "the real work\n")
    await ws.commitAll("notes")
    expect(await Worktrees.commitsAhead(repo.root, "K-1", "main")).toBe(1)
    expect(await Worktrees.create(repo.root, "K-1", "main")).not.toHaveProperty("recovered")
  })

  test("a worktree whose add was killed after its checkout keeps its work and loses only the mark", async () => {
    const first = await Worktrees.create(repo.root, "K-2", "main")
    const ws = repo.at(first.path)
    await ws.write("src/k2.cpp", "int k2() { return 2; }\n")
    await ws.commitAll("k2")
    const admin = await interruptAdd("K-2", true)
    const again = await Worktrees.create(repo.root, "K-2", "main")
    expect(again.recovered).toMatch(/mark was cleared and its work kept/)
    expect(existsSync(path.join(admin, "locked"))).toBe(false)
    expect(await Worktrees.commitsAhead(repo.root, "K-2", "main")).toBe(1)
  })

  test("task ids that are not plain names are refused before touching a path or a ref", async () => {
    for (const bad of ["../x", "a/b", "", "-rf", "a..b", "x".repeat(65), "T 1"]) {
      await expect(Worktrees.create(repo.root, bad, "main")).rejects.toBeInstanceOf(Worktrees.InvalidTaskId)
      await expect(Worktrees.remove(repo.root, bad)).rejects.toBeInstanceOf(Worktrees.InvalidTaskId)
    }
    expect(existsSync(path.join(repo.root, ".air", "local", "x"))).toBe(false)
  })

  test("an unknown base branch is a clear error", async () => {
    await expect(Worktrees.create(repo.root, "T-9", "no-such-branch")).rejects.toThrow(/no-such-branch does not name a commit/)
  })
})
