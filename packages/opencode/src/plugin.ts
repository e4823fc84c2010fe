import { appendFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Hooks, Plugin } from "@opencode-ai/plugin"
import { Guard, Permission, Prompt, Roles, Sessions } from "./agent"
import { Orchestrators } from "./scheduler/runtime"
import { ChildSessions } from "./scheduler/sessions"
import { Settings } from "./scheduler/settings"
import { Usage } from "./scheduler/usage"
import { CoordinatorTools } from "./tool/coordinator"

/**
 * AirCoding inside OpenCode. The engine loads this module once per instance (one per directory: the
 * project, and each task worktree), all in one process; module-level state — the session registry,
 * the orchestrators — is therefore shared, while each instance's hooks see that instance's events.
 */
function languageOf(directory: string): string {
  try {
    return Settings.load(Orchestrators.projectRoot(directory)).language
  } catch {
    return "auto"
  }
}

/** Guard refusals are kept beside the Scheduler's log, so a person can see what each role tried. */
function recordRefusal(directory: string, entry: Record<string, unknown>): void {
  try {
    const dir = join(Orchestrators.projectRoot(directory), ".air", "local", "state")
    mkdirSync(dir, { recursive: true })
    appendFileSync(join(dir, "guard.jsonl"), JSON.stringify({ at: new Date().toISOString(), type: "guard.refused", ...entry }) + "\n")
  } catch {
    // Recording must never turn a refusal into a crash of the session loop.
  }
}

const server: Plugin = async (input) => {
  Orchestrators.attach(input.directory, input.client)
  Orchestrators.configure({ onSessionStarted: (id, info) => void Sessions.record(id, info) })
  const directoryOf = (sessionID: string) => Sessions.get(sessionID)?.directory ?? input.directory

  const hooks: Hooks = {
    config: async (cfg) => {
      const language = languageOf(input.directory)
      const agents = (cfg.agent ??= {}) as Record<string, Record<string, unknown> | undefined>
      for (const role of Roles.names) agents[role] = Permission.agentConfig(role, Prompt.load(role, language), agents[role])
      ;(cfg as { default_agent?: string }).default_agent = "main"
    },
    tool: CoordinatorTools.build(),
    "chat.params": async (i) => {
      Sessions.record(i.sessionID, { agent: i.agent })
      try {
        Usage.record(Orchestrators.projectRoot(directoryOf(i.sessionID)), i.agent, i.sessionID)
      } catch {
        // Counting requests is bookkeeping; a full disk must not stop the model call.
      }
    },
    "tool.execute.before": async (i, o) => {
      const decision = Guard.decide(i.sessionID, i.tool, (o.args ?? {}) as Record<string, unknown>)
      if (!decision.allow) {
        recordRefusal(directoryOf(i.sessionID), { sessionID: i.sessionID, agent: Sessions.get(i.sessionID)?.agent, tool: i.tool, reason: decision.reason })
        throw new Error(decision.message)
      }
      if (decision.args) o.args = decision.args
      if (decision.evidence) Sessions.addEvidence(i.sessionID, { at: new Date().toISOString(), tool: i.tool, detail: decision.evidence })
    },
    event: async ({ event }) => {
      if (event.type === "session.created") Sessions.noteDirectory(event.properties.info.id, event.properties.info.directory)
      ChildSessions.observe(event)
    },
  }
  return hooks
}

export default { id: "aircoding", server }
