import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { Guard, Permission, Prompt, Roles } from "../../src/agent"
import { ContextPack } from "../../src/scheduler/runtime/sessions/context-pack"
import { WorkerSession } from "../../src/scheduler/runtime/sessions/worker-session"
import { task } from "../scheduler/fixtures"

/**
 * A new worker role is its row, its prompt and its context pack, and nothing else: this test lays a role no shipped
 * file knows (not the table, not the permission code, not the guard, not the words, not the dispatch) beside the
 * shipped ones in a temporary table, and follows it from the engine's agent config through the fence to the
 * session the runtime starts for it.
 */
const tester: Roles.Row = {
  name: "tester",
  mode: "subagent",
  description: "Writes the missing tests of one task inside its worktree, and reports.",
  prompt: "tester.md",
  tools: ["read", "grep", "edit", "bash", "air_report"],
  confined: true,
  evidenceFirst: false,
}
const roles = Roles.extend(tester)
const testerPack: ContextPack.WorkerPack = (input) => ContextPack.workerMessage(input, [`You are the tester of this task (attempt ${input.attempt}): add the tests it lacks in ${input.worktree.path}.`])
const packs: ContextPack.Packs = { ...ContextPack.WORKER_PACKS, tester: testerPack }

const base = realpathSync(mkdtempSync(join(tmpdir(), "air-role-")))
afterAll(() => rmSync(base, { recursive: true, force: true }))
const project = join(base, "project")
const worktree = join(project, ".air", "local", "worktrees", "T1")
mkdirSync(join(worktree, "src"), { recursive: true })
// Its prompt is content in its own file, like every role's: the shipped ones copied beside it.
const prompts = join(base, "prompts")
mkdirSync(prompts)
for (const role of Roles.names) writeFileSync(join(prompts, Roles.table[role].prompt), Prompt.raw(role))
writeFileSync(
  join(prompts, "tester.md"),
  [Prompt.roleLine("tester"), ...Prompt.PARTS.flatMap((part) => ["", part, part === "## Language" ? Prompt.PLACEHOLDER : "The tester's part."])].join("\n"),
)

describe("a worker role added in a temporary table: registered, fenced and dispatched with no other file touched", () => {
  test("the engine is given its agent with its prompt and exactly its whitelist; the shipped roles are unchanged", () => {
    expect(Prompt.problems("tester", Prompt.raw("tester", prompts, roles))).toEqual([])
    const cfg: { agent?: Record<string, unknown>; permission?: unknown; default_agent?: string } = {}
    Permission.apply(cfg, (role) => Prompt.load(role, "en", prompts, roles), { roles })
    const agent = cfg.agent!.tester as Permission.AgentConfig
    expect(agent).toMatchObject({ mode: "subagent", description: tester.description })
    expect(agent.prompt.split("\n")[0]).toBe("AirCoding role: tester")
    expect(agent.prompt).not.toContain(Prompt.PLACEHOLDER)
    const universe = [...new Set([...Roles.ENGINE_BUILTIN, ...Roles.AIR_TOOLS, "github_create_issue"])].filter((t) => t !== "invalid")
    const offered = Permission.visible(universe, Permission.toRules(agent.permission)).filter((t) => t !== "invalid")
    expect(offered.sort()).toEqual(["air_report", "bash", "edit", "read", "grep", "apply_patch", "write"].sort())
    // `edit` is the engine's key for write and apply_patch too: the guard refuses what the row does not name.
    expect(Guard.evaluate({ agent: "tester", tool: "write", args: { filePath: join(worktree, "a.cpp"), content: "" }, session: { worktree, evidenceCount: 0 }, roles }).allow).toBe(false)
    // No other agent may start it through the task tool, and the shipped agents are registered as before.
    expect((cfg.permission as { task: Record<string, string> }).task.tester).toBe("deny")
    expect(cfg.default_agent).toBe("main")
    for (const role of Roles.names) expect(cfg.agent![role]).toEqual(Permission.agentConfig(role, Prompt.load(role, "en"), undefined, { topLevel: cfg.permission }))
    expect(cfg.agent!.tester).toBeDefined()
    // The shipped table knows nothing of it.
    expect(Roles.rowOf("tester")).toBeUndefined()
  })

  test("the fence confines it to its worktree, and it is refused what its row does not name, in words it can act on", () => {
    const session: Guard.SessionView = { worktree, directory: worktree, evidenceCount: 0 }
    const call = (tool: string, args: Record<string, unknown>) => Guard.evaluate({ agent: "tester", tool, args, session, roles })
    expect(call("edit", { filePath: join(worktree, "src", "a_test.cpp"), oldString: "a", newString: "b" })).toMatchObject({ allow: true })
    expect(call("edit", { filePath: "src/a_test.cpp", oldString: "a", newString: "b" })).toMatchObject({ allow: true, args: { filePath: join(worktree, "src", "a_test.cpp") } })
    expect(call("edit", { filePath: join(project, "src", "a.cpp"), oldString: "a", newString: "b" })).toMatchObject({ allow: false, reason: "path" })
    expect(call("read", { filePath: "/etc/hostname" })).toMatchObject({ allow: false, reason: "path" })
    expect(call("bash", { command: "cd / && ls" })).toMatchObject({ allow: false, reason: "path" })
    expect(call("bash", { command: "ctest", workdir: "/tmp" })).toMatchObject({ allow: false, reason: "path" })
    expect(call("bash", { command: "ctest" })).toMatchObject({ allow: true, args: { workdir: worktree } })
    expect(call("bash", { command: "cat .air/local/state.json" })).toMatchObject({ allow: false, reason: "air-local" })
    const refused = call("glob", { pattern: "**/*" })
    expect(refused).toMatchObject({ allow: false, reason: "tool" })
    for (const lang of ["en", "zh-CN"]) expect(Guard.toolMessage("tester", "glob", lang, roles)).toContain("read, grep, edit, bash, air_report")
    // Without its table, it is nobody's role: the guard leaves an unknown agent alone.
    expect(Guard.evaluate({ agent: "tester", tool: "glob", args: {}, session })).toEqual({ allow: true })
  })

  test("dispatched, it runs as its own agent in the task's worktree and is told its own context pack", () => {
    const node = task("T1", { title: "Cover calc::avg3", writeSet: [{ path: "tests/avg3_test.cpp", action: "create" }] })
    const input: ContextPack.WorkerInput = { root: project, task: node, rt: undefined, worktree: { path: worktree, branch: "air/T1" }, attempt: 2, earlier: ["abc123 first tests"] }
    const spec = WorkerSession.spec("tester", input, { roles, packs })
    expect(spec).toMatchObject({ agent: "tester", directory: project, worktree, title: "tester T1", taskId: "T1" })
    const lines = spec.prompt.split("\n")
    expect(lines[0]).toBe("Task T1: Cover calc::avg3")
    expect(lines).toContain("- tests/avg3_test.cpp (create)")
    expect(spec.prompt).toContain(`You are the tester of this task (attempt 2): add the tests it lacks in ${worktree}.`)
    expect(spec.prompt).toContain("- abc123 first tests")
    // A shipped worker still gets its own pack through the same door, and a role that is no worker gets none.
    expect(WorkerSession.spec("executor", input, { roles, packs }).prompt).toContain("You are the executor of this task (attempt 2)")
    expect(() => WorkerSession.spec("reviewer", input, { roles, packs })).toThrow(/not a worker role/)
    expect(() => WorkerSession.spec("tester", input, { roles })).toThrow(/no context pack/)
    expect(() => WorkerSession.spec("tester", input, { packs })).toThrow(/not a worker role/)
  })
})
