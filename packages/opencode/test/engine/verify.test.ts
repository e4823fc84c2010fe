import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Roles } from "../../src/agent"
import { LaunchConfig } from "../../src/engine/launch-config"
import { Verify } from "../../src/engine/verify"
import { makeSandbox } from "../support/sandbox"

/**
 * Two engines started at once on a fresh data dir race to create its database (met with two runs started
 * together): the check of the engine's config is made by one AirCoding process at a time per data dir.
 */
describe("the engine check before a launch", () => {
  const sandbox = makeSandbox("air-verify-", { freshEngine: true })
  afterAll(() => sandbox.cleanup())

  it("waits while another process checks the same data dir, then passes; two at once both pass", async () => {
    const project = sandbox.project("p")
    // The engine as a launch configures it: AirCoding's plugin and agents, offline.
    const env = LaunchConfig.environment({ offline: true }, sandbox.env)
    const lockFile = join(sandbox.env.XDG_DATA_HOME!, "opencode", "aircoding-verify.lock")
    const holder = spawn("sleep", ["600"], { stdio: "ignore" })
    mkdirSync(dirname(lockFile), { recursive: true })
    writeFileSync(lockFile, JSON.stringify({ pid: holder.pid, host: hostname(), at: new Date().toISOString(), token: randomUUID(), what: "another check" }))
    let settled = false
    const check = Verify.plugin(project, env, Roles.names, Roles.coordinatorTools("main")).finally(() => (settled = true))
    // Longer than a whole check takes here (about 3 s): it has not started, the engine has made nothing yet.
    await new Promise((resolve) => setTimeout(resolve, 6000))
    expect(settled).toBe(false)
    expect(readdirSync(dirname(lockFile))).toEqual(["aircoding-verify.lock"])
    holder.kill("SIGKILL")
    const result = await check
    expect(result.ok, result.ok ? "" : result.message).toBe(true)
    expect(existsSync(lockFile)).toBe(false)

    const both = await Promise.all([0, 1].map(() => Verify.plugin(project, env, Roles.names, Roles.coordinatorTools("main"))))
    expect(both.map((r) => r.ok)).toEqual([true, true])
  }, 300_000)
})
