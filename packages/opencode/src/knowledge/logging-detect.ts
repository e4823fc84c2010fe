import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { git, gitTry } from "../scheduler/runtime/git/git"
import { LoggingLibraries } from "../scheduler/runtime/house/libraries"

/**
 * What a project already logs with, read from its tracked files for `aircoding init`: spdlog, glog or Qt's
 * logging (their include or CMake package), else a logging header of its own (`log.h`, `logger.hpp`, …, with the
 * macros or functions it declares), else none. A project that has a library keeps it: spdlog is only the answer
 * for a project with none.
 */
export namespace LoggingDetect {
  export type Found =
    | { library: "spdlog" | "glog" | "qt"; where: string }
    | { library: "own"; where: string; include: string; calls: string[] }
    | { library: "none" }

  const OWN_HEADER = /(^|\/)(log|logger|logging)\.(h|hh|hpp|hxx)$/i
  /** Somebody else's code vendored into the tree is not the project's logging. */
  const VENDORED = /(^|\/)(third_party|thirdparty|external|extern|vendor|deps|_deps)\//i
  const MAX_CALLS = 8

  export async function detect(root: string): Promise<Found> {
    for (const library of ["spdlog", "glog", "qt"] as const) {
      const where = await firstFileMatching(root, LoggingLibraries.TABLE[library].usedWhen!)
      if (where) return { library, where }
    }
    const tracked = (await git(root, ["ls-files", "-z"])).split("\0").filter(Boolean)
    const header = tracked.find((f) => OWN_HEADER.test(f) && !VENDORED.test(f))
    if (header) {
      const text = await readFile(join(root, header), "utf8").catch(() => "")
      const calls = declaredCalls(text)
      if (calls.length > 0) return { library: "own", where: header, include: `"${includePath(header)}"`, calls }
    }
    return { library: "none" }
  }

  /** The first tracked file (outside vendored code) with a line matching the extended expression, or undefined. */
  async function firstFileMatching(root: string, pattern: string): Promise<string | undefined> {
    const r = await gitTry(root, ["grep", "-l", "-I", "-E", "-e", pattern, "--"])
    if (r.code !== 0) return undefined
    return r.stdout.split("\n").find((f) => f && !VENDORED.test(f))
  }

  /** How sources include the header: from below its `include/` directory, else by its name (its directory on the include path). */
  export function includePath(header: string): string {
    const below = /(?:^|\/)include\/(.+)$/.exec(header)
    return below ? below[1]! : header.slice(header.lastIndexOf("/") + 1)
  }

  /** The logging macros (LOG_INFO(…), LOGE(…)) or, without any, the logging functions the header declares. */
  export function declaredCalls(text: string): string[] {
    const macros = [...text.matchAll(/^\s*#\s*define\s+(\w*LOG\w*)\s*\(/gim)].map((m) => m[1]!)
    const functions = [...text.matchAll(/^\s*(?:inline\s+|static\s+)*(?:void|int|bool)\s+(\w*log\w*)\s*\(/gim)].map((m) => m[1]!)
    return [...new Set(macros.length > 0 ? macros : functions)].slice(0, MAX_CALLS)
  }
}
