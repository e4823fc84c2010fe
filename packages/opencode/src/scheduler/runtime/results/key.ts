import { createHash } from "node:crypto"
import { git } from "../git/git.ts"
import { Glob } from "../glob/glob.ts"
import { Toolchain } from "../toolchain/index.ts"
import { ToolVersions } from "./versions.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * The results key: a hash of everything that can change a build's or a test's outcome, and nothing else.
 *
 * - the tree of build inputs: the commit's files (path, mode, blob id; submodules by their commit) without
 *   `.air/` (the run's rules and notes) and without the toolchain's `notInputs` globs;
 * - the toolchain's build and test commands and JUnit globs;
 * - the tools' versions (compiler, cmake, ctest, cppcheck, clang-tidy);
 * - the sandbox (on or off) and the network flag;
 * - the environment variables builds read by convention (CC, CXX, the *FLAGS) and those the toolchain names.
 *
 * A checkout with uncommitted changes has no key (its build is not of any commit): nothing is looked up
 * or recorded for it.
 */
export namespace ResultKey {
  /** Compiler and linker variables every build reads; the toolchain's `results.env` adds the project's own. */
  export const BUILD_ENV = ["CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CMAKE_BUILD_TYPE", "CMAKE_GENERATOR"] as const

  export interface Parts {
    /** sha256 of the filtered tree listing. */
    inputs: string
    build: string[]
    test: string[]
    junit: string[]
    tools: Record<string, string>
    sandbox: "on" | "off"
    network: boolean
    env: Record<string, string | null>
  }

  export interface Key {
    key: string
    commit: string
    parts: Parts
  }

  export interface Where {
    /** A checkout of the repository (git runs there). */
    dir: string
    /** The commit whose tree is built. */
    commit: string
    rules: Toolchain.Rules
    /** Whether the commands run inside the OS sandbox. */
    sandboxed: boolean
    env: NodeJS.ProcessEnv
  }

  /** The key of `commit` built with `rules`; undefined when the results store is off. */
  export async function of(where: Where): Promise<Key | undefined> {
    const settings = Toolchain.resultsRules(where.rules)
    if (!settings.enabled) return undefined
    const inputs = await inputsHash(where.dir, where.commit, settings.notInputs)
    const names = [...new Set([...BUILD_ENV, ...settings.env])].sort()
    const parts: Parts = {
      inputs,
      build: [...where.rules.build],
      test: [...where.rules.test],
      junit: [...where.rules.junit],
      tools: await ToolVersions.all(where.env),
      sandbox: where.sandboxed ? "on" : "off",
      network: where.rules.network,
      env: Object.fromEntries(names.map((name) => [name, where.env[name] ?? null])),
    }
    return { key: hash(canonical(parts)), commit: where.commit, parts }
  }

  /**
   * The key of the checkout's HEAD, when its working tree is that commit: no tracked change and no untracked
   * file outside the build directories and `notInputs` (an untracked source a CMake glob picks up would be
   * built, yet not be in the key). Otherwise undefined, with the reason.
   */
  export async function ofCheckout(where: Omit<Where, "commit">): Promise<{ key?: Key; reason?: string }> {
    const settings = Toolchain.resultsRules(where.rules)
    if (!settings.enabled) return { reason: "the results store is off (cache.results.enabled)" }
    const commit = (await git(where.dir, ["rev-parse", "HEAD^{commit}"])).trim()
    const status = await git(where.dir, ["status", "--porcelain", "-z", "--ignore-submodules=none"])
    const ignored = ignoredBy([...settings.notInputs, `${AirPaths.AIR}/**`, `${Toolchain.BUILD_DIR}/**`, ...(where.rules.detected?.buildDir ? [`${where.rules.detected.buildDir}/**`] : [])])
    const dirty = status
      .split("\0")
      .filter((entry) => entry.length > 3)
      .map((entry) => entry.slice(3).replace(/\/$/, ""))
      .filter((file) => !ignored(file) && !ignored(`${file}/`))
    if (dirty.length > 0) return { reason: `uncommitted changes (${dirty.slice(0, 3).join(", ")}${dirty.length > 3 ? ", …" : ""})` }
    const key = await of({ ...where, commit })
    return key ? { key } : { reason: "the results store is off" }
  }

  /** The tree listing of `commit` without `.air/` and `notInputs`, hashed. */
  export async function inputsHash(dir: string, commit: string, notInputs: readonly string[]): Promise<string> {
    const listing = await git(dir, ["ls-tree", "-r", "-z", "--full-tree", commit])
    const ignored = ignoredBy([`${AirPaths.AIR}/**`, ...notInputs])
    const kept = listing
      .split("\0")
      .filter((line) => line.length > 0)
      .filter((line) => !ignored(line.slice(line.indexOf("\t") + 1)))
    return hash(kept.join("\0"))
  }

  function ignoredBy(globs: readonly string[]): (file: string) => boolean {
    const patterns = globs.map((glob) => Glob.toRegExp(glob))
    return (file) => patterns.some((pattern) => pattern.test(file))
  }

  export function hash(text: string): string {
    return createHash("sha256").update(text).digest("hex")
  }

  /** JSON with object keys sorted: the same parts always hash the same. */
  export function canonical(value: unknown): string {
    if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
    if (value && typeof value === "object")
      return `{${Object.keys(value as object)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
        .join(",")}}`
    return JSON.stringify(value ?? null)
  }
}
