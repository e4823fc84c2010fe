import { Roles } from "./roles"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * The engine's view of the whitelist, derived from the table in roles.ts.
 *
 * How OpenCode 1.18.33 uses it (opencode-notes, and the binary):
 * - a permission config becomes an ordered rule list: `{ key: "allow" }` → (key, "*", allow), and
 *   `{ key: { pattern: action } }` → one rule per pattern, in key order;
 * - an agent's rules = defaults → the user's top-level `permission` → the agent's own `permission`
 *   (→ the session's); the LAST matching rule wins, and a key of a rule may be a wildcard ("*");
 * - a tool is removed from the model's list when the last rule matching its permission key has
 *   pattern "*" and action deny; the permission key of `edit`, `write` and `apply_patch` is `edit`,
 *   that of the MCP resource tools is `read`, every other tool's key is its id (MCP and plugin tools
 *   included).
 * So every agent gets `"*": "deny"` FIRST, then `allow` for exactly the keys of its row: whatever the
 * user's top-level rules say, everything outside the row is denied (and not offered), and nothing the
 * user writes for an AirCoding agent can widen it.
 */
export namespace Permission {
  export type Action = "allow" | "deny" | "ask"
  export type RuleConfig = Action | Record<string, Action>
  export type Rules = Record<string, RuleConfig>
  export type Rule = { permission: string; pattern: string; action: Action }

  const EDIT_KEY_TOOLS = ["edit", "write", "apply_patch"]
  /**
   * The engine checks its MCP resource tools under `read`: a role that may read is offered them when an
   * MCP server with resources is connected. No permission rule can hide them without hiding `read`; the
   * guard refuses them (they are in no row).
   */
  export const MCP_RESOURCE_TOOLS = ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"] as const

  /** The permission key the engine checks for a tool id. */
  export function key(tool: string): string {
    if (EDIT_KEY_TOOLS.includes(tool)) return "edit"
    if ((MCP_RESOURCE_TOOLS as readonly string[]).includes(tool)) return "read"
    return tool
  }

  /** Permission keys AirCoding owns outright: user rules for them are ignored. */
  const OURS = new Set(["*", "external_directory", "doom_loop"])

  /**
   * Extra directories the engine may let a session reach besides its own (`external_directory`):
   * a worker's session runs in its worktree, the shared plan and the gate evidence live in the
   * project. Which file exactly is the guard's business (paths.ts); this only keeps the engine from
   * asking — an `ask` in a background session would wait for nobody.
   */
  export const EXTERNAL_ALLOWED = [`*/${AirPaths.SHARED}/*`, `*/${AirPaths.EVIDENCE}/*`] as const

  /** `.env` files stay unreadable, as in OpenCode's defaults (deny, not ask: nobody answers a worker). */
  const READ_RULES: Record<string, Action> = { "*": "allow", "*.env": "deny", "*.env.*": "deny", "*.env.example": "allow" }

  export type Options = {
    /** The user's top-level `permission` (cfg.permission): rules for the row's keys may narrow it. */
    topLevel?: unknown
    /** The user's `cfg.agent[role].permission`: same, after the top-level ones. */
    agentLevel?: unknown
    /** The table the role's row is read from (default: the shipped one; a test's `Roles.extend(…)`). */
    roles?: Roles.Table
  }

  /** The permission config for one role. Key order matters: "*" first. */
  export function rulesFor(role: string, opts: Options = {}): Rules {
    const rules: Rules = { "*": "deny" }
    const keys: string[] = []
    for (const tool of [...rowOf(role, opts.roles).tools, ...Roles.ENGINE_INTERNAL]) {
      const k = key(tool)
      if (!keys.includes(k)) keys.push(k)
    }
    for (const k of keys) rules[k] = k === "read" ? { ...READ_RULES } : "allow"
    if (keys.includes("read")) {
      rules.external_directory = { "*": "deny", ...Object.fromEntries(EXTERNAL_ALLOWED.map((p) => [p, "allow" as const])) }
    }
    // The main agent talks to a person: a loop it cannot leave is put to that person.
    if (role === "main") rules.doom_loop = "ask"
    // A user may narrow a key of the row (deny `bash` patterns, ask before `edit`, …): those rules are
    // appended after ours, so they can only take away. Keys outside the row and "*" are ignored.
    for (const source of [opts.topLevel, opts.agentLevel]) narrow(rules, keys, source)
    // What the row closes stays closed: our `.env` rules come last again, after anything a user added.
    const read = rules.read
    if (typeof read === "object") {
      for (const pattern of Object.keys(READ_RULES)) if (pattern !== "*") delete read[pattern]
      for (const [pattern, action] of Object.entries(READ_RULES)) if (pattern !== "*") read[pattern] = action
    }
    return rules
  }

  /** The row of a role AirCoding registers; a name with no row is a programming error, said plainly. */
  function rowOf(role: string, roles: Roles.Table = Roles.table): Roles.Row {
    const row = Roles.rowOf(role, roles)
    if (!row) throw new Error(`AirCoding: no role named ${JSON.stringify(role)} in the roles table (src/agent/roles.ts)`)
    return row
  }

  function isAction(v: unknown): v is Action {
    return v === "allow" || v === "deny" || v === "ask"
  }

  function narrow(rules: Rules, keys: string[], source: unknown): void {
    if (!source || typeof source !== "object" || Array.isArray(source)) return
    for (const [k, value] of Object.entries(source as Record<string, unknown>)) {
      if (OURS.has(k) || !keys.includes(k)) continue
      const current = rules[k]
      const base: Record<string, Action> = typeof current === "object" ? { ...current } : { "*": current ?? "allow" }
      if (isAction(value)) {
        // A whole-key rule: "allow" is what we give already; "deny"/"ask" replaces the key's base.
        if (value !== "allow") rules[k] = value
        continue
      }
      if (!value || typeof value !== "object") continue
      for (const [pattern, action] of Object.entries(value as Record<string, unknown>)) {
        if (!isAction(action)) continue
        // Re-inserting moves the pattern last, so the user's rule is the last one for that pattern.
        delete base[pattern]
        base[pattern] = action
      }
      rules[k] = base
    }
  }

  /** Settings a user may choose per agent in opencode.json; anything about tools or permissions is ours. */
  export const USER_CHOICES = ["model", "variant", "temperature", "top_p", "color", "steps", "maxSteps", "options"] as const

  export type AgentConfig = {
    mode: "primary" | "subagent"
    description: string
    prompt: string
    permission: Rules
    hidden?: boolean
    [key: string]: unknown
  }

  /**
   * The agent config for one role, for `cfg.agent[role]` in the `config` hook: the user's model
   * choices (`user` is their existing `cfg.agent[role]`) and nothing that widens tools — `tools`,
   * `permission`, `mode`, `prompt`, `disable` of theirs are dropped (their permission rules can only
   * narrow, see rulesFor).
   */
  export function agentConfig(role: string, prompt: string, user?: unknown, opts: { topLevel?: unknown; roles?: Roles.Table } = {}): AgentConfig {
    const r = rowOf(role, opts.roles)
    const u = user && typeof user === "object" ? (user as Record<string, unknown>) : {}
    const kept: Record<string, unknown> = {}
    for (const k of USER_CHOICES) if (u[k] !== undefined) kept[k] = u[k]
    return {
      ...kept,
      mode: r.mode,
      description: r.description,
      prompt,
      permission: rulesFor(role, { topLevel: opts.topLevel, agentLevel: u.permission, roles: opts.roles }),
      ...(r.hidden ? { hidden: true } : {}),
    }
  }

  /**
   * Everything the `config` hook does for the agents, in one call: registers every role of the table (keeping
   * the user's model choices) and makes `main` the default agent. `roles`: the table (default: the shipped one).
   */
  export function apply(
    cfg: { agent?: Record<string, unknown>; permission?: unknown; default_agent?: string },
    promptFor: (role: string) => string,
    opts: { hideFromTask?: boolean; roles?: Roles.Table } = {},
  ): void {
    const agents = (cfg.agent ??= {})
    const roles = opts.roles ?? Roles.table
    for (const role of Object.keys(roles)) agents[role] = agentConfig(role, promptFor(role), agents[role], { topLevel: cfg.permission, roles })
    cfg.default_agent = Object.values(roles).find((row) => row.default)?.name ?? "main"
    if (opts.hideFromTask !== false) hideFromTask(cfg, roles)
    hideEnginePrimaries(agents)
  }

  /**
   * OpenCode's own primary agents, one Tab away in the TUI, would work on the project behind the
   * Scheduler's back: they are removed (1.18.33 deletes an agent whose config says `disable: true`, and
   * the TUI then cycles through AirCoding's primary agents only). The user's model choices for them stay.
   */
  export const ENGINE_PRIMARIES = ["build", "plan"] as const

  export function hideEnginePrimaries(agents: Record<string, unknown>): void {
    for (const name of ENGINE_PRIMARIES) {
      const user = agents[name]
      agents[name] = { ...(user && typeof user === "object" ? user : {}), disable: true }
    }
  }

  /**
   * No agent starts AirCoding's agents — only the Scheduler's code does: the user's own agents (build,
   * plan, general, …) get `task: { <role>: "deny" }` appended to the top-level rules, which hides our
   * roles from their `task` tool's list and refuses such a call. Their other `task` rules stay as they are.
   */
  export function hideFromTask(cfg: { permission?: unknown; agent?: Record<string, unknown> }, roles: Roles.Table = Roles.table): void {
    const raw = cfg.permission
    const top: Record<string, unknown> =
      typeof raw === "string" ? { "*": raw } : raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {}
    const current = top.task
    const task: Record<string, unknown> =
      typeof current === "string" ? { "*": current } : current && typeof current === "object" ? { ...(current as Record<string, unknown>) } : {}
    for (const role of Object.keys(roles)) {
      delete task[role]
      task[role] = "deny"
    }
    top.task = task
    cfg.permission = top
    // An agent's own rules come after the top-level ones (a build agent with "*": "allow" would re-open
    // `task`): every agent that is not AirCoding's gets the same denials at the end of its own rules.
    const agents = (cfg as { agent?: Record<string, unknown> }).agent ?? {}
    for (const [name, value] of Object.entries(agents)) {
      if (Roles.rowOf(name, roles) || !value || typeof value !== "object") continue
      const agent = value as { permission?: unknown }
      if (agent.permission === undefined) continue
      const own: Record<string, unknown> =
        typeof agent.permission === "string"
          ? { "*": agent.permission }
          : agent.permission && typeof agent.permission === "object"
            ? (agent.permission as Record<string, unknown>)
            : {}
      const ownTask = own.task
      const t: Record<string, unknown> = typeof ownTask === "string" ? { "*": ownTask } : ownTask && typeof ownTask === "object" ? { ...(ownTask as Record<string, unknown>) } : {}
      for (const role of Object.keys(roles)) {
        delete t[role]
        t[role] = "deny"
      }
      delete own.task
      own.task = t
      agent.permission = own
    }
  }

  // ---- A model of the engine's evaluation (1.18.33), for tests and for the launcher's checks ----

  /** The engine's `fromConfig`: a config object to an ordered rule list. */
  export function toRules(config: Rules): Rule[] {
    const out: Rule[] = []
    for (const [permission, value] of Object.entries(config)) {
      if (typeof value === "string") out.push({ permission, pattern: "*", action: value })
      else for (const [pattern, action] of Object.entries(value)) out.push({ permission, pattern, action })
    }
    return out
  }

  /** The engine's wildcard match: `*` any run of characters, `?` one character. */
  export function wildcard(text: string, pattern: string): boolean {
    const source = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")
    return new RegExp(`^${source}$`, "s").test(text)
  }

  /** The action for a permission key and a pattern value; the last matching rule wins. */
  export function evaluate(rules: Rule[], permission: string, value = "*"): Action | undefined {
    for (let i = rules.length - 1; i >= 0; i--) {
      const r = rules[i]!
      if (wildcard(permission, r.permission) && wildcard(value, r.pattern)) return r.action
    }
    return undefined
  }

  /**
   * What the engine offers `role` out of `engineTools` under our rules: its row, plus the MCP resource
   * tools for roles that may read (see MCP_RESOURCE_TOOLS). For end-to-end checks of the tool list.
   */
  export function expectedOffer(role: string, engineTools: Iterable<string>, roles: Roles.Table = Roles.table): string[] {
    const tools = [...new Set(engineTools)]
    const mcp = rowOf(role, roles).tools.includes("read") ? tools.filter((t) => (MCP_RESOURCE_TOOLS as readonly string[]).includes(t)) : []
    return [...Roles.offered(role, tools, roles), ...mcp].sort()
  }

  /** Which of `tools` the engine offers under `rules` (its `disabled` filter inverted). */
  export function visible(tools: Iterable<string>, rules: Rule[]): string[] {
    return [...tools].filter((tool) => {
      const k = key(tool)
      const last = [...rules].reverse().find((r) => wildcard(k, r.permission))
      return !(last?.pattern === "*" && last.action === "deny")
    })
  }
}
