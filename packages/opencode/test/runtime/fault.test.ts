import { describe, expect, test } from "vitest"
import { GATE_ERROR_TAGS, GateError, MERGE_ERROR_TAGS } from "../../src/runtime/errors.ts"
import { faultOf } from "../../src/runtime/fault.ts"
import { LockTimeout } from "../../src/runtime/lock.ts"
import { GitCommandError } from "../../src/scheduler/git.ts"
import { MergeQueue } from "../../src/scheduler/merge.ts"
import { Toolchain } from "../../src/scheduler/toolchain.ts"

describe("faults: every tagged error has its kind, and nothing is left without one", () => {
  test("gate and merge tags, git, the toolchain, a full disk, and the unknown", () => {
    expect(GATE_ERROR_TAGS.map((tag) => faultOf(new GateError(tag, "x")).tag)).toEqual(["toolchain", "git", "fs", "process", "process"])
    expect(MERGE_ERROR_TAGS.map((tag) => faultOf(new MergeQueue.MergeError("T-1", "x", tag)).tag)).toEqual([
      "local-changes",
      "lock-timeout",
      "index-lock",
      "git",
      "merge",
    ])
    expect(faultOf(new MergeQueue.LocalChangesInTheWay("T-1", "/p", ["a"])).tag).toBe("local-changes")
    expect(faultOf(new MergeQueue.LockTimeout("T-1", new LockTimeout("/l", null, 5))).tag).toBe("lock-timeout")
    expect(faultOf(new Toolchain.RulesInvalid("toolchain.json", "bad")).tag).toBe("toolchain")
    expect(faultOf(new GitCommandError(["status"], 128, "", "fatal")).tag).toBe("git")
    expect(faultOf(Object.assign(new Error("no space"), { code: "ENOSPC" })).tag).toBe("fs")
    expect(faultOf("weird")).toEqual({ tag: "unexpected", message: "weird" })
  })
})
