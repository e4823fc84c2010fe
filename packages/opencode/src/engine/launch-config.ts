import { readFileSync } from "node:fs"
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

  /** Environment for the engine process: pinned (no self-update) and AirCoding's config. */
  export function environment(
    opts: Options & { offline?: boolean; extra?: Record<string, string> } = {},
    base: NodeJS.ProcessEnv = process.env,
  ): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...base }
    env.OPENCODE_CONFIG_CONTENT = JSON.stringify(build(opts, base))
    env.OPENCODE_DISABLE_AUTOUPDATE = "1"
    if (opts.offline) {
      env.OPENCODE_DISABLE_MODELS_FETCH = "1"
      env.OPENCODE_DISABLE_LSP_DOWNLOAD = "1"
      env.OPENCODE_DISABLE_SHARE = "1"
    }
    return { ...env, ...opts.extra }
  }
}
