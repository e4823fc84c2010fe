import { existsSync, mkdirSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { acquireLock } from "../scheduler/runtime/store/lock"
import { Paths } from "./paths"
import { runProcess } from "./process"
import { VerifyCache } from "./verify-cache"

/**
 * OpenCode skips a plugin whose imports fail without a word, and the user would then be talking to a
 * plain OpenCode that does the work itself. Before handing over, ask the engine itself what it
 * resolved — the agents in its config and the tools it offers Main — and stop loudly when AirCoding's
 * are missing.
 */
export namespace Verify {
  export type Result = { ok: true; agents: string[]; config: Record<string, any> } | { ok: false; message: string; config?: Record<string, any> }

  function parseJson(stdout: string): Record<string, any> | undefined {
    const start = stdout.indexOf("{")
    if (start < 0) return undefined
    try {
      return JSON.parse(stdout.slice(start))
    } catch {
      return undefined
    }
  }

  /** Where the engine keeps its database (XDG data dir). */
  function engineDataDir(env: NodeJS.ProcessEnv): string {
    return join(env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share"), "opencode")
  }

  /** The engine's resolved config (`opencode debug config`): agents, model, plugins. */
  export async function resolvedConfig(cwd: string, env: NodeJS.ProcessEnv): Promise<Record<string, any> | string> {
    const out = await runProcess(Paths.opencodeBinary(), ["debug", "config"], { cwd, env, timeoutMs: 120_000 })
    return parseJson(out.stdout) ?? ((out.stderr || out.stdout).trim().split("\n").slice(-3).join(" ") || `exit code ${out.code}`)
  }

  /** The tools the engine offers one agent (`opencode debug agent NAME`). */
  export async function agentTools(name: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Record<string, boolean> | string> {
    const out = await runProcess(Paths.opencodeBinary(), ["debug", "agent", name], { cwd, env, timeoutMs: 120_000 })
    const parsed = parseJson(out.stdout)
    return parsed?.tools ?? ((out.stdout + out.stderr).trim() || `exit code ${out.code}`)
  }

  /** What a launch reads of the resolved config (the model), kept with a passing answer; never the providers' keys. */
  function modelsOf(config: Record<string, any>): Pick<VerifyCache.Entry, "model" | "mainModel"> {
    const model = typeof config.model === "string" ? config.model : undefined
    const mainModel = typeof config.agent?.main?.model === "string" ? config.agent.main.model : undefined
    return { ...(model ? { model } : {}), ...(mainModel ? { mainModel } : {}) }
  }

  function cachedConfig(entry: VerifyCache.Entry): Record<string, any> {
    return { ...(entry.model ? { model: entry.model } : {}), agent: Object.fromEntries(entry.agents.map((a) => [a, a === "main" && entry.mainModel ? { model: entry.mainModel } : {}])) }
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
   * `agents`: every agent that must be registered; `mainTools`: what the engine must offer `main`. A passing
   * answer for the same inputs is reused (verify-cache.ts); `fresh` (doctor) always asks the engine.
   */
  export async function plugin(cwd: string, env: NodeJS.ProcessEnv, agents: readonly string[], mainTools: readonly string[], opts: { fresh?: boolean } = {}): Promise<Result> {
    const data = engineDataDir(env)
    const key = VerifyCache.key(cwd, env, agents, mainTools)
    let cached = opts.fresh ? undefined : VerifyCache.lookup(key)
    // Launches at once with the same inputs (several terminals, a test suite) share one check: the first asks
    // the engine, the others wait for its answer and read it.
    const shared = opts.fresh || cached ? undefined : await VerifyCache.claim(key)
    try {
      if (shared) cached = VerifyCache.lookup(key)
      // The engine's database exists once an engine has started here: then nothing but the answer is needed.
      if (cached && existsSync(join(data, "opencode.db"))) return { ok: true, agents: cached.agents, config: cachedConfig(cached) }
      return await ask(cwd, env, agents, mainTools, data, key, cached)
    } finally {
      shared?.release()
    }
  }

  async function ask(
    cwd: string,
    env: NodeJS.ProcessEnv,
    agents: readonly string[],
    mainTools: readonly string[],
    data: string,
    key: string,
    cached: VerifyCache.Entry | undefined,
  ): Promise<Result> {
    // One after the other, and one AirCoding process at a time per data dir: two engines starting at once on
    // a fresh data dir race to create its database (two runs started together on a new machine met it).
    mkdirSync(data, { recursive: true })
    const lock = await acquireLock(join(data, "aircoding-verify.lock"), { timeoutMs: 240_000, what: "a check of the engine's config" })
    let config: Record<string, any> | string
    let tools: Record<string, boolean> | string
    try {
      config = await resolvedConfig(cwd, env)
      // A known answer on a fresh data dir: one engine start creates the database (and reads the model anew).
      tools = cached && typeof config !== "string" ? Object.fromEntries(mainTools.map((t) => [t, true])) : await agentTools("main", cwd, env)
    } finally {
      lock.release()
    }
    const problems: string[] = []
    if (typeof config === "string") problems.push(`the engine could not resolve its config (${config})`)
    else {
      const missing = agents.filter((a) => !config.agent?.[a])
      if (missing.length) problems.push(`agents missing: ${missing.join(", ")}`)
    }
    if (typeof tools === "string") problems.push(`agent "main" is missing`)
    else {
      const absent = mainTools.filter((t) => tools[t] !== true)
      if (absent.length) problems.push(`agent "main" lacks tools: ${absent.join(", ")}`)
    }
    const resolved = typeof config === "string" ? undefined : config
    if (problems.length === 0) {
      VerifyCache.remember({ key, at: new Date().toISOString(), agents: [...agents], ...modelsOf(resolved!) })
      return { ok: true, agents: [...agents], config: resolved! }
    }
    const cause = await importError()
    const message = [
      "AirCoding did not load into OpenCode: " + problems.join("; ") + ".",
      cause ? `The plugin fails to import: ${cause}` : "The plugin imports, but the engine did not register it.",
      "Fix: run `bun install` at the AirCoding checkout, then `aircoding doctor`.",
    ].join("\n")
    return { ok: false, message, config: resolved }
  }
}
