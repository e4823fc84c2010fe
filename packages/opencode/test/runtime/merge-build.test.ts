import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { MergeBuild } from "../../src/scheduler/runtime/integration/merge-build.ts"
import { MergeQueue } from "../../src/scheduler/runtime/integration/merge.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { taskBranches } from "./task-branch.ts"
import { callAdd, renameAdd } from "./calc-changes.ts"
import { createCppRepo, type CppRepo, type Workspace } from "./cpp-repo.ts"

/** The project's own build and tests, as toolchain.json would give them. */
const TOOLCHAIN = {
  schemaVersion: 1 as const,
  build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build"],
  test: ["ctest --test-dir .air-build --output-on-failure"],
}

// The tests build on each other in one repository, in order.
describe("merge build: what lands is what was built (real git, cmake, ctest)", () => {
  let repo: CppRepo
  const branches = taskBranches(() => repo, { gated: true })
  const builds: string[] = []

  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  const tip = async () => (await repo.git(["rev-parse", "main"])).trim()
  const evidenceDir = (taskId: string, n: number) => path.join(repo.root, ".air", "local", "evidence", taskId, `merge-${n}`)

  /** A task branch from the tip, its work committed, and its gates recorded as passed on it. */
  const task = async (taskId: string, work: (ws: Workspace) => Promise<void>) => (await branches.task(taskId, work)).ws

  /** The merge queue with the real merge build, counting the candidates it builds. */
  function merge(taskId: string, n = 1, verify?: MergeBuild.Verify) {
    const real = MergeBuild.verifier({ evidenceDir: evidenceDir(taskId, n), toolchain: TOOLCHAIN })
    return MergeQueue.merge({
      root: repo.root,
      taskId,
      integration: "main",
      title: `task ${taskId}`,
      verify: async (candidate) => {
        builds.push(taskId)
        return (verify ?? real)(candidate)
      },
    })
  }

  async function builds_(at: string): Promise<boolean> {
    const verdict = await MergeBuild.verify(
      { top: await Worktrees.repoRoot(repo.root), taskId: "check", integration: "main", base: `${at}^`, commit: at },
      { evidenceDir: path.join(repo.root, ".air", "local", "evidence", "_check", at.slice(0, 12)), toolchain: TOOLCHAIN },
    )
    return verdict.passed
  }

  test("a task whose base is still the head lands without a merge build: its gates built that very tree", async () => {
    await task("R", renameAdd)
    const caller = await task("C", callAdd) // branched from the same head as R, before R lands
    expect(caller).toBeDefined()
    const result = await merge("R")
    expect(result).toMatchObject({ status: "merged", rebased: false, built: false })
    expect(builds).toEqual([])
    // Its record is gone with the landing.
    expect(await repo.git(["for-each-ref", MergeBuild.GATED_REF])).not.toContain("/R\n")
  })

  test("two tasks that pass alone but break the build together: the second is rejected and nothing moves", async () => {
    const head = await tip()
    const result = await merge("C")
    expect(builds).toEqual(["C"])
    expect(result.status).toBe("rejected")
    if (result.status !== "rejected") return
    expect(await tip()).toBe(head)
    expect(await repo.git(["tag", "--list", "air/done/*"])).not.toMatch(/air\/done\/C/)
    // The Debugger's evidence: the first compiler error, the build log, the combined diff.
    expect(result.message).toMatch(/merge build failed/)
    expect(result.message).toMatch(/twice\.cpp.*error|error.*add/s)
    expect(result.evidencePath).toBe(path.join(evidenceDir("C", 1), MergeBuild.BUILD_LOG))
    expect(await readFile(result.evidencePath, "utf8")).toMatch(/.add. was not declared/)
    const diff = await readFile(path.join(evidenceDir("C", 1), MergeBuild.DIFF_FILE), "utf8")
    expect(diff).toContain("src/twice.cpp")
    expect(diff).toContain("return add(a, a);")
    // The branch stays rebased on the head: the repair starts from the combined tree.
    expect(await repo.git(["merge-base", "--is-ancestor", head, "air/C"]).then(() => true)).toBe(true)
    // The merge worktree is the Scheduler's, not the user's checkout.
    expect(existsSync(MergeBuild.worktreeOf(repo.root))).toBe(true)
    expect((await repo.git(["status", "--porcelain"])).trim()).toBe("")
  })

  test("the repair, gated on the rebased branch, lands without another build", async () => {
    const ws = repo.at(Worktrees.pathFor(repo.root, "C"))
    await ws.write("src/twice.cpp", '#include "calc.h"\n\nint twice(int a) {\n  return plus(a, a);\n}\n')
    await ws.commitAll("call plus()")
    await MergeBuild.recordGated(repo.root, "C")
    const result = await merge("C", 2)
    expect(result).toMatchObject({ status: "merged", rebased: false, built: false })
    expect(builds).toEqual(["C"])
  })

  test("a rebased candidate that builds and passes lands, built", async () => {
    const a = await task("D", async (ws) => {
      await ws.write("docs/d.md", "d\n")
      await ws.commitAll("docs")
    })
    await task("E", async (ws) => {
      await ws.write("docs/e.md", "e\n")
      await ws.commitAll("docs")
    })
    expect(a).toBeDefined()
    expect(await merge("D")).toMatchObject({ status: "merged", built: false })
    const result = await merge("E")
    expect(result).toMatchObject({ status: "merged", rebased: true, built: true })
    expect(builds).toEqual(["C", "E"])
    expect(await readFile(path.join(evidenceDir("E", 1), MergeBuild.TEST_LOG), "utf8")).toMatch(/100% tests passed/)
  })

  test("a merge build cut short (a restart) is redone: the branch already rebased is still built, and lands once", async () => {
    await task("F", async (ws) => {
      await ws.write("docs/f.md", "f\n")
      await ws.commitAll("docs")
    })
    await task("G", async (ws) => {
      await ws.write("docs/g.md", "g\n")
      await ws.commitAll("docs")
    })
    await merge("F")
    const head = await tip()
    // The process dies during G's build: here, the build's runner fails after the rebase.
    const cut = await merge("G", 1, async () => {
      throw new Error("killed")
    }).catch((e: unknown) => e)
    expect(cut).toBeInstanceOf(MergeQueue.MergeError)
    expect(await tip()).toBe(head)
    expect(await repo.git(["merge-base", "--is-ancestor", head, "air/G"]).then(() => true)).toBe(true)
    // Redone after the restart: not rebased now, but its tree is not the gated one, so it is built.
    const redone = await merge("G", 1)
    expect(redone).toMatchObject({ status: "merged", rebased: false, built: true })
    expect((await merge("G", 1)).status).toBe("already-merged")
    const landed = (await repo.git(["log", "--format=%H", "--grep=^Air-Task: G$", "main"])).trim().split("\n")
    expect(landed).toHaveLength(1)
  })

  test("a candidate that built but could not land (local changes in the way) is not built again when the merge is redone", async () => {
    await task("H", async (ws) => {
      await ws.write("docs/h.md", "h\n")
      await ws.commitAll("docs")
    })
    await task("I", async (ws) => {
      await ws.write("docs/i.md", "i\n")
      await ws.commitAll("docs")
    })
    await merge("H")
    await repo.write("docs/i.md", "the user's own, not committed\n")
    const before = builds.length
    expect(await merge("I").catch((e: unknown) => e)).toBeInstanceOf(MergeQueue.LocalChangesInTheWay)
    expect(builds.length).toBe(before + 1)
    const { rm } = await import("node:fs/promises")
    await rm(path.join(repo.root, "docs/i.md"))
    expect(await merge("I", 2)).toMatchObject({ status: "merged", rebased: false, built: false })
    expect(builds.length).toBe(before + 1)
  })

  test("a build tool that is not installed is no verdict on the task: the merge is refused for a person, nothing moves", async () => {
    await task("J", async (ws) => {
      await ws.write("docs/j.md", "j\n")
      await ws.commitAll("docs")
    })
    await task("K", async (ws) => {
      await ws.write("docs/k.md", "k\n")
      await ws.commitAll("docs")
    })
    await merge("J")
    const head = await tip()
    const missing = MergeBuild.verifier({ evidenceDir: evidenceDir("K", 1), toolchain: { schemaVersion: 1, build: ["no-such-build-tool-air"], test: [] } })
    const error = await merge("K", 1, missing).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MergeQueue.MergeError)
    expect((error as MergeQueue.MergeError).tag).toBe("Refused")
    expect((error as Error).message).toMatch(/no-such-build-tool-air is not installed/)
    expect(await tip()).toBe(head)
  })

  test("every commit the queue made on the integration branch builds and passes its tests", async () => {
    const commits = (await repo.git(["rev-list", "--first-parent", "main"])).trim().split("\n").slice(0, -1)
    expect(commits.length).toBe(9)
    for (const commit of commits) expect(`${commit}: ${await builds_(commit)}`).toBe(`${commit}: true`)
  })
})
