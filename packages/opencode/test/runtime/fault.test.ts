import { mkdir, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { classifyFault } from "../../src/scheduler/runtime/fault"
import { MergeQueue } from "../../src/scheduler/runtime/integration/merge"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { taskBranches } from "./task-branch.ts"
import { GATE_ERROR_TAGS, GateError, MERGE_ERROR_TAGS } from "../../src/scheduler/runtime/errors.ts"
import { LockTimeout } from "../../src/scheduler/runtime/store/lock.ts"
import { GitCommandError } from "../../src/scheduler/runtime/git/git.ts"

/** The kind a fault is named by comes from the real errors of git, the merge queue and the toolchain. */
describe("classifyFault on real errors", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo()
  })
  afterAll(async () => {
    await repo?.cleanup()
  })
  const { task, merge } = taskBranches(() => repo)

  test("an index.lock left in the project stops the merge: index-lock, and the message says so", async () => {
    await task("L-1", async (ws) => {
      await ws.write("docs/l1.md", "l1\n")
      await ws.commitAll("l1")
    })
    await writeFile(path.join(repo.root, ".git", "index.lock"), "")
    const error = await merge("L-1").then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeDefined()
    expect(error).not.toBeInstanceOf(MergeQueue.LocalChangesInTheWay)
    const fault = classifyFault(error)
    expect(fault.tag).toBe("index-lock")
    expect(fault.message).toMatch(/index\.lock/)
  })

  test("uncommitted changes in the user's checkout in the way of a merge: local-changes", async () => {
    const { rm } = await import("node:fs/promises")
    await rm(path.join(repo.root, ".git", "index.lock"), { force: true })
    await repo.write("README.md", "local notes\n")
    await task("L-2", async (ws) => {
      await ws.write("README.md", "by L-2\n")
      await ws.commitAll("readme")
    })
    const error = await merge("L-2").catch((e: unknown) => e)
    expect(classifyFault(error).tag).toBe("local-changes")
  })

  test("a toolchain.json with a misspelt key: toolchain, naming the file", async () => {
    const file = path.join(repo.root, ".air", "shared", "rules", "toolchain.json")
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, JSON.stringify({ schemaVersion: 1, biuld: ["true"] }))
    const error = await Toolchain.load(repo.root).catch((e: unknown) => e)
    const fault = classifyFault(error)
    expect(fault.tag).toBe("toolchain")
    expect(fault.message).toContain("toolchain.json")
  })

  test("a system error is named by its code; a long message is cut", () => {
    expect(classifyFault(Object.assign(new Error("no space left on device"), { code: "ENOSPC" }))).toEqual({ tag: "fs", message: "ENOSPC: no space left on device" })
    expect(classifyFault(new Error("x".repeat(5000))).message.length).toBeLessThan(2100)
    expect(classifyFault("plain string").tag).toBe("unexpected")
  })
})

describe("faults: every tagged error has its kind, and nothing is left without one", () => {
  test("gate and merge tags, git, the toolchain, a full disk, and the unknown", () => {
    expect(GATE_ERROR_TAGS.map((tag) => classifyFault(new GateError(tag, "x")).tag)).toEqual(["toolchain", "git", "fs", "process", "process", "disk-full"])
    expect(MERGE_ERROR_TAGS.map((tag) => classifyFault(new MergeQueue.MergeError("T-1", "x", tag)).tag)).toEqual([
      "local-changes",
      "lock-timeout",
      "index-lock",
      "git",
      "merge",
    ])
    expect(classifyFault(new MergeQueue.LocalChangesInTheWay("T-1", "/p", ["a"])).tag).toBe("local-changes")
    expect(classifyFault(new MergeQueue.LockTimeout("T-1", new LockTimeout("/l", null, 5))).tag).toBe("lock-timeout")
    expect(classifyFault(new Toolchain.RulesInvalid("toolchain.json", "bad")).tag).toBe("toolchain")
    expect(classifyFault(new GitCommandError(["status"], 128, "", "fatal")).tag).toBe("git")
    expect(classifyFault(Object.assign(new Error("no space"), { code: "ENOSPC" })).tag).toBe("fs")
    expect(classifyFault("weird")).toEqual({ tag: "unexpected", message: "weird" })
  })
})
