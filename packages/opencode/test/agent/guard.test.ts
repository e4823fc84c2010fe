import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { Guard, Roles, Sessions } from "../../src/agent"

const base = realpathSync(mkdtempSync(join(tmpdir(), "air-guard-")))
const project = join(base, "project")
const worktree = join(project, ".air", "local", "worktrees", "T1")
mkdirSync(join(worktree, "src"), { recursive: true })
afterAll(() => rmSync(base, { recursive: true, force: true }))

const FOREIGN = ["github_create_issue", "otherplugin_deploy", "read_mcp_resource", "multiedit", "patch", "execute"]
const UNIVERSE = [...new Set([...Roles.ENGINE_BUILTIN, ...Roles.AIR_TOOLS, ...FOREIGN])].filter((t) => t !== "invalid")

function session(role: Roles.Name): Guard.SessionView {
  return Roles.isWorker(role) ? { worktree, directory: worktree, evidenceCount: 1 } : { directory: project, evidenceCount: 0 }
}

/** Arguments that are fine for the tool (inside the worktree). */
function goodArgs(tool: string): Record<string, unknown> {
  switch (tool) {
    case "read":
    case "edit":
    case "write":
    case "lsp":
      return { filePath: join(worktree, "src", "a.cpp"), oldString: "a", newString: "b", content: "x" }
    case "glob":
      return { pattern: "**/*.cpp" }
    case "grep":
      return { pattern: "main" }
    case "list":
      return { path: "src" }
    case "bash":
      return { command: "cmake --build build", description: "build" }
    case "apply_patch":
      return { patchText: "*** Begin Patch\n*** Add File: src/b.cpp\n+int b;\n*** End Patch" }
    default:
      return {}
  }
}

describe("the guard's whitelist", () => {
  for (const role of Roles.names) {
    it(`${role}: refuses every tool outside its row, naming agent and tool`, () => {
      const forbidden = UNIVERSE.filter((t) => !Roles.table[role].tools.includes(t))
      expect(forbidden).toContain("task")
      for (const tool of forbidden) {
        const d = Guard.decide({ agent: role, tool, args: goodArgs(tool), session: session(role) })
        expect(d.allow, `${role} ${tool}`).toBe(false)
        if (d.allow) continue
        expect(d.reason).toBe("tool")
        expect(d.message).toContain(`the ${role} agent may not call \`${tool}\``)
        expect(d.message).toMatch(/AirCoding guard/)
      }
    })

    it(`${role}: allows its row`, () => {
      for (const tool of Roles.table[role].tools) {
        const d = Guard.decide({ agent: role, tool, args: goodArgs(tool), session: session(role) })
        expect([tool, d.allow]).toEqual([tool, true])
      }
    })
  }

  it("says what to do instead", () => {
    const d = Guard.decide({ agent: "main", tool: "edit", args: {}, session: session("main") })
    expect(d.allow).toBe(false)
    if (!d.allow) {
      expect(d.message).toContain("the main agent may not call `edit`")
      expect(d.message).toContain("air_submit")
    }
    const t = Guard.decide({ agent: "executor", tool: "task", args: { subagent_type: "general" }, session: session("executor") })
    if (!t.allow) expect(t.message).toMatch(/only the Scheduler's code dispatches/)
    const p = Guard.decide({ agent: "executor", tool: "air_plan", args: {}, session: session("executor") })
    if (!p.allow) expect(p.message).toContain("belongs to the architect role")
    const m = Guard.decide({ agent: "reviewer", tool: "github_create_issue", args: {}, session: session("reviewer") })
    if (!m.allow) expect(m.message).toMatch(/MCP/)
  })

  it("speaks Chinese when the language is zh-CN", () => {
    const d = Guard.decide({ agent: "main", tool: "bash", args: { command: "ls" }, session: session("main"), language: "zh-CN" })
    expect(d.allow).toBe(false)
    if (!d.allow) expect(d.message).toContain("AirCoding 守卫：main 角色不得调用 `bash`")
  })

  it("leaves other agents alone", () => {
    for (const agent of [undefined, "", "build", "plan", "general", "my-agent"])
      expect(Guard.decide({ agent, tool: "bash", args: { command: "rm -rf /" }, session: { directory: project, evidenceCount: 0 } })).toEqual({ allow: true })
  })

  it("keeps every role's hands off .air/local", () => {
    const d = Guard.decide({ agent: "executor", tool: "write", args: { filePath: ".air/local/state/events.jsonl", content: "" }, session: session("executor") })
    expect(d.allow).toBe(false)
    if (!d.allow) expect(d.reason).toBe("air-local")
  })
})

describe("the session registry and the hook", () => {
  beforeEach(() => Sessions.clear())

  it("learns the agent from chat.params and guards whatever started the session", async () => {
    const events: Record<string, unknown>[] = []
    Sessions.configure({ onEvent: (e) => events.push(e) })
    Sessions.noteDirectory("s1", project)
    Sessions.record("s1", { agent: "main" })
    const output = { args: { filePath: join(project, "x.cpp"), content: "int x;" } as Record<string, unknown> }
    await expect(Guard.before({ tool: "write", sessionID: "s1", callID: "c1" }, output)).rejects.toThrow(/the main agent may not call `write`/)
    expect(events).toEqual([
      expect.objectContaining({ type: "guard.refused", sessionID: "s1", callID: "c1", agent: "main", tool: "write", reason: "tool" }),
    ])
    // a user's own agent in another session: untouched
    Sessions.record("s2", { agent: "build" })
    await expect(Guard.before({ tool: "write", sessionID: "s2", callID: "c2" }, { args: {} })).resolves.toBeUndefined()
  })

  it("keeps the Scheduler's worktree when chat.params later names the agent", async () => {
    Sessions.record("w1", { agent: "executor", worktree, directory: worktree, taskId: "T1" })
    Sessions.record("w1", { agent: "executor" })
    expect(Sessions.get("w1")?.worktree).toBe(worktree)
    const args: Record<string, unknown> = { command: "ls", workdir: "/" }
    await expect(Guard.before({ tool: "bash", sessionID: "w1" }, { args })).rejects.toThrow(/outside the worktree|only work inside its worktree/)
    const ok: Record<string, unknown> = { command: "ls src" }
    const output = { args: ok }
    await Guard.before({ tool: "bash", sessionID: "w1" }, output)
    // rewritten in place: the engine keeps its own reference to the object
    expect(output.args).toBe(ok)
    expect(ok.workdir).toBe(worktree)
  })

  it("asks the resolver for a session it has not seen", async () => {
    let asked = 0
    Sessions.configure({
      resolver: async (id) => {
        asked++
        return id === "s9" ? { agent: "reviewer", directory: project } : undefined
      },
    })
    await expect(Guard.before({ tool: "edit", sessionID: "s9" }, { args: {} })).rejects.toThrow(/reviewer agent may not call `edit`/)
    await expect(Guard.before({ tool: "edit", sessionID: "s9" }, { args: {} })).rejects.toThrow()
    expect(asked).toBe(1)
    await expect(Guard.before({ tool: "edit", sessionID: "unknown" }, { args: {} })).resolves.toBeUndefined()
  })

  it("decide(sessionID, …) rewrites the given args in place", () => {
    Sessions.record("w2", { agent: "executor", worktree })
    const args: Record<string, unknown> = { command: "make" }
    const d = Guard.decide("w2", "bash", args)
    expect(d.allow).toBe(true)
    expect(args.workdir).toBe(worktree)
    Sessions.configure({ language: "zh-CN" })
    const r = Guard.decide("w2", "task", {})
    expect(r.allow).toBe(false)
    if (!r.allow) expect(r.message).toContain("executor 角色不得调用 `task`")
  })

  it("lets a worker read its task's evidence, the shared plan and the engine's truncated outputs — nothing else outside", () => {
    const roots = Sessions.readRootsOf({ agent: "executor", worktree, taskId: "T1", evidence: [] })
    expect(roots).toEqual([
      Sessions.engineToolOutputDir(),
      join(project, ".air", "local", "evidence", "T1"),
      join(project, ".air", "shared"),
    ])
    Sessions.record("w3", { agent: "executor", worktree, taskId: "T1" })
    expect(Guard.decide("w3", "read", { filePath: join(project, ".air", "shared", "plan", "plan.md") }).allow).toBe(true)
    expect(Guard.decide("w3", "read", { filePath: join(Sessions.engineToolOutputDir(), "tool_1") }).allow).toBe(true)
    expect(Guard.decide("w3", "read", { filePath: join(project, ".air", "local", "evidence", "T2", "build.log") }).allow).toBe(false)
    expect(Guard.decide("w3", "read", { filePath: join(project, "src", "main.cpp") }).allow).toBe(false)
    expect(Guard.decide("w3", "write", { filePath: join(project, ".air", "shared", "plan", "plan.md"), content: "" }).allow).toBe(false)
  })
})

describe("a reviewer started for a task reads that task's worktree", () => {
  it("relative paths of read, glob and grep are resolved in the worktree; absolute paths stay as they are", () => {
    const session = { directory: "/p", worktree: "/p/.air/local/worktrees/T-1", evidenceCount: 0 }
    expect(Guard.decide({ agent: "reviewer", tool: "read", args: { filePath: "src/a.cpp" }, session })).toEqual({
      allow: true,
      args: { filePath: "/p/.air/local/worktrees/T-1/src/a.cpp" },
    })
    expect(Guard.decide({ agent: "reviewer", tool: "glob", args: { pattern: "**/*.cpp" }, session })).toEqual({
      allow: true,
      args: { pattern: "**/*.cpp", path: "/p/.air/local/worktrees/T-1" },
    })
    expect(Guard.decide({ agent: "reviewer", tool: "read", args: { filePath: "/p/.air/shared/plan/plan.md" }, session })).toEqual({ allow: true })
    // Without a worktree (a reviewer the user started), nothing is rewritten.
    expect(Guard.decide({ agent: "reviewer", tool: "read", args: { filePath: "src/a.cpp" }, session: { directory: "/p", evidenceCount: 0 } })).toEqual({ allow: true })
  })
})
