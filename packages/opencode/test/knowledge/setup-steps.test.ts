import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest"
import { knowledgeCommand } from "../../src/cli/knowledge"
import { SetupSteps } from "../../src/knowledge/setup-steps"
import { buildGate } from "../../src/scheduler/runtime/gates/build.ts"
import { runGates } from "../../src/scheduler/runtime/gates/pipeline.ts"
import { TOOL_MISSING } from "../../src/scheduler/runtime/gates/schema.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"

/**
 * An environment fix recorded once (a setup step of the project's rules) is applied in a fresh worktree
 * before its build; a missing prerequisite asks the person with its install command instead of blaming the task.
 */
describe("environment fixes as setup steps", () => {
  let repo: CppRepo
  let dir: string
  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { "config.h.in": "#define READY 1\n" } })
    dir = mkdtempSync(join(tmpdir(), "air-setup-"))
  })
  afterAll(async () => {
    await repo?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  const gate = (worktree: string, taskId: string) =>
    runGates({
      root: repo.root,
      worktree,
      taskId,
      base: "main",
      kind: "code",
      attempt: 1,
      evidenceDir: join(dir, "evidence", taskId),
      requires: [],
      // The build needs a file the environment makes (as a generated header or an installed config would).
      toolchain: { schemaVersion: 1, build: ["test -f config.h"], cache: { tool: "none" } },
      sandbox: "off",
      gates: [buildGate],
    })

  const worktree = (name: string) => {
    const wt = join(dir, name)
    mkdirSync(wt, { recursive: true })
    writeFileSync(join(wt, "config.h.in"), "#define READY 1\n")
    return wt
  }

  test("recorded after the person's fix, and applied to a new worktree before its build (once)", async () => {
    expect((await gate(worktree("before"), "T-1")).passed).toBe(false)
    vi.spyOn(process.stdout, "write").mockImplementation(() => true)
    expect(await knowledgeCommand(["setup", repo.root, "--run", "cp config.h.in config.h", "--reason", "the build needs config.h"])).toBe(0)
    expect(await knowledgeCommand(["setup", repo.root, "--run", "cp config.h.in config.h"])).toBe(0)
    vi.restoreAllMocks()
    expect(SetupSteps.read(repo.root)).toMatchObject([{ run: "cp config.h.in config.h", reason: "the build needs config.h" }])

    const fresh = worktree("fresh")
    const report = await gate(fresh, "T-2")
    expect(report.passed).toBe(true)
    expect(existsSync(join(fresh, "config.h"))).toBe(true)
    // Applied once per worktree: a second gate run does not run it again.
    rmSync(join(fresh, "config.h"))
    expect((await gate(fresh, "T-2")).passed).toBe(false)
  })

  test("a prerequisite that is missing stops before the build and names its install command", async () => {
    SetupSteps.record(repo.root, { reason: "the project's code generator", check: "command -v air-no-such-tool", install: "apt-get install air-no-such-tool" })
    const report = await gate(worktree("prereq"), "T-3")
    expect(report).toMatchObject({ passed: false, failedGate: TOOL_MISSING })
    expect(report.message).toContain("Install it: apt-get install air-no-such-tool")
    expect(JSON.parse(readFileSync(SetupSteps.file(repo.root), "utf8")).steps).toHaveLength(2)
  })
})
