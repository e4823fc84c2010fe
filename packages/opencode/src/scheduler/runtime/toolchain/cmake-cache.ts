import { existsSync, realpathSync } from "node:fs"
import { readFile } from "node:fs/promises"
import path from "node:path"

/**
 * What a build directory's CMakeCache.txt says made it (issue 38 item 7). CMake reads CC and CXX only at the first
 * configure and keeps the cache's compiler afterwards, and a cache made for another source directory stops the
 * configure outright: a build directory configured by hand (another compiler, other options) or copied from
 * elsewhere would be reused silently, or fail the task's build for nothing the task did.
 */
export namespace CMakeCache {
  /** The entries that say which compiler, generator and options built the directory. */
  const KEYS = [
    "CMAKE_HOME_DIRECTORY",
    "CMAKE_CXX_COMPILER",
    "CMAKE_C_COMPILER",
    "CMAKE_GENERATOR",
    "CMAKE_BUILD_TYPE",
    "CMAKE_CXX_FLAGS",
    "CMAKE_C_FLAGS",
    "CMAKE_TOOLCHAIN_FILE",
  ] as const

  /** The identity entries of `<buildDir>/CMakeCache.txt`; undefined when there is none (not a CMake build). */
  export async function identity(buildDir: string): Promise<Record<string, string> | undefined> {
    const text = await readFile(path.join(buildDir, "CMakeCache.txt"), "utf8").catch(() => undefined)
    if (text === undefined) return undefined
    const found: Record<string, string> = {}
    for (const line of text.split("\n")) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)(?::[A-Z]+)?=(.*)$/.exec(line.trimEnd())
      if (m && (KEYS as readonly string[]).includes(m[1]!)) found[m[1]!] = m[2]!
    }
    return found
  }

  /**
   * Why the build directory must not be reused, or undefined: its cache names another source directory, a compiler
   * that is gone, a compiler other than the one CC / CXX name now, or differs from what the slot's last build left.
   */
  export function mismatch(
    cache: Record<string, string> | undefined,
    expected: { sourceDir: string; recorded?: Record<string, string> | undefined; env: NodeJS.ProcessEnv },
  ): string | undefined {
    if (!cache) return undefined
    const home = cache.CMAKE_HOME_DIRECTORY
    if (home && resolved(home) !== resolved(expected.sourceDir)) return `its CMakeCache.txt was made for another source directory (${home})`
    for (const [key, variable] of [["CMAKE_CXX_COMPILER", "CXX"], ["CMAKE_C_COMPILER", "CC"]] as const) {
      const compiler = cache[key]
      if (!compiler) continue
      if (path.isAbsolute(compiler) && !existsSync(compiler)) return `its CMakeCache.txt names a compiler that is gone (${key}=${compiler})`
      const wanted = expected.env[variable]
      if (wanted && onPath(wanted, expected.env) !== onPath(compiler, expected.env))
        return `its CMakeCache.txt names another compiler (${key}=${compiler}, ${variable}=${wanted})`
    }
    const recorded = expected.recorded
    if (recorded) {
      const changed = [...new Set([...Object.keys(recorded), ...Object.keys(cache)])].filter((key) => recorded[key] !== cache[key])
      if (changed.length > 0)
        return `its CMakeCache.txt was changed since the slot's last build (${changed.map((key) => `${key}=${cache[key] ?? "(none)"}`).join(", ")})`
    }
    return undefined
  }

  /** The real file a command name or path runs (through PATH and symlinks), for comparing two spellings of one compiler. */
  function onPath(command: string, env: NodeJS.ProcessEnv): string {
    const first = command.trim().split(/\s+/)[0] ?? command
    if (first.includes("/")) return resolved(first)
    for (const dir of (env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
      const candidate = path.join(dir, first)
      if (existsSync(candidate)) return resolved(candidate)
    }
    return first
  }

  function resolved(file: string): string {
    try {
      return realpathSync(file)
    } catch {
      return path.resolve(file)
    }
  }
}
