import { readFile } from "node:fs/promises"
import { accessSync, constants } from "node:fs"
import path from "node:path"

/**
 * The compiler cache every build goes through. CMake (≥ 3.17) reads CMAKE_<LANG>_COMPILER_LAUNCHER from the
 * environment at the first configure, so the launcher reaches detected and user-written CMake commands alike;
 * Meson picks ccache up by itself when it is on PATH.
 */
export namespace CompilerCache {
  /** ccache's per-build stats log in a build's evidence directory, and the hit rate read from it. */
  export const STATS_LOG = "ccache-stats.log"
  export const STATS_FILE = "cache.json"

  export interface Settings {
    tool: "auto" | "ccache" | "sccache" | "none"
    dir: string
    maxSize: string
    remoteStorage?: string
  }

  export interface Stats {
    tool: "ccache"
    /** Compilations answered from the cache (direct or preprocessed). */
    hits: number
    misses: number
    /** Calls ccache could not cache (links, configure probes, unsupported options). */
    uncacheable: number
    /** hits / (hits + misses), 0..1; undefined when nothing was compiled. */
    rate?: number
  }

  /** The cache tool this build uses: `auto` means ccache when installed; none when the tool is missing. */
  export function tool(settings: Settings, env: NodeJS.ProcessEnv = process.env): "ccache" | "sccache" | undefined {
    if (settings.tool === "none") return undefined
    if (settings.tool === "auto") return onPath("ccache", env) ? "ccache" : undefined
    return onPath(settings.tool, env) ? settings.tool : undefined
  }

  /**
   * The environment for one build in `worktree`. base_dir is the project root: worktrees live under it
   * (`.air/local/worktrees/<id>`), so ccache rewrites their absolute paths relative to the build directory
   * and the same source in two worktrees hashes the same. hash_dir is off for the same reason (with -g
   * ccache would hash each build directory); at no price, since the build maps the worktree's path out of
   * the debug info (path-map.ts), so an object from another worktree's compile is the one this one makes.
   */
  export function env(
    settings: Settings,
    where: { root: string; worktree: string; statsLog?: string },
    base: NodeJS.ProcessEnv = process.env,
  ): Record<string, string> {
    const chosen = tool(settings, base)
    if (!chosen) return {}
    const dir = path.resolve(where.root, settings.dir)
    const launcher: Record<string, string> = {
      ...(base.CMAKE_C_COMPILER_LAUNCHER ? {} : { CMAKE_C_COMPILER_LAUNCHER: chosen }),
      ...(base.CMAKE_CXX_COMPILER_LAUNCHER ? {} : { CMAKE_CXX_COMPILER_LAUNCHER: chosen }),
    }
    // sccache has no base_dir: worktrees hit each other only where the compile lines carry no absolute path.
    if (chosen === "sccache") return { ...launcher, SCCACHE_DIR: dir, SCCACHE_CACHE_SIZE: settings.maxSize }
    return {
      ...launcher,
      CCACHE_DIR: dir,
      CCACHE_BASEDIR: where.root,
      CCACHE_NOHASHDIR: "1",
      CCACHE_MAXSIZE: settings.maxSize,
      ...(settings.remoteStorage ? { CCACHE_REMOTE_STORAGE: settings.remoteStorage } : {}),
      ...(where.statsLog ? { CCACHE_STATSLOG: where.statsLog } : {}),
    }
  }

  /**
   * This build's hit rate from ccache's stats log (one `# <source>` block per call, then its counters).
   * A per-build log, not the shared counters: builds in other worktrees run at the same time.
   */
  export async function readStats(statsLog: string): Promise<Stats | undefined> {
    let text: string
    try {
      text = await readFile(statsLog, "utf8")
    } catch {
      return undefined
    }
    return parseStats(text)
  }

  export function parseStats(text: string): Stats {
    let hits = 0
    let misses = 0
    let uncacheable = 0
    const blocks = text.split(/^# /m).filter((block) => block.trim().length > 0)
    for (const block of blocks) {
      const counters = new Set(block.split(/\r?\n/).slice(1).map((line) => line.trim()))
      if (counters.has("direct_cache_hit") || counters.has("preprocessed_cache_hit")) hits++
      else if (counters.has("cache_miss")) misses++
      else uncacheable++
    }
    const total = hits + misses
    return { tool: "ccache", hits, misses, uncacheable, ...(total > 0 ? { rate: hits / total } : {}) }
  }

  export function describe(stats: Stats): string {
    const total = stats.hits + stats.misses
    if (total === 0) return "ccache: nothing compiled"
    return `ccache ${stats.hits}/${total} hits (${Math.round((stats.rate ?? 0) * 100)}%)`
  }

  /** The executable `name` found on PATH (or the path itself when it has a slash), else undefined. */
  export function onPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
    const candidates = name.includes("/") ? [name] : (env.PATH ?? "").split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, name))
    for (const candidate of candidates) {
      try {
        accessSync(candidate, constants.X_OK)
        return candidate
      } catch {
        // next
      }
    }
    return undefined
  }
}
