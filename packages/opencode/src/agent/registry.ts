import { homedir } from "node:os"
import { join } from "node:path"
import type { Evidence as EvidenceNs } from "./evidence"
import type { Language } from "./language"
import { Paths } from "./paths"
import { Roles } from "./roles"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * Which role each session plays. The `tool.execute.before` hook is not told the calling agent, so the
 * guard reads it from here. It is filled from three sides, all in the plugin:
 * - the Scheduler's code records the sessions it creates, with their agent and worktree (`record`);
 * - the `chat.params` hook — which fires before every model call and names the agent — records every
 *   session, whatever started it (the TUI, the SDK, the task tool) (`record(id, { agent })`);
 * - `session.created` events give the directory (`noteDirectory`).
 * For a session still unknown when a tool is called, an optional resolver (e.g. reading the session's
 * last user message with the SDK) is asked once per call (`resolve`).
 * Module-level: the engine loads the plugin once per instance, all in one process, so every instance
 * (the project's, each worktree's) shares this map.
 */
export namespace Sessions {
  /** `turn`: the model turn it was collected in (see `nextTurn`); an edit of the same turn cannot rely on it. */
  export type Evidence = { at: string; tool: string; detail: string; kind?: EvidenceNs.Kind; turn?: number }
  export type Info = {
    /** The agent name ("" while only the directory is known). */
    agent: string
    /** The directory the session's instance runs in. */
    directory?: string
    /** For executor and debugger sessions started by the Scheduler: the task's worktree. */
    worktree?: string
    taskId?: string
    /** The task's gate evidence directory, readable (never writable) by the worker. */
    evidenceDir?: string
    /** The project's configured build/test/analysis commands (count as evidence). */
    commands?: string[]
    /** The language of texts from code for this session (default: the registry's). */
    language?: Language.Setting
    evidence: Evidence[]
    /** Model turns so far (chat.params fires once per model call). */
    turn?: number
  }

  export type Resolver = (sessionID: string) => Promise<Partial<Info> | undefined> | Partial<Info> | undefined
  export type Options = {
    resolver?: Resolver
    /** Receives every guard event (refusals, evidence): the plugin appends them to the run's log. */
    onEvent?: (event: Record<string, unknown> & { type: string }) => void
    /** The language setting (or a function of the session) for refusal texts. */
    language?: Language.Setting | ((info: Info | undefined) => Language.Setting)
    /**
     * The OS sandbox around workers' shell commands: "on" (refuse the command when no sandbox can start),
     * "fallback" (the user allowed running with the text checks only), "off" (not applied: unit tests,
     * callers outside the plugin). The plugin sets it from the settings.
     */
    sandbox?: "on" | "fallback" | "off"
    /** The environment sandboxed commands start from (reduced there); default `process.env`. */
    sandboxEnv?: Readonly<Record<string, string | undefined>>
  }

  const sessions = new Map<string, Info>()
  let options: Options = {}

  export function configure(next: Options): void {
    options = { ...options, ...next }
  }

  export function settings(): Readonly<Options> {
    return options
  }

  export function record(sessionID: string, info: Partial<Info> & { agent?: string }): Info {
    const existing = sessions.get(sessionID)
    const defined = Object.fromEntries(Object.entries(info).filter(([, v]) => v !== undefined && v !== "")) as Partial<Info>
    const next: Info = { agent: "", evidence: [], ...existing, ...defined }
    next.evidence = existing?.evidence ?? info.evidence ?? []
    sessions.set(sessionID, next)
    return next
  }

  /** Only the directory is known yet (from session.created): keep it for when the agent is. */
  export function noteDirectory(sessionID: string, directory: string): void {
    const existing = sessions.get(sessionID)
    if (existing) existing.directory ??= directory
    else sessions.set(sessionID, { agent: "", directory, evidence: [] })
  }

  export function get(sessionID: string): Info | undefined {
    return sessions.get(sessionID)
  }

  export function role(sessionID: string): Roles.Name | undefined {
    return Roles.of(sessions.get(sessionID)?.agent)
  }

  /** The session's info, asking the resolver when its agent is not known yet. */
  export async function resolve(sessionID: string): Promise<Info | undefined> {
    const known = sessions.get(sessionID)
    if (known?.agent || !options.resolver) return known
    try {
      const found = await options.resolver(sessionID)
      if (found?.agent) return record(sessionID, found)
    } catch {
      // An unreachable resolver leaves the session unknown: its calls are not AirCoding's to guard.
    }
    return sessions.get(sessionID)
  }

  /** A new model turn of the session (the plugin calls it from chat.params); returns its number. */
  export function nextTurn(sessionID: string): number {
    const info = sessions.get(sessionID) ?? record(sessionID, {})
    info.turn = (info.turn ?? 0) + 1
    return info.turn
  }

  /** Evidence collected before the current turn: what an edit of this turn may rely on. */
  export function priorEvidence(info: Info): Evidence[] {
    return info.evidence.filter((e) => e.turn === undefined || info.turn === undefined || e.turn < info.turn)
  }

  export function addEvidence(sessionID: string, evidence: Evidence): void {
    sessions.get(sessionID)?.evidence.push(evidence)
  }

  export function forget(sessionID: string): void {
    sessions.delete(sessionID)
  }

  /** Tests only. */
  export function clear(): void {
    sessions.clear()
    options = {}
  }

  /** The directory a worker is confined to: its worktree, else the directory its session runs in. */
  export function rootOf(info: Info): string | undefined {
    return info.worktree ?? info.directory
  }

  /**
   * Where the engine keeps the full output of a tool call it truncated (it tells the model to read it
   * there): `$XDG_DATA_HOME/opencode/tool-output`.
   */
  export function engineToolOutputDir(): string {
    const data = process.env.XDG_DATA_HOME || join(homedir(), ".local", "share")
    return join(data, "opencode", "tool-output")
  }

  /**
   * What a worker may read besides its worktree: the engine's truncated tool outputs, its task's gate evidence and the project's shared
   * plan and rules (`<project>/.air/shared`), when the worktree sits at
   * `<project>/.air/local/worktrees/<task>` or the evidence directory is given.
   */
  export function readRootsOf(info: Info): string[] {
    const out: string[] = [engineToolOutputDir()]
    if (info.evidenceDir) out.push(info.evidenceDir)
    const project = info.worktree ? Paths.projectOfWorktree(info.worktree) : undefined
    if (project) {
      if (!info.evidenceDir) out.push(AirPaths.evidence(project.root, info.taskId ?? project.task))
      out.push(AirPaths.shared(project.root))
    }
    return out
  }
}
