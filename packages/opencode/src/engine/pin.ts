import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Paths } from "./paths"

/**
 * The engine is pinned in one place: packages/opencode/package.json. The plugin and SDK packages
 * must match the CLI exactly, because the plugin surface changes between releases.
 */
export namespace Pin {
  export const packages = ["opencode-ai", "@opencode-ai/plugin", "@opencode-ai/sdk"] as const

  export function declared(): Record<(typeof packages)[number], string> {
    const pkg = JSON.parse(readFileSync(join(Paths.packageRoot, "package.json"), "utf8"))
    const deps: Record<string, string> = pkg.dependencies ?? {}
    return Object.fromEntries(packages.map((name) => [name, deps[name] ?? "(missing)"])) as Record<
      (typeof packages)[number],
      string
    >
  }

  /** The single engine version, or an error naming the packages that drifted apart. */
  export function engineVersion(versions: Record<string, string> = declared()): string {
    const distinct = new Set(Object.values(versions))
    if (distinct.size !== 1) {
      const list = Object.entries(versions)
        .map(([n, v]) => `${n}@${v}`)
        .join(", ")
      throw new Error(`engine pin drifted: ${list}; set all three to one exact version in packages/opencode/package.json`)
    }
    const [version] = distinct
    if (!/^\d+\.\d+\.\d+$/.test(version!)) throw new Error(`engine pin must be an exact version, got "${version}"`)
    return version!
  }
}
