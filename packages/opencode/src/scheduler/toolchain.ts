import { readFile, stat } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"

/**
 * The toolchain rules the gates follow: which commands build and test the project, how cppcheck runs.
 * Read from `.air/shared/rules/toolchain.json` when the project has one; otherwise detected (CMake + CTest).
 */
export namespace Toolchain {
  export const RULES_PATH = ".air/shared/rules/toolchain.json"
  /** The build directory of detected CMake projects, inside each worktree and excluded from git. */
  export const BUILD_DIR = ".air-build"
  export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000

  export const CppcheckRules = z
    .object({
      enabled: z.boolean().default(true).describe("false turns the analysis gate off (a task requiring analysis then fails)"),
      args: z
        .array(z.string())
        .default([])
        .describe("extra cppcheck arguments, added after AirCoding's own (e.g. --std=c++17, -DNDEBUG)"),
      binary: z.string().min(1).default("cppcheck").describe("the cppcheck executable: a name on PATH or a path"),
    })
    .strict()

  export const Rules = z
    .object({
      schemaVersion: z.literal(1),
      build: z.array(z.string().min(1)).default([]).describe("shell commands run in order in the worktree"),
      test: z.array(z.string().min(1)).default([]).describe("shell commands run in order after the build"),
      analysis: z
        .object({ cppcheck: CppcheckRules.default({ enabled: true, args: [], binary: "cppcheck" }) })
        .strict()
        .default({ cppcheck: { enabled: true, args: [], binary: "cppcheck" } }),
      timeoutMs: z.number().int().positive().default(DEFAULT_TIMEOUT_MS).describe("per command"),
      network: z.boolean().default(false).describe("true lets sandboxed commands (workers' shells, gates) reach the network"),
    })
    .strict()
  export type Rules = z.infer<typeof Rules>
  /** What a project may write in toolchain.json (defaults filled in by `Rules.parse`). */
  export type RulesInput = z.input<typeof Rules>

  export interface Resolved {
    rules: Rules
    /** `file`: from toolchain.json; `detected`: CMakeLists.txt found; `none`: nothing to build or test. */
    source: "file" | "detected" | "none"
    /** Where the rules came from, for people. */
    note: string
  }

  /** toolchain.json exists but cannot be used; nothing ran. */
  export class RulesInvalid extends Error {
    readonly _tag = "ToolchainRulesInvalid"
    constructor(
      readonly file: string,
      detail: string,
    ) {
      super(`${file}: ${detail}. Fix the file (schemaVersion 1: build[], test[], analysis.cppcheck, timeoutMs) or delete it to use detection.`)
      this.name = "ToolchainRulesInvalid"
    }
  }

  /**
   * The rules for a task: `<root>/.air/shared/rules/toolchain.json` if present (read from the project root,
   * never from the task's worktree, so a task cannot loosen its own gates), else detection in `worktree`.
   */
  export async function load(root: string, worktree: string = root): Promise<Resolved> {
    const file = path.join(root, RULES_PATH)
    let text: string | undefined
    try {
      text = await readFile(file, "utf8")
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
    }
    if (text === undefined) return detect(worktree)
    return { rules: parse(text, file), source: "file", note: `toolchain rules from ${RULES_PATH}` }
  }

  export function parse(text: string, file: string = RULES_PATH): Rules {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      throw new RulesInvalid(file, `not valid JSON (${(error as Error).message})`)
    }
    const parsed = Rules.safeParse(json)
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
      throw new RulesInvalid(file, problems.join("; "))
    }
    return parsed.data
  }

  /** CMake + CTest when CMakeLists.txt is at the top of `dir`; otherwise nothing to build or test. */
  export async function detect(dir: string): Promise<Resolved> {
    if (await isFile(path.join(dir, "CMakeLists.txt"))) {
      return {
        rules: Rules.parse({
          schemaVersion: 1,
          build: [`cmake -S . -B ${BUILD_DIR} -DCMAKE_BUILD_TYPE=Debug`, `cmake --build ${BUILD_DIR} -j2`],
          test: [`ctest --test-dir ${BUILD_DIR} --output-on-failure`],
        }),
        source: "detected",
        note: `CMake project detected (CMakeLists.txt); no ${RULES_PATH}`,
      }
    }
    return {
      rules: Rules.parse({ schemaVersion: 1 }),
      source: "none",
      note: `no ${RULES_PATH} and no CMakeLists.txt at the top of the project: no build or test command to run`,
    }
  }

  async function isFile(file: string): Promise<boolean> {
    try {
      return (await stat(file)).isFile()
    } catch {
      return false
    }
  }
}
