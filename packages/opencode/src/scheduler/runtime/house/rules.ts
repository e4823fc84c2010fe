import { readFileSync } from "node:fs"
import { join } from "node:path"
import { z } from "zod"
import { Strict } from "../../core/strict"
import { Glob } from "../glob/glob.ts"
import { LoggingLibraries } from "./libraries"
import { AirPaths } from "../../core/air-paths"

/**
 * The project's house rules: `.air/shared/rules/house.json`, committed with the project and written by
 * `aircoding init` from what the project already uses. Today: the logging rule (one library, the channels new
 * code must not write through, the paths exempt). No file, no rule: nothing is refused or checked.
 */
export namespace HouseRules {
  export const RULES_PATH = AirPaths.HOUSE_RULES

  /** Test sources log however they like: their output is the test runner's. */
  export const DEFAULT_EXEMPT = ["test/**", "tests/**", "**/test/**", "**/tests/**", "**/*_test.*", "**/*_tests.*", "**/test_*.*"] as const

  /** Paths of every depth and kind: an exemption that matches all of them switches the gate off without saying so. */
  const EVERYWHERE = ["main.cpp", "src/app.cpp", "src/net/client.cc", "include/app/api.hpp", "lib/x/y/z/deep.c"]

  const Channel = z
    .object({
      call: z.string().min(1).describe("the channel's name in a failure, e.g. std::cout"),
      pattern: z
        .string()
        .min(1)
        .superRefine((pattern, ctx) => {
          const problem = expressionProblem(pattern)
          if (problem) ctx.addIssue({ code: "custom", message: `not a valid regular expression (${problem}); write a JavaScript expression, e.g. "\\\\bstd::cout\\\\b"` })
        })
        .describe("a JavaScript regular expression matched against each added line (comments and strings blanked)"),
    })
    .strict()

  export const Logging = z
    .object({
      /** false: no logging rule at all (no integration task, no gate). */
      enabled: z.boolean().default(true),
      library: z.string().superRefine((name, ctx) => {
        if ((LoggingLibraries.NAMES as readonly string[]).includes(name)) return
        ctx.addIssue({ code: "custom", message: `unknown library "${name}"${Strict.didYouMean(name, LoggingLibraries.NAMES)} (known: ${LoggingLibraries.NAMES.join(", ")}; "own" for the project's own logging header)` })
      }),
      include: z.string().min(1).optional().describe("what a source includes to log, e.g. <spdlog/spdlog.h> or \"util/log.h\""),
      calls: z.array(z.string().min(1)).optional().describe("the calls new code logs with, e.g. spdlog::info"),
      cmake: z.object({ package: z.string().min(1), target: z.string().min(1) }).strict().optional(),
      /** Absent: the library's own list (LoggingLibraries.TABLE). [] checks nothing. */
      forbidden: z.array(Channel).optional(),
      exempt: z.array(z.string().min(1)).default([...DEFAULT_EXEMPT]),
      /** When the project does not use the library yet, the plan must start with the task that integrates it. */
      integrationFirst: z.boolean().default(true),
      /** The integration may fetch the library (FetchContent) when find_package does not find it. */
      allowNetwork: z.boolean().default(false),
    })
    .strict()
    .superRefine((logging, ctx) => {
      if (logging.library !== "own") return
      if (!logging.include) ctx.addIssue({ code: "custom", path: ["include"], message: `missing: a project's own logging library needs the header its sources include, e.g. "util/log.h"` })
      if (!logging.calls?.length) ctx.addIssue({ code: "custom", path: ["calls"], message: `missing: a project's own logging library needs the calls new code logs with, e.g. ["LOG_INFO"]` })
    })

  /** Public headers under include/, at any depth: what a module's public interface is unless the rules say otherwise. */
  export const DEFAULT_PUBLIC_INTERFACE = ["include/**/*.{h,hh,hpp,hxx,inl,ipp,tpp}", "**/include/**/*.{h,hh,hpp,hxx,inl,ipp,tpp}"] as const

  /** Tests at every module boundary (plan rules, core/boundary-tests.ts). On with defaults whenever the file exists. */
  export const Boundaries = z
    .object({
      /** false: only the built-in rule (a changed public header under include/ needs a test task). */
      enabled: z.boolean().default(true),
      publicInterface: z
        .array(
          z
            .string()
            .min(1)
            .superRefine((glob, ctx) => {
              const problem = globProblem(glob)
              if (problem) ctx.addIssue({ code: "custom", message: `not a usable glob (${problem}); write e.g. "include/**" or "src/**/api/*.h"` })
            }),
        )
        .min(1)
        .default([...DEFAULT_PUBLIC_INTERFACE])
        .describe("globs of the files that are a module's public interface"),
      /** A task adding a module (a new source directory or CMake target directory) needs that module's tests. */
      modules: z.boolean().default(true),
      /** Every code task's doneWhen includes its tests passing. */
      doneWhenTests: z.boolean().default(true),
    })
    .strict()

  export const File = z
    .object({
      schemaVersion: z.literal(1),
      logging: Logging.optional(),
      boundaries: Boundaries.optional(),
    })
    .strict()
  export type File = z.infer<typeof File>

  /** The logging rule with the library's defaults filled in: what the plan rule and the gate read. */
  export interface LoggingRule {
    library: LoggingLibraries.Name
    include?: string
    calls: readonly string[]
    cmake?: { package: string; target: string }
    forbidden: readonly LoggingLibraries.Channel[]
    exempt: readonly string[]
    integrationFirst: boolean
    allowNetwork: boolean
  }

  /** The boundary rule with its globs compiled: what the plan validation reads. */
  export interface BoundaryRule {
    publicInterface: readonly RegExp[]
    modules: boolean
    doneWhenTests: boolean
  }

  export interface Loaded {
    file: File
    /** Undefined when the file turns it off. */
    boundaries?: BoundaryRule
    /** Undefined when the file has none or turns it off. */
    logging?: LoggingRule
    /** Allowed but probably not meant, for doctor and init (an exemption that matches every path). */
    warnings: string[]
  }

  export class Invalid extends Error {
    readonly _tag = "HouseRulesInvalid"
    constructor(
      readonly file: string,
      detail: string,
    ) {
      super(`${file}: ${detail}. Fix the file (see "House rules" in the README), run aircoding init --redetect to write it again, or delete it (no house rules).`)
      this.name = "HouseRulesInvalid"
    }
  }

  function globProblem(glob: string): string | undefined {
    try {
      Glob.toRegExp(glob)
      return undefined
    } catch (err) {
      return (err as Error).message
    }
  }

  export function resolveBoundaries(boundaries: z.infer<typeof Boundaries>): BoundaryRule | undefined {
    if (!boundaries.enabled) return undefined
    return { publicInterface: boundaries.publicInterface.map((g) => Glob.toRegExp(g)), modules: boundaries.modules, doneWhenTests: boundaries.doneWhenTests }
  }

  /** Why `pattern` is not a regular expression, or undefined when it is one. */
  export function expressionProblem(pattern: string): string | undefined {
    try {
      new RegExp(pattern)
      return undefined
    } catch (err) {
      return (err as Error).message.replace(/^Invalid regular expression: /, "")
    }
  }

  export function resolve(logging: z.infer<typeof Logging>): LoggingRule | undefined {
    if (!logging.enabled) return undefined
    const library = logging.library as LoggingLibraries.Name
    const defaults = LoggingLibraries.TABLE[library]
    const include = logging.include ?? defaults.include
    const cmake = logging.cmake ?? defaults.cmake
    return {
      library,
      ...(include ? { include } : {}),
      calls: logging.calls ?? defaults.calls ?? [],
      ...(cmake ? { cmake } : {}),
      forbidden: logging.forbidden ?? defaults.forbidden,
      exempt: logging.exempt,
      integrationFirst: logging.integrationFirst,
      allowNetwork: logging.allowNetwork,
    }
  }

  /** The exemption globs that match every path, each said as a warning. */
  export function exemptWarnings(exempt: readonly string[]): string[] {
    return exempt
      .filter((glob) => {
        const re = Glob.toRegExp(glob)
        return EVERYWHERE.every((p) => re.test(p))
      })
      .map((glob) => `logging.exempt "${glob}" matches every path: the logging gate checks nothing; name the folders to exempt (e.g. "tools/**"), or set logging.enabled to false to turn the rule off`)
  }

  export function parse(text: string, file: string = RULES_PATH): Loaded {
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (err) {
      throw new Invalid(file, `not valid JSON (${(err as Error).message})`)
    }
    const parsed = File.safeParse(json)
    if (!parsed.success) throw new Invalid(file, Strict.oneLine(File, parsed.error))
    const logging = parsed.data.logging ? resolve(parsed.data.logging) : undefined
    const boundaries = resolveBoundaries(parsed.data.boundaries ?? Boundaries.parse({}))
    return { file: parsed.data, ...(logging ? { logging } : {}), ...(boundaries ? { boundaries } : {}), warnings: logging ? exemptWarnings(logging.exempt) : [] }
  }

  /** The project's rules, read from the project root (never a worktree: a task cannot change its own rules); none without the file. */
  export function load(root: string): Loaded | undefined {
    const file = join(root, RULES_PATH)
    let bytes: Uint8Array
    try {
      bytes = readFileSync(file)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined
      throw err
    }
    let text: string
    try {
      text = Strict.decode(bytes, file)
    } catch (err) {
      if (err instanceof Strict.DecodeError) throw new Invalid(file, `not valid UTF-8 at byte ${err.offset}`)
      throw err
    }
    return parse(text, file)
  }
}
