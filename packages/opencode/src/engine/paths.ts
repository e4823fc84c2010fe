import { existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

/** Where AirCoding's own files live, resolved from this module so it works from any working directory. */
export namespace Paths {
  export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..")
  export const repoRoot = resolve(packageRoot, "../..")
  /** AIRCODING_PLUGIN_ENTRY swaps the plugin file (the launcher's loud-failure test loads a broken one). */
  export const pluginEntry = process.env.AIRCODING_PLUGIN_ENTRY
    ? resolve(process.env.AIRCODING_PLUGIN_ENTRY)
    : join(packageRoot, "src", "plugin.ts")
  export const pluginSpec = pathToFileURL(pluginEntry).href
  export const engineConfigDir = join(packageRoot, "engine-config")
  export const distributionConfig = join(repoRoot, "opencode.json")
  export const prompts = join(repoRoot, "prompts")
  export const samples = join(repoRoot, "samples")
  /** The skills AirCoding ships (the UI design skill); a project adds or replaces them in .air/shared/skills/. */
  export const skills = join(repoRoot, "skills")
  export const scenarios = join(packageRoot, "scenarios")

  /** The pinned engine binary: the one in our own node_modules, never a random one on PATH. */
  export function opencodeBinary(): string {
    const override = process.env.AIRCODING_OPENCODE_BIN
    if (override) return override
    const candidates = [
      join(packageRoot, "node_modules", ".bin", "opencode"),
      join(repoRoot, "node_modules", ".bin", "opencode"),
    ]
    return candidates.find((c) => existsSync(c)) ?? candidates[0]!
  }
}
