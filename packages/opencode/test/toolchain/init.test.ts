import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Init } from "../../src/cli/init.ts"
import { Readiness } from "../../src/scheduler/runtime/readiness.ts"
import { Gates } from "../../src/scheduler/runtime/gates/index.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { CALC_CPP, createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"

describe("aircoding init", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("detects, runs the baseline once, writes toolchain.json — and the gates then use those rules; doctor sees a green baseline", async () => {
    const before = await Readiness.checks(repo.root)
    expect(before.find((c) => c.name === "configuration")).toMatchObject({ ok: false, fix: expect.stringContaining("aircoding init") })
    expect(before.find((c) => c.name === "baseline")?.ok).toBe(false)

    // One job: a figure detection would not pick on its own, so the gate's log shows whose rules it ran.
    const outcome = await Init.run(repo.root, { jobs: 1 })
    expect(outcome.baseline?.passed).toBe(true)
    expect(outcome.baseline?.build.ms).toBeGreaterThan(0)
    const written = Toolchain.parse(await readFile(path.join(repo.root, Toolchain.RULES_PATH), "utf8"))
    expect(written.build).toContain("cmake --build .air-build -j 1")
    expect(written.baseline).toMatchObject({ passed: true, commit: (await repo.git(["rev-parse", "HEAD"])).trim() })
    expect(written.analysis.cppcheck.project).toBe(".air-build/compile_commands.json")
    const text = Init.describe(outcome)
    expect(text).toContain(`Wrote ${Toolchain.RULES_PATH}`)
    expect(text).toMatch(/Why:\n  - CMake project detected/)
    expect(text).toMatch(/build +passed in/)
    // The baseline's worktree is gone again; the project's checkout is untouched.
    expect((await repo.git(["worktree", "list"])).trim().split("\n")).toHaveLength(1)
    expect(await repo.git(["status", "--porcelain", "--untracked-files=no"])).toBe("")

    const after = await Readiness.checks(repo.root)
    expect(after.find((c) => c.name === "configuration")?.ok).toBe(true)
    expect(after.find((c) => c.name === "baseline")).toMatchObject({ ok: true, detail: expect.stringContaining("(HEAD)") })

    const wt = await Worktrees.create(repo.root, "after-init", "main")
    const ws = repo.at(wt.path)
    await ws.write("src/calc.cpp", CALC_CPP + "// one line\n")
    await ws.commitAll("one line")
    const report = await Gates.run({
      root: repo.root,
      worktree: wt.path,
      taskId: "after-init",
      base: "main",
      kind: "code",
      attempt: 1,
      evidenceDir: path.join(repo.root, ".air/local/evidence/after-init/attempt-1"),
      requires: ["diff", "build", "test", "analysis"],
    })
    expect(report.message).toContain("all gates passed")
    expect(report.toolchain.source).toBe("file")
    expect(await readFile(path.join(report.evidenceDir, "build.log"), "utf8")).toContain("$ cmake --build .air-build -j 1\n")
  })
})
