/**
 * The ONE table of AirCoding's roles: what each may use. Everything else — every other built-in tool,
 * MCP tools, other plugins' tools, and `task` (no agent starts agents: only the Scheduler's code does) —
 * is denied. Both the permission config given to the engine (permission.ts: a denied tool is not even
 * offered to the model) and the guard in `tool.execute.before` (guard.ts) are derived from this table.
 */
export namespace Roles {
  export const names = ["main", "architect", "reviewer", "executor", "debugger", "scheduler"] as const
  export type Name = (typeof names)[number]

  /**
   * Looking around without changing anything. `list` and `lsp` are not offered by every engine build
   * (1.18.33 has no `list`; `lsp` needs OPENCODE_EXPERIMENTAL_LSP_TOOL): allowed when present.
   */
  export const READ_ONLY = ["read", "glob", "grep", "list", "lsp"] as const
  /**
   * The engine's file-changing tools. OpenCode checks all of them under the one permission `edit`, and
   * offers `apply_patch` instead of `edit`/`write` to GPT-style models: a worker needs all three.
   * `multiedit` and `patch` are ids of other engine versions; they are in no row (denied), but are
   * still treated as writes by the guard.
   */
  export const EDIT_TOOLS = ["edit", "write", "apply_patch"] as const
  export const WRITE_TOOLS: readonly string[] = [...EDIT_TOOLS, "multiedit", "patch"]
  /** A worker: change files and run commands, confined to the task's worktree (paths.ts). */
  export const WORKER = [...READ_ONLY, ...EDIT_TOOLS, "bash"] as const

  /** AirCoding's coordinator tools (src/tool/coordinator.ts), by the role that owns them. */
  export const COORDINATOR = {
    main: ["air_submit", "air_confirm", "air_status", "air_listen", "air_change", "air_answer", "air_pause", "air_resume"],
    architect: ["air_propose", "air_plan", "air_delta", "air_adr", "air_milestone", "air_decide"],
    reviewer: ["air_diff", "air_review"],
    executor: ["air_report", "air_capture", "air_probe"],
    debugger: ["air_report", "air_capture", "air_probe"],
    scheduler: ["air_status", "air_decide"],
  } as const satisfies Record<Name, readonly string[]>

  /**
   * Engine-internal ids that are never offered to the model but must keep working: `invalid` is where
   * the engine routes a malformed or unknown tool call so the model reads the error. Allowed for all.
   */
  export const ENGINE_INTERNAL = ["invalid"] as const

  /** The built-in tool ids of the pinned engine (opencode-ai 1.18.33, read from the binary). */
  export const ENGINE_BUILTIN = [
    "invalid",
    "question",
    "bash",
    "read",
    "glob",
    "grep",
    "edit",
    "write",
    "task",
    "webfetch",
    "todowrite",
    "websearch",
    "skill",
    "apply_patch",
    "execute",
    "lsp",
    "plan_exit",
  ] as const

  /**
   * One row of the table. `name` is any string so that a test can lay a row of its own beside the shipped ones
   * (`extend`); the shipped rows are `Role`s, named by `Name`.
   */
  export type Row = {
    name: string
    mode: "primary" | "subagent"
    /** Hidden from the TUI's agent list and from `@` mentions. */
    hidden?: boolean
    /** The engine's default agent. */
    default?: boolean
    /** Model-facing: what the agent is for (shown in agent lists and the `task` tool's catalog). */
    description: string
    /** The prompt file, under prompts/ at the repository root. */
    prompt: string
    /** The whitelist: exactly what this role may call. */
    tools: readonly string[]
    /** Reads, writes and commands are confined to the task's worktree (paths.ts). */
    confined: boolean
    /** No edit or write before evidence has been collected (evidence.ts). */
    evidenceFirst: boolean
  }
  export type Role = Row & { name: Name }
  /** A table of roles: the shipped one, or the shipped rows with a test's own (`extend`). */
  export type Table = Readonly<Record<string, Row>>

  const rows = {
    main: {
      name: "main",
      mode: "primary",
      default: true,
      description:
        "AirCoding's lead and the user's only contact: takes a requirement, has the Scheduler plan and carry it out with the team, reports progress and results. Never edits code or runs commands itself.",
      prompt: "main.md",
      tools: [...READ_ONLY, ...COORDINATOR.main],
      confined: false,
      evidenceFirst: false,
    },
    architect: {
      name: "architect",
      mode: "subagent",
      description:
        "Started by the Scheduler: discusses the requirement, proposes a plan, and after the user's confirmation writes the validated task graph, plan deltas and ADRs through its plan tools; reviews milestones. Read-only on code.",
      prompt: "architect.md",
      tools: [...READ_ONLY, ...COORDINATOR.architect],
      confined: false,
      evidenceFirst: false,
    },
    reviewer: {
      name: "reviewer",
      mode: "subagent",
      description:
        "Started by the Scheduler for one review: checks one task's change against the design (code-to-design table), then static analysis, then tests, and reports a verdict. Read-only.",
      prompt: "reviewer.md",
      tools: [...READ_ONLY, ...COORDINATOR.reviewer],
      confined: false,
      evidenceFirst: false,
    },
    executor: {
      name: "executor",
      mode: "subagent",
      description:
        "Started by the Scheduler for one task: changes code, builds and tests inside the task's own git worktree, commits, and reports to the Scheduler, which runs the gates.",
      prompt: "executor.md",
      tools: [...WORKER, ...COORDINATOR.executor],
      confined: true,
      evidenceFirst: false,
    },
    debugger: {
      name: "debugger",
      mode: "subagent",
      description:
        "Started by the Scheduler when a task's gates failed: collects evidence first (runs the failing build or test, reads the gate output), then tests one hypothesis at a time and fixes the cause inside the task's worktree.",
      prompt: "debugger.md",
      tools: [...WORKER, ...COORDINATOR.debugger],
      confined: true,
      evidenceFirst: true,
    },
    scheduler: {
      name: "scheduler",
      mode: "subagent",
      hidden: true,
      description:
        "Consulted by the Scheduler's code when no rule decides (a repair budget spent, contradictory verdicts): chooses exactly one of the options it is offered.",
      prompt: "scheduler.md",
      tools: [...COORDINATOR.scheduler],
      confined: false,
      evidenceFirst: false,
    },
  } satisfies Record<Name, Role>

  export const table: Readonly<Record<Name, Role>> = rows

  /**
   * The roles that change files, confined to their task's worktree: the rows that say `confined: true`. Each has
   * its context pack (`WORKER_PACKS` in scheduler/runtime/sessions/context-pack.ts); when the machine starts one
   * is the core's business (`WORKER_ROLES` in scheduler/core/vocabulary.ts names the ones it dispatches).
   */
  export type Worker = { [N in Name]: (typeof rows)[N]["confined"] extends true ? N : never }[Name]

  /** The shipped rows and `extra` ones (a row of the same name replaces the shipped one): a temporary table for a test. */
  export function extend(...extra: Row[]): Table {
    return { ...table, ...Object.fromEntries(extra.map((row) => [row.name, row])) }
  }

  /** The row an agent name stands for in `roles`, or undefined for any agent that is not AirCoding's. */
  export function rowOf(agent: unknown, roles: Table = table): Row | undefined {
    return typeof agent === "string" && Object.hasOwn(roles, agent) ? roles[agent] : undefined
  }

  export function isRole(name: unknown): name is Name {
    return typeof name === "string" && (names as readonly string[]).includes(name)
  }

  /** The role an agent name stands for, or undefined for any agent that is not AirCoding's. */
  export function of(agent: string | undefined): Name | undefined {
    return isRole(agent) ? agent : undefined
  }

  export function allows(role: string, tool: string, roles: Table = table): boolean {
    return !!rowOf(role, roles)?.tools.includes(tool) || (ENGINE_INTERNAL as readonly string[]).includes(tool)
  }

  /** AirCoding's own tools a role must be offered (what the launcher checks the engine for). */
  export function coordinatorTools(role: Name): string[] {
    return [...COORDINATOR[role]]
  }

  /** Every coordinator tool id, once. */
  export const AIR_TOOLS: readonly string[] = [...new Set(Object.values(COORDINATOR).flat())]

  /** Roles that change files: confined to their task's worktree. */
  export function isWorker(role: Name): role is Worker {
    return table[role].confined
  }

  /** The roles whose row contains `tool` (for "that tool belongs to …" hints). */
  export function owners(tool: string, roles: Table = table): string[] {
    return Object.values(roles)
      .filter((row) => row.tools.includes(tool))
      .map((row) => row.name)
  }

  export function isWriteTool(tool: string): boolean {
    return WRITE_TOOLS.includes(tool)
  }

  /**
   * What the engine should offer `role` given the tools it has (e.g. the ids in a model request):
   * the row, intersected with what exists, sorted as the engine sends them. For end-to-end checks.
   */
  export function offered(role: string, engineTools: Iterable<string>, roles: Table = table): string[] {
    const row = new Set(rowOf(role, roles)?.tools ?? [])
    return [...new Set(engineTools)].filter((t) => row.has(t)).sort()
  }
}
