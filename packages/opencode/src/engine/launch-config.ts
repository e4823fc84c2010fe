import { TraceConfig } from "../scheduler/runtime/trace/config"
import { Launcher } from "./launcher"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { ConfigDirs } from "./config-dirs"
import { Paths } from "./paths"

/**
 * The config AirCoding hands to every OpenCode instance of a run. It goes through
 * OPENCODE_CONFIG_CONTENT because OpenCode opens one instance per directory (each task worktree
 * is one) and each instance reads only its own directory's files: a process-wide source is the
 * only one every instance sees (opencode-notes, "Sessions in another directory").
 */
export namespace LaunchConfig {
  export type Options = {
    /** Extra config merged last, e.g. the scripted model's provider block. */
    overlay?: Record<string, unknown>
  }

  export function distribution(): Record<string, any> {
    const raw = JSON.parse(readFileSync(Paths.distributionConfig, "utf8"))
    // The file lists the plugin relative to the checkout; instances in other directories need it absolute.
    return { ...raw, plugin: [Paths.pluginSpec] }
  }

  function merge(base: Record<string, any>, over: Record<string, any>): Record<string, any> {
    const out: Record<string, any> = { ...base }
    for (const [k, v] of Object.entries(over)) {
      const b = out[k]
      out[k] =
        v && typeof v === "object" && !Array.isArray(v) && b && typeof b === "object" && !Array.isArray(b)
          ? merge(b, v)
          : v
    }
    return out
  }

  export function build(opts: Options = {}, env: NodeJS.ProcessEnv = process.env): Record<string, any> {
    let cfg = distribution()
    const inherited = env.OPENCODE_CONFIG_CONTENT
    if (inherited) {
      try {
        const user = JSON.parse(inherited)
        // The user's content may add plugins; ours stays first and cannot be removed.
        const plugins = [...cfg.plugin, ...((user.plugin as unknown[]) ?? []).filter((p) => !cfg.plugin.includes(p))]
        cfg = { ...merge(cfg, user), plugin: plugins }
      } catch {
        throw new Error("OPENCODE_CONFIG_CONTENT is not valid JSON; fix or unset it")
      }
    }
    if (opts.overlay) cfg = merge(cfg, opts.overlay)
    return cfg
  }

  /** An empty models catalogue (see `environment`). */
  export const OFFLINE_MODELS = fileURLToPath(new URL("./offline-models.json", import.meta.url))

  /** Environment for the engine process: pinned (no self-update) and AirCoding's config. */
  export function environment(
    opts: Options & { offline?: boolean; extra?: Record<string, string> } = {},
    base: NodeJS.ProcessEnv = process.env,
  ): NodeJS.ProcessEnv {
    // The engine's own OpenTelemetry export is mostly its plumbing (database, config, plugin triggers: megabytes a
    // run): it never gets the user's OTEL_* (unless AIRCODING_OTEL_ENGINE=1); the launcher points it at our relay
    // (Launch.prepare, trace/engine-relay.ts), and the CLI sends the run's trace with what the relay kept.
    const env: NodeJS.ProcessEnv = TraceConfig.engineEnvironment({ ...base })
    env.OPENCODE_CONFIG_CONTENT = JSON.stringify(build(opts, base))
    env.OPENCODE_DISABLE_AUTOUPDATE = "1"
    if (opts.offline) {
      env.OPENCODE_DISABLE_MODELS_FETCH = "1"
      // The scripted model is the only model offline, and its provider block is in the overlay: the engine's
      // bundled catalogue of every online provider's models is not needed, and building it costs each engine
      // start about 40% of its CPU (measured: 17 → 10 CPU-s for a one-step `opencode run`). Without a provider
      // of our own the engine would have no model at all and would not load the agents; a catalogue the user
      // points to still wins.
      if (opts.overlay?.provider) env.OPENCODE_MODELS_PATH ??= OFFLINE_MODELS
      env.OPENCODE_DISABLE_LSP_DOWNLOAD = "1"
      env.OPENCODE_DISABLE_SHARE = "1"
    }
    // The engine ends with the launcher (engine/launcher.ts): no orphan keeps working after a SIGKILL of aircoding.
    return { ...env, ...Launcher.entry(), ...opts.extra }
  }

  /** AirCoding's TUI plugin (src/tui/plugin.tsx): the engine maps its @opentui/solid and solid-js imports to its own copies. */
  /** Slash commands the TUI plugin registers itself (src/tui/plugin.tsx). */
  export const TUI_PLUGIN_COMMANDS = ["air-status", "air-pause", "air-resume", "air-change"] as const

  export const tuiPluginSpec = pathToFileURL(join(Paths.packageRoot, "src", "tui", "plugin.tsx")).href

  /**
   * The TUI reads its plugins from tui.json files, not from OPENCODE_CONFIG_CONTENT; OPENCODE_TUI_CONFIG
   * names one more file. We write ours beside OpenCode's global config (not in the project: an untracked
   * file there before the Scheduler hides .air/local would dirty the user's tree), with the user's own
   * OPENCODE_TUI_CONFIG merged in. The distribution's /air-* commands are model prompts; in the TUI the
   * plugin's own commands replace them (they act at once, in code), so they leave the engine's config.
   */
  export function tuiEnvironment(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
    let user: Record<string, any> = {}
    const inherited = base.OPENCODE_TUI_CONFIG
    if (inherited && existsSync(inherited)) {
      try {
        user = JSON.parse(readFileSync(inherited, "utf8"))
      } catch {
        throw new Error(`OPENCODE_TUI_CONFIG (${inherited}) is not valid JSON; fix or unset it`)
      }
    }
    const plugins = [tuiPluginSpec, ...((user.plugin as unknown[]) ?? []).filter((p) => p !== tuiPluginSpec)]
    const dir = ConfigDirs.globalConfigDir(base)
    mkdirSync(dir, { recursive: true })
    const file = join(dir, ConfigDirs.TUI_CONFIG_FILE)
    // The home screen's tips suggest `opencode upgrade`, which would break the engine pin: turned off.
    const pluginEnabled = { ...(user.plugin_enabled ?? {}), "internal:home-tips": false }
    // Tab cycles the primary agents, and AirCoding has one (Main; OpenCode's build and plan are removed):
    // the footer's "tab agents" would offer a key that does nothing, so the binding (and with it the hint) goes.
    const keybinds = { agent_cycle: "none", agent_cycle_reverse: "none", ...(user.keybinds ?? {}) }
    writeFileSync(file, JSON.stringify({ ...user, plugin: plugins, plugin_enabled: pluginEnabled, keybinds }, null, 2) + "\n")
    const out: Record<string, string> = { OPENCODE_TUI_CONFIG: file }
    if (base.OPENCODE_CONFIG_CONTENT) {
      const cfg = JSON.parse(base.OPENCODE_CONFIG_CONTENT)
      for (const name of TUI_PLUGIN_COMMANDS) delete cfg.command?.[name]
      out.OPENCODE_CONFIG_CONTENT = JSON.stringify(cfg)
    }
    return out
  }
}
