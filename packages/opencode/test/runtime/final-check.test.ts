import { mkdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { FinalCheck } from "../../src/scheduler/runtime/integration/final-check.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { alive } from "../support/pids.ts"


describe("the final check", () => {
  let repo: CppRepo
  beforeAll(async () => {
    repo = await createCppRepo({ empty: true, files: { "README.md": "x\n" } })
  })
  afterAll(async () => {
    await repo?.cleanup()
  })

  test("a test command that hangs with a child is stopped with its whole tree, and the check fails saying so", async () => {
    const pidFile = path.join(repo.root, "ctest.pid")
    const rules = path.join(repo.root, Toolchain.RULES_PATH)
    await mkdir(path.dirname(rules), { recursive: true })
    await writeFile(rules, JSON.stringify({ schemaVersion: 1, build: ["true"], test: [`sleep 1000 & echo $! > ${pidFile}; wait`], timeoutMs: 400 }))
    const result = await FinalCheck.run(repo.root, { sandbox: "off" })
    expect(result.passed).toBe(false)
    expect(result.summary).toMatch(/did not finish within 0\.4 s/)
    const pid = Number(await readFile(pidFile, "utf8"))
    const end = Date.now() + 15_000
    while (alive(pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
    expect(alive(pid)).toBe(false)
    expect(FinalCheck.read(repo.root)?.summary).toBe(result.summary)
  })
})
