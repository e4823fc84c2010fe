import { spawnSync } from "node:child_process"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Guard, Sessions } from "../../src/agent"
import { Sandbox } from "../../src/scheduler/runtime/sandbox/sandbox"
import { makeSandboxRepo, type SandboxRepo } from "./repo"

/**
 * The guard's hooks with real bwrap, as the engine calls them: `before` rewrites a worker's bash command
 * (and only a worker's), the engine's shell runs the line, `after` settles the task branch. No sandbox:
 * refused, unless the user allowed the fallback.
 */
let repo: SandboxRepo
beforeAll(() => {
  repo = makeSandboxRepo()
})
afterAll(() => {
  Sandbox.setCheck(undefined)
  Sessions.clear()
  repo?.cleanup()
})
beforeEach(() => {
  Sessions.clear()
  Sandbox.setCheck(undefined)
})

/** What the engine's bash tool does with the (rewritten) arguments. */
function engineRuns(args: Record<string, unknown>): { exit: number | null; output: string } {
  const r = spawnSync("/bin/bash", ["-c", String(args.command)], { cwd: String(args.workdir), env: { ...process.env, ANTHROPIC_API_KEY: "sk-SECRET" }, encoding: "utf8" })
  return { exit: r.status, output: r.stdout + r.stderr }
}

describe.skipIf(!Sandbox.check().ok)("Guard.before / Guard.after around a worker's bash call", () => {
  it("runs the command in the sandbox, the commit lands on the task branch, the record shows the model's command", async () => {
    Sessions.configure({ sandbox: "on", sandboxEnv: repo.env })
    Sessions.record("w1", { agent: "executor", worktree: repo.worktree, directory: repo.project, taskId: "T-1" })
    const command = "echo hi > hi.txt && git add hi.txt && git commit -qm hi && git tag air/done/T-1 2>&1; echo key=${ANTHROPIC_API_KEY:-none}"
    const args: Record<string, unknown> = { command, description: "work" }
    await Guard.before({ tool: "bash", sessionID: "w1", callID: "c1" }, { args })
    expect(args.command).not.toBe(command)
    expect(Sandbox.originalCommand(String(args.command))).toBe(command)
    const result = engineRuns(args)
    await Guard.after({ tool: "bash", sessionID: "w1", callID: "c1" }, { output: result.output, metadata: { exit: result.exit } })
    expect(result.output).toContain("key=none")
    expect(result.output).toMatch(/cannot lock ref 'refs\/tags\/air\/done\/T-1'/)
    expect(repo.git(["log", "-1", "--format=%s", "air/T-1"]).trim()).toBe("hi")
    expect(repo.git(["tag", "-l"]).trim()).toBe("")
  })

  it("leaves other roles' and other agents' calls alone", async () => {
    Sessions.configure({ sandbox: "on" })
    Sessions.record("b1", { agent: "build", directory: repo.project })
    const args: Record<string, unknown> = { command: "ls" }
    await Guard.before({ tool: "bash", sessionID: "b1", callID: "c2" }, { args })
    expect(args.command).toBe("ls")
  })

  it("no sandbox: the worker's command is refused with what to do — or runs as before when the user allowed it", async () => {
    Sandbox.setCheck({ ok: false, message: "bubblewrap (bwrap) is not installed" })
    Sessions.configure({ sandbox: "on" })
    Sessions.record("w2", { agent: "executor", worktree: repo.worktree, directory: repo.project, taskId: "T-1" })
    await expect(Guard.before({ tool: "bash", sessionID: "w2", callID: "c3" }, { args: { command: "ls" } })).rejects.toThrow(/sandbox.*cannot start.*sandboxFallback/s)
    Sessions.configure({ sandbox: "fallback" })
    const args: Record<string, unknown> = { command: "ls" }
    await Guard.before({ tool: "bash", sessionID: "w2", callID: "c4" }, { args })
    expect(args.command).toBe("ls")
  })
})
