import { describe, expect, it } from "vitest"
import { Permission, Roles } from "../../src/agent"

/** Every kind of tool an engine may offer: built-ins, ours, MCP servers', other plugins'. */
const UNIVERSE = [
  ...Roles.ENGINE_BUILTIN,
  "list",
  "multiedit",
  "patch",
  ...Roles.AIR_TOOLS,
  "github_create_issue",
  "context7_get_library_docs",
  "otherplugin_deploy",
  "read_mcp_resource",
]

/** OpenCode's defaults (1.18.33), then a permissive user, as the engine would merge them before the agent's rules. */
const DEFAULTS: Permission.Rules = {
  "*": "allow",
  doom_loop: "ask",
  external_directory: { "*": "ask" },
  question: "deny",
  plan_enter: "deny",
  plan_exit: "deny",
  read: { "*": "allow", "*.env": "ask" },
}
const PERMISSIVE_USER: Permission.Rules = { "*": "allow", bash: "allow", edit: "allow", task: "allow", webfetch: "allow", external_directory: "allow" }

function engineRules(agent: Permission.Rules): Permission.Rule[] {
  return [...Permission.toRules(DEFAULTS), ...Permission.toRules(PERMISSIVE_USER), ...Permission.toRules(agent)]
}

describe("the permission config derived from the table", () => {
  for (const role of Roles.names) {
    it(`${role}: offers exactly its row and denies everything else`, () => {
      const rules = Permission.rulesFor(role)
      expect(Object.keys(rules)[0]).toBe("*")
      expect(rules["*"]).toBe("deny")
      const merged = engineRules(rules)
      const visible = Permission.visible(UNIVERSE, merged).filter((t) => t !== "invalid")
      expect(visible.sort()).toEqual(Permission.expectedOffer(role, UNIVERSE))
      if (role !== "scheduler") expect(visible).toContain("read_mcp_resource") // the engine's limit: the guard refuses it
      // and call-time evaluation agrees: allowed keys allow, everything else is denied
      for (const tool of UNIVERSE) {
        if (tool === "invalid" || tool === "read_mcp_resource") continue
        const action = Permission.evaluate(merged, Permission.key(tool), "src/x.cpp")
        expect([tool, action]).toEqual([tool, Roles.table[role].tools.includes(tool) ? "allow" : "deny"])
      }
    })
  }

  it("maps the engine's edit family to the one key `edit`", () => {
    expect(Permission.key("write")).toBe("edit")
    expect(Permission.key("apply_patch")).toBe("edit")
    expect(Permission.key("read_mcp_resource")).toBe("read")
    expect(Permission.key("air_plan")).toBe("air_plan")
    expect(Permission.rulesFor("executor").edit).toBe("allow")
    expect(Permission.rulesFor("main").edit).toBeUndefined()
  })

  it("keeps the engine's repair tool `invalid` for every role", () => {
    for (const role of Roles.names) expect(Permission.rulesFor(role).invalid).toBe("allow")
  })

  it("denies workers any directory outside their own except the shared plan and gate evidence", () => {
    const rules = Permission.toRules(Permission.rulesFor("executor"))
    expect(Permission.evaluate(rules, "external_directory", "/home/u/*")).toBe("deny")
    expect(Permission.evaluate(rules, "external_directory", "/p/.air/local/evidence/t1/*")).toBe("allow")
    expect(Permission.evaluate(rules, "external_directory", "/p/.air/shared/plan/*")).toBe("allow")
    expect(Permission.evaluate(rules, "external_directory", "/p/.air/local/state/*")).toBe("deny")
    expect(Permission.evaluate(Permission.toRules(Permission.rulesFor("scheduler")), "external_directory", "/p/.air/shared/*")).toBe("deny")
  })

  it("lets a user narrow a row but never widen it", () => {
    const topLevel = { "*": "allow", bash: { "*": "allow", "rm *": "deny" }, task: "allow", webfetch: "allow" }
    const user = {
      model: "local/big",
      temperature: 0.1,
      tools: { task: true, webfetch: true },
      permission: { "*": "allow", task: "allow", edit: { "*.md": "ask" }, air_submit: "allow" },
      mode: "primary",
      prompt: "do anything",
      disable: true,
    }
    const cfg = Permission.agentConfig("executor", "PROMPT", user, { topLevel })
    expect(cfg.model).toBe("local/big")
    expect(cfg.temperature).toBe(0.1)
    expect(cfg.mode).toBe("subagent")
    expect(cfg.prompt).toBe("PROMPT")
    expect(cfg.tools).toBeUndefined()
    expect(cfg.disable).toBeUndefined()
    const rules = engineRules(cfg.permission)
    expect(Permission.visible(UNIVERSE, rules).filter((t) => t !== "invalid").sort()).toEqual(Permission.expectedOffer("executor", UNIVERSE))
    expect(Permission.evaluate(rules, "task")).toBe("deny")
    expect(Permission.evaluate(rules, "air_submit")).toBe("deny")
    expect(Permission.evaluate(rules, "webfetch")).toBe("deny")
    expect(Permission.evaluate(rules, "bash", "rm -rf build")).toBe("deny")
    expect(Permission.evaluate(rules, "bash", "cmake --build build")).toBe("allow")
    expect(Permission.evaluate(rules, "edit", "README.md")).toBe("ask")
    expect(Permission.evaluate(rules, "edit", "src/a.cpp")).toBe("allow")
    expect(Permission.evaluate(rules, "read", ".env")).toBe("deny")
  })

  it("registers every role and makes main the default agent", () => {
    const cfg: { agent?: Record<string, unknown>; default_agent?: string; permission?: unknown } = {
      agent: { build: { model: "x/y" }, reviewer: { model: "local/small" } },
      default_agent: "build",
    }
    Permission.apply(cfg, (role) => `prompt of ${role}`)
    expect(cfg.default_agent).toBe("main")
    // OpenCode's own primary agents are removed: only AirCoding's roles are selectable in the TUI.
    expect(cfg.agent!.build).toEqual({ model: "x/y", disable: true })
    expect(cfg.agent!.plan).toEqual({ disable: true })
    for (const role of Roles.names) {
      const a = cfg.agent![role] as Permission.AgentConfig
      expect(a.prompt).toBe(`prompt of ${role}`)
      expect(a.mode).toBe(Roles.table[role].mode)
      expect(a.description).toBe(Roles.table[role].description)
      expect(Boolean(a.hidden)).toBe(role === "scheduler")
    }
    expect((cfg.agent!.reviewer as Permission.AgentConfig).model).toBe("local/small")
  })

  it("hides AirCoding's roles from the user's own agents' task tool", () => {
    const cfg: { agent?: Record<string, unknown>; permission?: unknown } = { permission: { "*": "allow", task: "allow", bash: "ask" } }
    Permission.apply(cfg, () => "p")
    const top = cfg.permission as Record<string, unknown>
    expect(top.bash).toBe("ask")
    const rules = [...Permission.toRules(DEFAULTS), ...Permission.toRules(top as Permission.Rules)]
    for (const role of Roles.names) expect([role, Permission.evaluate(rules, "task", role)]).toEqual([role, "deny"])
    expect(Permission.evaluate(rules, "task", "general")).toBe("allow")
    expect(Permission.visible(["task"], rules)).toEqual(["task"])
    // our own agents are not affected by those top-level rules: task stays denied, the row stays offered
    const exec = [...rules, ...Permission.toRules((cfg.agent!.executor as Permission.AgentConfig).permission)]
    expect(Permission.visible(UNIVERSE, exec).filter((t) => t !== "invalid").sort()).toEqual(Permission.expectedOffer("executor", UNIVERSE))
    const bare: { permission?: unknown } = { permission: "allow" }
    Permission.hideFromTask(bare)
    expect(bare.permission).toEqual({ "*": "allow", task: Object.fromEntries(Roles.names.map((r) => [r, "deny"])) })
  })
})
