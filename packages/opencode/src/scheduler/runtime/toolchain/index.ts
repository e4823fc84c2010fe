import { readFile } from "node:fs/promises"
import path from "node:path"
import { Strict } from "../../core/strict"
import { CompilerCache } from "./cache.ts"
import { PathMap } from "./path-map.ts"
import { CppcheckArgs } from "./cppcheck.ts"
import { ToolchainSchema } from "./rules-schema.ts"
import { Detect } from "./detect.ts"
import { ToolEnv } from "./tool-env.ts"
import { Farm } from "./farm.ts"

/**
 * The toolchain rules the gates follow: which commands build and test the project, how cppcheck runs.
 * Read from `.air/shared/rules/toolchain.json` when the project has one; otherwise detected (CMake + CTest).
 */
export namespace Toolchain {
  // The schemas live in rules-schema.ts (detect.ts reads them too); here under their old names.
  export const RULES_PATH = ToolchainSchema.RULES_PATH
  export const BUILD_DIR = ToolchainSchema.BUILD_DIR
  export const DEFAULT_TIMEOUT_MS = ToolchainSchema.DEFAULT_TIMEOUT_MS
  export const ClangTidyRules = ToolchainSchema.ClangTidyRules
  export type ClangTidyRules = ToolchainSchema.ClangTidyRules
  export const BackendRules = ToolchainSchema.BackendRules
  export type BackendRules = ToolchainSchema.BackendRules
  export const Detected = ToolchainSchema.Detected
  export const Rules = ToolchainSchema.Rules
  export type Rules = ToolchainSchema.Rules
  export type RulesInput = ToolchainSchema.RulesInput
  export type Resolved = ToolchainSchema.Resolved
  export type DetectOptions = ToolchainSchema.DetectOptions
  export const resultsRules = ToolchainSchema.resultsRules

  /** toolchain.json exists but cannot be used; nothing ran. */
  export class RulesInvalid extends Error {
    readonly _tag = "ToolchainRulesInvalid"
    constructor(
      readonly file: string,
      detail: string,
    ) {
      super(`${file}: ${detail}. Fix the file (schemaVersion 1: build[], test[], junit[], analysis.{failOn, cppcheck, clangTidy, backends}, timeoutMs, areas[]) or delete it to use detection.`)
      this.name = "ToolchainRulesInvalid"
    }
  }

  /**
   * The rules for a task: `<root>/.air/shared/rules/toolchain.json` if present (read from the project root,
   * never from the task's worktree, so a task cannot loosen its own gates), else detection in `worktree`.
   */
  export async function load(root: string, worktree: string = root): Promise<Resolved> {
    const file = path.join(root, RULES_PATH)
    let bytes: Uint8Array | undefined
    try {
      bytes = await readFile(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    }
    if (bytes === undefined) return detect(worktree)
    return { rules: parseBytes(bytes, file), source: "file", note: `toolchain rules from ${RULES_PATH}` }
  }

  /** The file's bytes: UTF-8 (a BOM tolerated), else refused with the byte offset. */
  export function parseBytes(bytes: Uint8Array, file: string = RULES_PATH): Rules {
    let text: string
    try {
      text = Strict.decode(bytes, file)
    } catch (error) {
      if (error instanceof Strict.DecodeError) throw new RulesInvalid(file, `not valid UTF-8 at byte ${error.offset}`)
      throw error
    }
    return parse(text, file)
  }

  export function parse(text: string, file: string = RULES_PATH): Rules {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      throw new RulesInvalid(file, `not valid JSON (${(error as Error).message})`)
    }
    const parsed = Rules.safeParse(json)
    if (!parsed.success) throw new RulesInvalid(file, Strict.oneLine(Rules, parsed.error))
    const own = json as { build?: unknown[]; test?: unknown[] }
    if (parsed.data.areas.length > 0 && ((own.build?.length ?? 0) > 0 || (own.test?.length ?? 0) > 0))
      throw new RulesInvalid(file, "build and test are the areas' own when areas are given: move these commands into an area (areas[].build, areas[].test)")
    return parsed.data
  }

  /** The rules as toolchain.json holds them: with areas, build and test stay in the areas. */
  export function fileOf(rules: Rules): RulesInput {
    if (rules.areas.length === 0) return rules
    const { build: _build, test: _test, ...rest } = rules
    return rest
  }

  /**
   * The project's own build, detected in `dir`: CMakePresets.json (configure, build and test presets) when it
   * has one; otherwise a CMake project (Ninja when installed), a Meson project or a plain Makefile. Parallelism
   * comes from the machine (`jobs`, default `os.availableParallelism()`).
   */
  export async function detect(dir: string, options: DetectOptions = {}): Promise<Resolved> {
    return Detect.run(dir, options)
  }

  /**
   * The environment the build and test commands run with in `worktree`: the compiler cache (launcher,
   * shared directory, base_dir, size limit, this build's stats log) and the flags that keep the worktree's
   * path out of the outputs (path-map.ts; `cache.pathMap: false` turns them off) on top of `base`.
   */
  export async function commandEnv(
    rules: Rules,
    where: { root: string; worktree: string; statsLog?: string; farmLog?: string },
    base: NodeJS.ProcessEnv = process.env,
  ): Promise<NodeJS.ProcessEnv> {
    const mapped = rules.cache.pathMap === false ? {} : await PathMap.env(where.worktree, base)
    const cache = CompilerCache.tool(rules.cache, base)
    const farm = Farm.env(rules.farm, { stateDir: farmStateDir(rules, where.root), ...(where.farmLog ? { log: where.farmLog } : {}), ...(cache ? { cache } : {}) })
    return { ...base, ...CompilerCache.env(rules.cache, where, base), ...farm, ...mapped, ...ToolEnv.forCommands([...rules.build, ...rules.test], base) }
  }

  /** distcc's locks and dead-host notes: in the cache directory, which a sandboxed build may write. */
  export function farmStateDir(rules: Rules, root: string): string {
    return path.join(path.resolve(root, rules.cache.dir), "distcc")
  }

  /** Sandboxed commands reach the network when the rules allow it, or name a farm the compiles go to. */
  export function networkFor(rules: Rules): boolean {
    return rules.network || rules.farm !== undefined
  }

  /** The cppcheck invocations (argument lists, run in the worktree) for the changed files. */
  export function cppcheckArgs(
    rules: Rules,
    changedFiles: readonly string[],
    where: CppcheckArgs.Where,
  ): Promise<string[][]> {
    return CppcheckArgs.build(rules.analysis.cppcheck, changedFiles, where)
  }
}
