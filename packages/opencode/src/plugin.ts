import { existsSync } from "node:fs"
import { join } from "node:path"
import type { Hooks, Plugin } from "@opencode-ai/plugin"
import { Guard, Permission, Prompt, Sessions } from "./agent"
import { Orchestrators } from "./scheduler/runtime/orchestrator"
import { ChildSessions } from "./scheduler/runtime/sessions/sessions"
import { Settings } from "./scheduler/runtime/settings"
import { SandboxExec } from "./scheduler/runtime/sandbox/exec"
import { Usage } from "./scheduler/runtime/sessions/usage"
import { JsonLines } from "./scheduler/runtime/store/jsonl"
import { CoordinatorTools } from "./tool/coordinator"
import { resolveLang } from "./text/words"
import { TuiBridge } from "./tui/bridge"
import { Launcher } from "./engine/launcher"
import { TuiView } from "./tui/view"
import { GuardLog } from "./scheduler/runtime/sessions/guard-log"
import { CompactionGuard } from "./scheduler/runtime/sessions/compaction-guard"
import { CompactionCheck } from "./scheduler/core/compaction-check"
import { AirPaths } from "./scheduler/core/air-paths"

/** Main and the Architect: the roles whose compactions are checked (workers get a fresh session instead). */
function compactedRole(agent: string | undefined): CompactionCheck.Role | undefined {
  return (CompactionCheck.ROLES as readonly string[]).includes(agent ?? "") ? (agent as CompactionCheck.Role) : undefined
}

/**
 * AirCoding inside OpenCode. The engine loads this module once per instance (one per directory: the
 * project, and each task worktree), all in one process; module-level state — the session registry,
 * the orchestrators — is therefore shared, while each instance's hooks see that instance's events.
 */
/** The sandbox mode for workers' commands: "fallback" only when the user's settings allow it. */
function sandboxModeOf(directory: string): "on" | "fallback" {
  return SandboxExec.modeOf(Orchestrators.projectRoot(directory))
}

function languageOf(directory: string): string {
  try {
    return Settings.load(Orchestrators.projectRoot(directory)).language
  } catch {
    return "auto"
  }
}

/** Guard events (refusals, evidence) are kept beside the Scheduler's log: what each role tried, and when. */
function recordGuardEvent(directory: string, event: Record<string, unknown>): void {
  const file = GuardLog.file(Orchestrators.projectRoot(directory))
  JsonLines.append(file, { at: new Date().toISOString(), ...event }, { fsync: false })
}

/** Reopening the TUI says where the run stands; the toast waits a moment for the TUI to draw. */
function announce(input: Parameters<Plugin>[0]): void {
  const message = Orchestrators.forRoot(input.directory).whereItStands()
  if (!message) return
  for (const delay of [3_000, 12_000])
    setTimeout(() => void input.client.tui.showToast({ body: { message: TuiView.toastText(message), variant: "info", duration: 20_000 } }).catch(() => undefined), delay).unref?.()
}

/** Once per engine process: it ends when the aircoding process that launched it is gone (engine/launcher.ts). */
let watchingLauncher = false
function watchLauncher(): void {
  if (watchingLauncher) return
  watchingLauncher = true
  Launcher.watch(() => {
    // Our own children (gates, builds) are killed by the process runner's exit hook; the engine's sessions end with us.
    process.exit(137)
  })
}

const server: Plugin = async (input) => {
  watchLauncher()
  Orchestrators.attach(input.directory, input.client)
  Orchestrators.configure({ onSessionStarted: (id, info) => void Sessions.record(id, info) })
  const directoryOf = (sessionID: string) => Sessions.get(sessionID)?.directory ?? input.directory
  // The TUI picks up a run that a crash interrupted; short-lived engine processes (the launcher's checks) must not.
  const hasRun = existsSync(join(input.directory, AirPaths.EVENTS))
  if (process.env.AIRCODING_RESUME_ON_START === "1" && hasRun && Orchestrators.projectRoot(input.directory) === input.directory)
    void Orchestrators.forRoot(input.directory)
      .start()
      .then(() => announce(input))
      .catch(() => undefined)
  Sessions.configure({
    onEvent: (event) => recordGuardEvent(directoryOf(String(event.sessionID ?? "")), event),
    language: (info) => languageOf(info?.directory ?? input.directory),
    sandbox: sandboxModeOf(input.directory),
  })

  CompactionGuard.keepIn(AirPaths.state(Orchestrators.projectRoot(input.directory), "compaction"))
  const checkCompaction = (sessionID: string, role: CompactionCheck.Role) =>
    CompactionGuard.afterCompaction(input.client, sessionID, role, directoryOf(sessionID), (e) =>
      e.type === "context.compacted" ? Orchestrators.forRoot(directoryOf(sessionID)).compacted(e) : Promise.resolve(),
    )

  const hooks: Hooks = {
    // A throw here would silently drop every agent: languageOf never throws, and the prompts ship with us.
    config: async (cfg) => {
      const language = languageOf(input.directory)
      Permission.apply(cfg as Parameters<typeof Permission.apply>[0], (role) => Prompt.load(role, language))
    },
    tool: CoordinatorTools.build(),
    "chat.params": async (i) => {
      Sessions.record(i.sessionID, { agent: i.agent, directory: input.directory })
      if (compactedRole(i.agent)) CompactionGuard.noteModel(i.sessionID, i.model)
      Sessions.nextTurn(i.sessionID)
      try {
        Usage.record(Orchestrators.projectRoot(directoryOf(i.sessionID)), i.agent, i.sessionID)
      } catch {
        // Counting requests is bookkeeping; a full disk must not stop the model call.
      }
    },
    // Compaction checked in code (issue 38, item 4; sessions/compaction-guard.ts).
    "experimental.session.compacting": async (i, o) => {
      if (compactedRole(Sessions.get(i.sessionID)?.agent)) o.context.push(CompactionGuard.KEEP_CONTEXT)
    },
    // Awaited by the engine after the summary is written and before the session's next request.
    "experimental.compaction.autocontinue": async (i) => {
      const role = compactedRole(i.agent) ?? compactedRole(Sessions.get(i.sessionID)?.agent)
      if (role) await checkCompaction(i.sessionID, role)
    },
    "experimental.chat.messages.transform": async (_i, o) => CompactionGuard.transform(o.messages as Parameters<typeof CompactionGuard.transform>[0]),
    "tool.execute.before": (i, o) => Guard.before(i, o),
    "tool.execute.after": (i, o) => Guard.after(i, o),
    event: async ({ event }) => {
      if (event.type === "session.created") Sessions.noteDirectory(event.properties.info.id, event.properties.info.directory)
      if (event.type === "session.deleted") Sessions.forget(event.properties.info.id)
      // A compaction the user asked for (no autocontinue hook): checked once it is done.
      if (event.type === "session.compacted") {
        const role = compactedRole(Sessions.get(event.properties.sessionID)?.agent)
        if (role) void checkCompaction(event.properties.sessionID, role)
      }
      // In the TUI, Main and the Architect wait for the person between turns: a conversation the estimate says
      // will not fit the next request is compacted then, not after the provider refused it.
      if (event.type === "session.idle" && process.env.AIRCODING_INTERACTIVE === "1" && compactedRole(Sessions.get(event.properties.sessionID)?.agent))
        void CompactionGuard.compactIfNeeded(input.client, event.properties.sessionID, directoryOf(event.properties.sessionID))
      ChildSessions.observe(event)
      // The TUI plugin's commands and answers (src/tui/bridge.ts): carried out without a model request,
      // by the project's instance only (task worktrees have instances of their own).
      if (Orchestrators.projectRoot(input.directory) === input.directory)
        void TuiBridge.onBusEvent(
          event,
          () => Orchestrators.forRoot(input.directory),
          () => resolveLang(input.directory),
          // The server does not know the terminal's width: lines for the toast of an 80-column terminal (54 columns).
          (message, variant) => input.client.tui.showToast({ body: { message: TuiView.toastText(message), variant } }),
        )
      Orchestrators.observe(input.directory, event)
    },
  }
  return hooks
}

export default { id: "aircoding", server }
