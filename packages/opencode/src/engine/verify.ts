import { Paths } from "./paths"
import { runProcess } from "./process"

/**
 * OpenCode skips a plugin whose imports fail without a word, and the user would then be talking to a
 * plain OpenCode that does the work itself. Before handing over, ask the engine itself which agents
 * and tools it resolved, and stop loudly when AirCoding's are missing.
 */
export namespace Verify {
  export type AgentView = { name: string; tools: Record<string, boolean> }
  export type Result =
    | { ok: true; agents: AgentView[] }
    | { ok: false; message: string; agents: AgentView[] }

  /** The engine's resolved view of one agent (`opencode debug agent NAME`), or why it has none. */
  export async function agentView(name: string, cwd: string, env: NodeJS.ProcessEnv): Promise<AgentView | string> {
    const out = await runProcess(Paths.opencodeBinary(), ["debug", "agent", name], { cwd, env, timeoutMs: 120_000 })
    const start = out.stdout.indexOf("{")
    if (out.code !== 0 || start < 0) return (out.stdout + out.stderr).trim() || `exit code ${out.code}`
    try {
      const parsed = JSON.parse(out.stdout.slice(start))
      return { name, tools: parsed.tools ?? {} }
    } catch {
      return `unreadable output of "opencode debug agent ${name}"`
    }
  }

  /** Imports the plugin entry here to surface the error the engine swallowed. */
  export async function importError(entry = Paths.pluginEntry): Promise<string | undefined> {
    try {
      const mod = await import(entry)
      const shape = mod.default
      if (!shape || typeof shape.server !== "function") return `${entry} has no default export { id, server }`
      return undefined
    } catch (err) {
      return err instanceof Error ? err.message : String(err)
    }
  }

  /**
   * `expected` maps each agent to tools it must be offered (present and enabled). Missing agents or
   * tools fail with a message that says what to do.
   */
  export async function plugin(
    cwd: string,
    env: NodeJS.ProcessEnv,
    expected: Record<string, string[]>,
  ): Promise<Result> {
    const names = Object.keys(expected)
    const views = await Promise.all(names.map((n) => agentView(n, cwd, env)))
    const agents = views.filter((v): v is AgentView => typeof v !== "string")
    const problems: string[] = []
    views.forEach((v, i) => {
      const name = names[i]!
      if (typeof v === "string") {
        problems.push(`agent "${name}" is missing`)
        return
      }
      const absent = expected[name]!.filter((t) => v.tools[t] !== true)
      if (absent.length) problems.push(`agent "${name}" lacks tools: ${absent.join(", ")}`)
    })
    if (problems.length === 0) return { ok: true, agents }
    const cause = await importError()
    const message = [
      "AirCoding did not load into OpenCode: " + problems.join("; ") + ".",
      cause ? `The plugin fails to import: ${cause}` : "The plugin imports, but the engine did not register it.",
      "Fix: run `bun install` at the AirCoding checkout, then `aircoding doctor`.",
    ].join("\n")
    return { ok: false, message, agents }
  }
}
