import { readFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { diffGate } from "../../src/scheduler/runtime/gates/diff.ts"
import { routeOf } from "../../src/scheduler/runtime/gates/index.ts"
import { secretsGate } from "../../src/scheduler/runtime/gates/secrets.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { firstGates } from "./task-branch.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"

// A made-up credential in the shape the scanner knows; it is nobody's key.
const FAKE_AWS = `const char* kSecret = "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9h3Kq2Lm";`

describe("the secret scan gate: a credential never reaches review or the merge", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  async function gatesOf(taskId: string, source: string) {
    const wt = await Worktrees.create(repo.root, taskId, "main")
    const ws = repo.at(wt.path)
    await ws.write("src/config.cpp", source)
    await ws.commitAll(`config of ${taskId}`)
    return firstGates(repo.root, taskId, wt.path, {
      requires: ["diff"],
      gates: [diffGate, secretsGate],
      sandbox: "off",
    })
  }

  test("a committed fake AWS key fails the gate, goes back to the worker, and the message never repeats the key", async () => {
    const report = await gatesOf("S-1", `${FAKE_AWS}\n`)
    expect(report.passed).toBe(false)
    expect(report.failedGate).toBe("secrets")
    expect(routeOf("secrets")).toBe("executor")
    expect(report.message).toContain("src/config.cpp:1: aws")
    expect(report.message).not.toContain("wJalrXUtnFEMI")
    expect(await readFile(path.join(report.evidenceDir, "secrets.log"), "utf8")).toContain("src/config.cpp:1")
  })

  test("code without a credential passes, and a fixture allowed in secrets-allow.txt does too", async () => {
    expect((await gatesOf("S-2", "int port() { return 8080; }\n")).passed).toBe(true)
    await repo.write(".air/shared/rules/secrets-allow.txt", "# test fixtures, not real keys\npath:src/config.cpp\n")
    expect((await gatesOf("S-3", `${FAKE_AWS}\n`)).passed).toBe(true)
  })
})
