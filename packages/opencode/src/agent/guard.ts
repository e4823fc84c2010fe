import { isAbsolute, resolve } from "node:path"
import { SandboxEnvironment } from "../scheduler/runtime/sandbox/environment"
import { SandboxShell } from "../scheduler/runtime/sandbox/shell"
import { Evidence } from "./evidence"
import { DebugSteps } from "./debug-steps"
import { Language } from "./language"
import { Paths } from "./paths"
import { Roles } from "./roles"
import { Sessions } from "./registry"
import { SecretPaths } from "./secrets"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * The hard guard behind `tool.execute.before`. A call outside the caller's row of the whitelist (any
 * built-in, MCP tool, other plugin's tool, `task`), outside its worktree, into `.air/local`, or — for the
 * debugger — an edit before evidence, is refused with a message for the model that names the agent, the
 * tool and what to do instead. Sessions whose agent is not one of AirCoding's roles are left alone.
 *
 * `evaluate` is the pure decision (it only reads the file system to resolve symlinks); `decide(sessionID,
 * …)` looks the session up in the registry; `before` is the whole hook body.
 */
export namespace Guard {
  export type Reason = "tool" | "path" | "air-local" | "evidence" | "unassigned" | "secret" | "sandbox"

  export type Allow = {
    allow: true
    /** Replacement arguments (bash `workdir`, absolute paths), when they differ from the call's. */
    args?: Record<string, unknown>
    /** What the call proves, for the debugger's evidence rule: record it when the call is allowed. */
    item?: Evidence.Item
    /** `item` as one line ("test: ctest --test-dir build"). */
    evidence?: string
  }
  export type Refuse = {
    allow: false
    /** The text the model receives as the tool's result. */
    message: string
    reason: Reason
    /** The path or tool that caused the refusal. */
    detail: string
  }
  export type Decision = Allow | Refuse

  export type RefusedEvent = {
    type: "guard.refused"
    sessionID: string
    callID?: string
    agent: string
    tool: string
    reason: Reason
    detail: string
    message: string
  }
  export type EvidenceEvent = { type: "guard.evidence"; sessionID: string; agent: string; tool: string; evidence: Evidence.Item }

  export type SessionView = {
    /** The task's worktree (executor, debugger); the root of confinement. */
    worktree?: string
    /** The directory the session runs in: the root when no worktree is known. */
    directory?: string
    /** How much evidence the session has collected so far. */
    evidenceCount: number
    /** Readable, not writable, besides the root: the task's evidence directory, the shared plan. */
    readRoots?: readonly string[]
    /** The project's configured build/test/analysis commands. */
    commands?: readonly string[]
    /** The debugger's failure (the task's last failed gate report): evidence must reproduce it. */
    failure?: Evidence.Failure
  }

  export type Input = {
    /** The session's agent; anything but one of AirCoding's roles is allowed everything. */
    agent: string | undefined
    tool: string
    args: unknown
    session: SessionView
    /** The language of the refusal text: a setting ("auto", "zh-CN", …) or a catalog. Default English. */
    language?: Language.Setting
    /** The table the agent's row is read from (default: the shipped one; a test's `Roles.extend(…)`). */
    roles?: Roles.Table
  }

  function refuse(reason: Reason, detail: string, message: string): Refuse {
    return { allow: false, reason, detail, message }
  }

  /** The refusal text for a tool outside the role's row. */
  export function toolMessage(role: string, tool: string, language: Language.Setting = "en", roles: Roles.Table = Roles.table): string {
    const owners = Roles.owners(tool, roles)
    const extra =
      tool === "task"
        ? Language.t(language, "guard.tool.task") + " "
        : owners.length > 0
          ? Language.t(language, "guard.tool.owner", { tool, owners: owners.join("/") }) + " "
          : Roles.ENGINE_BUILTIN.includes(tool as never) || Roles.WRITE_TOOLS.includes(tool)
            ? ""
            : Language.t(language, "guard.tool.foreign", { tool }) + " "
    // A role without words of its own (`guard.instead.<role>`) is told its row.
    const instead = Language.tOr(language, `guard.instead.${role}`, Language.t(language, "guard.instead.row", { tools: Roles.rowOf(role, roles)?.tools.join(", ") ?? "" }))
    return Language.t(language, "guard.tool", { agent: role, tool, instead: extra + instead })
  }

  function pathRefusal(role: string, tool: string, root: string, why: Paths.Why, path: string, language: Language.Setting): Refuse {
    if (why === "air-local") return refuse("air-local", path, Language.t(language, "guard.airlocal", { agent: role, tool, path }))
    const whyText = Language.t(language, `guard.why.${why}`, { path })
    return refuse("path", path, Language.t(language, "guard.path", { agent: role, tool, root, why: whyText }))
  }

  /** A `.env` file a call names (file tools' path arguments, words of a shell command), if any. */
  export function secretPath(tool: string, args: Record<string, unknown>): string | undefined {
    const values: unknown[] = [args.filePath, args.path, args.pattern, args.include]
    if (tool === "bash") values.push(...String(args.command ?? "").split(/[\s'"`;|&<>()=]+/))
    if (tool === "apply_patch" || tool === "patch") values.push(...Paths.patchPaths(String(args.patchText ?? "")))
    for (const v of values) {
      if (typeof v !== "string" || v === "") continue
      const name = v.split(/[\\/]/).pop() ?? ""
      if (SandboxEnvironment.isEnvFile(name)) return v
    }
    return undefined
  }

  /** The engine's tools that read files in its own process (outside the OS sandbox). */
  const FILE_TOOLS: ReadonlySet<string> = new Set(["read", "grep", "glob", "list"])
  const SEARCH_TOOLS: ReadonlySet<string> = new Set(["grep", "glob", "list"])

  /** The pure decision for one tool call. */
  export function evaluate(input: Input): Decision {
    const roles = input.roles ?? Roles.table
    const spec = Roles.rowOf(input.agent, roles)
    const role = spec?.name
    const { tool } = input
    const language = input.language ?? "en"
    let args: Record<string, unknown> = input.args && typeof input.args === "object" ? (input.args as Record<string, unknown>) : {}
    if (!spec || !role) {
      // Only the Scheduler's code starts AirCoding's roles: never another agent's `task` tool, whatever
      // its permissions say (a build agent with "*": "allow" would start an executor with no worktree).
      if (tool === "task" && Roles.rowOf(args.subagent_type, roles))
        return refuse(
          "tool",
          "task",
          `The ${String(args.subagent_type)} agent is started only by AirCoding's Scheduler, for a task it planned — ` +
            `not through the task tool. Ask AirCoding's main agent to submit the work instead.`,
        )
      return { allow: true }
    }
    if (!Roles.allows(role, tool, roles)) return refuse("tool", tool, toolMessage(role, tool, language, roles))
    // No configuration re-opens what a row closes: .env files stay closed to every role.
    const secret = secretPath(tool, args)
    if (secret)
      return refuse(
        "secret",
        secret,
        `The ${role} agent may not use \`${tool}\` on ${secret}: .env files hold secrets and are closed to every AirCoding agent, whatever the configuration says. Use .env.example, or ask for the value through the Scheduler.`,
      )
    // The engine's file tools run outside the OS sandbox: secret files are fenced here (see secrets.ts).
    let fenced = false
    if (FILE_TOOLS.has(tool)) {
      const f = SecretPaths.fence(tool, args)
      if (!f.ok)
        return refuse(
          "secret",
          f.detail,
          `The ${role} agent may not use \`${tool}\` on ${f.detail}: it names or reaches secret files (.env, .envrc, private keys, credential files, ~/.ssh, ~/.aws, the engine's auth, .git/config), which are closed to every AirCoding agent. ` +
            `Search or read the source files instead (for grep, an include such as "*.{cpp,h}").`,
        )
      if (f.args) {
        args = f.args
        fenced = true
      }
    }

    // Defence in depth: whatever a row says, no role changes `.air/local` (only the Scheduler's code does).
    if (!spec.confined) {
      if (Roles.isWriteTool(tool) || tool === "bash") {
        const text = tool === "bash" ? String(args.command ?? "") : JSON.stringify(args)
        if (Paths.touchesLocalState(text)) return refuse("air-local", AirPaths.LOCAL, Language.t(language, "guard.airlocal", { agent: role, tool, path: AirPaths.LOCAL }))
      }
      // A reviewer of a task reads the task's worktree: its relative paths mean the worktree, not the project.
      const worktree = input.session.worktree
      if (worktree && (tool === "read" || tool === "glob" || tool === "grep")) {
        const key = tool === "read" ? "filePath" : "path"
        const value = args[key]
        if (value === undefined && tool !== "read") return { allow: true, args: { ...args, [key]: worktree } }
        if (typeof value === "string" && value !== "" && !isAbsolute(value)) return { allow: true, args: { ...args, [key]: resolve(worktree, value) } }
      }
      return fenced ? { allow: true, args } : { allow: true }
    }

    const root = input.session.worktree ?? input.session.directory
    if (!root) return refuse("unassigned", tool, Language.t(language, "guard.unassigned", { agent: role }))
    const readRoots = input.session.readRoots ?? []

    let next: Record<string, unknown> | undefined
    if (tool === "bash") {
      const command = typeof args.command === "string" ? args.command : ""
      const v = Paths.bash(command, { root, workdir: args.workdir, readRoots })
      if (!v.ok) return pathRefusal(role, tool, root, v.why, v.path, language)
      // The worktree (or a directory inside it) is the working directory, whatever the model asked for.
      if (args.workdir !== v.workdir) next = { ...args, workdir: v.workdir }
    } else {
      const v = Paths.confine(tool, args, { root, readRoots })
      if (!v.ok) return pathRefusal(role, tool, root, v.why, v.path, language)
      if (v.changed) next = v.args
    }

    if (fenced && !next) next = args
    const effective = next ?? args
    const item = spec.evidenceFirst
      ? Evidence.classify(tool, effective, { evidenceDirs: readRoots, commands: input.session.commands, root, ...(input.session.failure ? { failure: input.session.failure } : {}) })
      : undefined
    if (spec.evidenceFirst && input.session.evidenceCount === 0 && !item) {
      const writes = Roles.isWriteTool(tool) || (tool === "bash" && Evidence.writesFiles(String(effective.command ?? "")))
      if (writes)
        return refuse("evidence", tool, Language.t(language, "guard.evidence", { tool, example: Evidence.example(input.session.commands) }))
    }
    return {
      allow: true,
      ...(next ? { args: next } : {}),
      ...(item ? { item, evidence: `${item.kind}: ${item.detail}` } : {}),
    }
  }

  function languageFor(info: Sessions.Info | undefined): Language.Setting {
    if (info?.language) return info.language
    const l = Sessions.settings().language
    return typeof l === "function" ? l(info) : (l ?? "en")
  }

  function viewOf(info: Sessions.Info): SessionView {
    return {
      worktree: info.worktree,
      directory: info.directory,
      // Evidence of the turn in progress does not count: a look and an edit in one reply prove nothing.
      evidenceCount: Sessions.priorEvidence(info).length,
      readRoots: Sessions.readRootsOf(info),
      commands: info.commands,
      ...failureView(info),
    }
  }

  /** The debugger's failure, read from its task's evidence dir (nothing to compare for other roles). */
  function failureView(info: Sessions.Info): { failure?: Evidence.Failure } {
    if (!Roles.rowOf(info.agent)?.evidenceFirst || Sessions.priorEvidence(info).length > 0) return {}
    const project = info.worktree ? Paths.projectOfWorktree(info.worktree) : undefined
    const dir = info.evidenceDir ? info.evidenceDir : project ? AirPaths.evidence(project.root, info.taskId ?? project.task) : undefined
    const failure = dir ? Evidence.failureOf(dir) : undefined
    return failure ? { failure } : {}
  }

  /**
   * Replaces the contents of the engine's argument object in place: the engine keeps its own reference
   * to the object it passed to the hook, so assigning `output.args = …` would have no effect.
   */
  export function applyArgs(target: Record<string, unknown>, next: Record<string, unknown>): void {
    for (const k of Object.keys(target)) if (!(k in next)) delete target[k]
    Object.assign(target, next)
  }

  /** The pure decision (see `evaluate`). */
  export function decide(input: Input): Decision
  /**
   * The decision for a call of a registered session. Rewritten arguments are also written into `args`
   * in place (it should be the hook's `output.args`). Nothing is recorded: see `before`.
   */
  export function decide(sessionID: string, tool: string, args: Record<string, unknown>): Decision
  export function decide(a: Input | string, tool?: string, args?: Record<string, unknown>): Decision {
    if (typeof a !== "string") return evaluate(a)
    const info = Sessions.get(a)
    if (!info) return { allow: true }
    const decision = evaluate({ agent: info.agent, tool: tool ?? "", args: args ?? {}, session: viewOf(info), language: languageFor(info) })
    if (decision.allow && decision.args && args) applyArgs(args, decision.args)
    return decision
  }

  /** The refusal as an event for the run's log. */
  export function refusedEvent(sessionID: string, agent: string, tool: string, decision: Refuse, callID?: string): RefusedEvent {
    return {
      type: "guard.refused",
      sessionID,
      ...(callID ? { callID } : {}),
      agent,
      tool,
      reason: decision.reason,
      detail: decision.detail,
      message: decision.message,
    }
  }

  /**
   * The whole `tool.execute.before` hook:
   *   "tool.execute.before": (input, output) => Guard.before(input, output)
   * Finds the session (registry, then the resolver), decides, records evidence in the registry, sends
   * events to `Sessions.configure({ onEvent })`, rewrites `output.args` in place, and throws the refusal
   * text (the engine gives it to the model as the tool's result).
   */
  /** Evidence a call would give, kept until it has run (`after`): a look that failed to run proves nothing. */
  const pending = new Map<string, { sessionID: string; agent: string; item: Evidence.Item }>()

  function callKey(sessionID: string, callID: string | undefined): string | undefined {
    return callID ? `${sessionID}:${callID}` : undefined
  }

  export async function before(input: { tool: string; sessionID: string; callID?: string }, output: { args: unknown }): Promise<void> {
    const info = await Sessions.resolve(input.sessionID)
    const role = Roles.of(info?.agent)
    if (!info || !role) {
      if (input.tool !== "task") return
      const decision = evaluate({ agent: info?.agent, tool: input.tool, args: output.args, session: { evidenceCount: 0 } })
      if (!decision.allow) {
        try {
          Sessions.settings().onEvent?.(refusedEvent(input.sessionID, info?.agent ?? "", input.tool, decision, input.callID))
        } catch {
          // as below
        }
        throw new Error(decision.message)
      }
      return
    }
    const args = (output.args && typeof output.args === "object" ? output.args : (output.args = {})) as Record<string, unknown>
    // A call of a tool the role is not offered reaches us as the engine's `invalid` tool, which already
    // answers the model; the attempt is still a refusal, and is recorded as one.
    if (input.tool === "invalid" && typeof args.tool === "string" && !Roles.allows(role, args.tool)) {
      const message = toolMessage(role, args.tool, languageFor(info))
      try {
        Sessions.settings().onEvent?.(refusedEvent(input.sessionID, info.agent, args.tool, { allow: false, reason: "tool", detail: args.tool, message }, input.callID))
      } catch {
        // Recording must never turn a refusal into a crash of the session loop.
      }
      return
    }
    const decision = evaluate({ agent: info.agent, tool: input.tool, args, session: viewOf(info), language: languageFor(info) })
    const emit = Sessions.settings().onEvent
    if (!decision.allow) {
      try {
        emit?.(refusedEvent(input.sessionID, info.agent, input.tool, decision, input.callID))
      } catch {
        // Recording must never turn a refusal into a crash of the session loop.
      }
      throw new Error(decision.message)
    }
    if (decision.args) applyArgs(args, decision.args)
    const key = callKey(input.sessionID, input.callID)
    // The Debugger's steps are checked against what it ran and edited, in order (the command as it wrote it).
    if (role === "debugger" && key) DebugSteps.begin(key, input.sessionID, input.tool, args)
    if (input.tool === "bash" && Roles.isWorker(role) && typeof args.command === "string") {
      const worktree = Sessions.rootOf(info)
      const mode = Sessions.settings().sandbox ?? "off"
      if (worktree && mode !== "off") {
        if (!key) throw new Error("A worker's command needs a call id to run in the sandbox; nothing was run.")
        const entered = await SandboxShell.enter({ key, worktree, command: args.command, mode, env: Sessions.settings().sandboxEnv })
        if (entered.kind === "refused") {
          const refusal: Refuse = { allow: false, reason: "sandbox", detail: "bwrap", message: entered.message }
          try {
            emit?.(refusedEvent(input.sessionID, info.agent, input.tool, refusal, input.callID))
          } catch {
            // as above
          }
          throw new Error(entered.message)
        }
        if (entered.kind === "sandboxed") args.command = entered.command
      }
    }
    if (decision.item && key) pending.set(key, { sessionID: input.sessionID, agent: info.agent, item: decision.item })
    // A report sends the task branch to the gates: it must hold the worker's commits, even when a
    // sandboxed command was aborted before its branch could be settled.
    if (input.tool === "air_report" && Roles.isWorker(role) && (Sessions.settings().sandbox ?? "off") !== "off") {
      const worktree = Sessions.rootOf(info)
      if (worktree) await SandboxShell.heal(worktree).catch(() => undefined)
    }
  }

  /**
   * The whole `tool.execute.after` hook: the sandbox's git bookkeeping (the task branch follows the
   * worker's commits), and evidence recorded once the call has run — in the turn it ran in.
   */
  export async function after(input: { tool: string; sessionID: string; callID?: string }, output: { output?: unknown; metadata?: unknown }): Promise<void> {
    // What grep, glob and list found, cleaned of secret files before the model sees it (the arguments were
    // already made to skip them; this also covers a file the exclusion glob does not name).
    if (SEARCH_TOOLS.has(input.tool) && typeof output.output === "string") {
      const info = Sessions.get(input.sessionID)
      if (info && Roles.of(info.agent)) {
        const root = Sessions.rootOf(info)
        const project = root ? Paths.projectOfWorktree(root)?.root : undefined
        output.output = SecretPaths.clean(input.tool, output.output, [root, project].filter((r): r is string => !!r)).output
      }
    }
    const key = callKey(input.sessionID, input.callID)
    if (!key) return
    try {
      await SandboxShell.leave(key)
    } catch {
      // A branch that could not be moved shows at the gates (uncommitted work); the session goes on.
    }
    const metadata = output.metadata && typeof output.metadata === "object" ? (output.metadata as Record<string, unknown>) : {}
    DebugSteps.end(key, metadata)
    const p = pending.get(key)
    if (!p) return
    pending.delete(key)
    if (!Evidence.ran(p.item, { exit: metadata.exit, output: output.output })) return
    const info = Sessions.get(p.sessionID)
    const item = { ...p.item, at: new Date().toISOString() }
    Sessions.addEvidence(p.sessionID, { at: item.at, tool: item.tool, detail: item.detail, kind: item.kind, turn: info?.turn })
    try {
      Sessions.settings().onEvent?.({ type: "guard.evidence", sessionID: p.sessionID, agent: p.agent, tool: input.tool, evidence: item } satisfies EvidenceEvent)
    } catch {
      // Recording must never turn a finished call into a crash of the session loop.
    }
  }
}
