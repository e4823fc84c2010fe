import { z } from "zod"
import { Areas } from "./areas.ts"
import { Farm } from "./farm.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * The schemas of `.air/shared/rules/toolchain.json` and what a reading of them gives (`Resolved`). A file of
 * their own below index.ts and detect.ts: detection builds rules and index.ts runs detection, so when index.ts
 * held them the two imported each other (issue 42 item 1). `Toolchain` (index.ts) re-exports them.
 */
export namespace ToolchainSchema {
  export const RULES_PATH = AirPaths.TOOLCHAIN_RULES
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
      project: z
        .string()
        .min(1)
        .optional()
        .describe(
          "the build's compile_commands.json, relative to the worktree: cppcheck then reads the project's own includes and defines (--project, restricted to the changed files with --file-filter)",
        ),
    })
    .strict()

  /**
   * clang-tidy on the changed files, with the project's own `.clang-tidy` and the build's compile_commands.json.
   * Absent `enabled`: on when the project has a `.clang-tidy` and clang-tidy is installed (not installed: recorded
   * as not run, and doctor says so). `true`: required (not installed is a tool missing); `false`: off.
   */
  export const ClangTidyRules = z
    .object({
      enabled: z.boolean().optional().describe("true requires clang-tidy, false turns it off; absent: on when the project has a .clang-tidy"),
      binary: z.string().min(1).default("clang-tidy").describe("the clang-tidy executable: a name on PATH or a path"),
      args: z.array(z.string()).default([]).describe("extra clang-tidy arguments, added after AirCoding's own"),
    })
    .strict()
  export type ClangTidyRules = z.infer<typeof ClangTidyRules>

  /**
   * One analyser backend beyond C++ (mypy, pylint, tsc, go-vet, staticcheck, clippy: `gates/analysers/`), keyed by its tool name. Absent
   * `enabled`: on when the change holds files of its language and the tool is installed (not installed: recorded
   * as not run). `true`: required (not installed is a tool missing); `false`: off.
   */
  export const BackendRules = z
    .object({
      enabled: z.boolean().optional().describe("true requires the tool, false turns it off; absent: on when files of its language changed and it is installed"),
      binary: z.string().min(1).optional().describe("the executable: a name on PATH or a path (default: the backend's own, e.g. mypy)"),
      args: z.array(z.string()).default([]).describe("extra arguments, added after AirCoding's own"),
    })
    .strict()
  export type BackendRules = z.infer<typeof BackendRules>

  /** The analysers' verdict: findings of this severity or worse that the task introduced fail the gate. */
  export const FAIL_ON = ["error", "warning"] as const

  export const AnalysisRules = z
    .object({
      failOn: z
        .enum(FAIL_ON)
        .default("error")
        .describe("the least severity a new finding needs to fail the gate: error (default) or warning; inherited findings never fail"),
      cppcheck: CppcheckRules.default({ enabled: true, args: [], binary: "cppcheck" }),
      clangTidy: ClangTidyRules.default({ binary: "clang-tidy", args: [] }),
      backends: z
        .record(z.string().min(1), BackendRules)
        .default({})
        .describe("the analysers of other languages by tool name (mypy, pylint, tsc, go-vet, staticcheck, clippy): { enabled, binary, args }"),
    })
    .strict()

  /**
   * The compiler cache every worktree's build goes through. `auto`: ccache when it is installed. The cache
   * directory is per project (relative paths are from the project root) and shared by all its worktrees;
   * base_dir is the project root, so the same source in two worktrees hits.
   */
  export const CacheRules = z
    .object({
      tool: z.enum(["auto", "ccache", "sccache", "none"]).default("auto"),
      dir: z.string().min(1).default(AirPaths.CCACHE).describe("the cache directory (ccache's cache_dir / SCCACHE_DIR)"),
      maxSize: z.string().regex(/^\d+(\.\d+)?[KMGT]?i?B?$/i).default("5G").describe("size limit, e.g. 5G"),
      remoteStorage: z
        .string()
        .min(1)
        .optional()
        .describe("shared storage for a team: ccache remote_storage (http://host/cache, redis://host) or sccache's SCCACHE_* via env"),
      pathMap: z
        .boolean()
        .optional()
        .describe("false: builds keep the worktree's path in their outputs (no -ffile-prefix-map); absent or true: outputs independent of it (path-map.ts)"),
      slots: z
        .boolean()
        .optional()
        .describe("false: every task's gates build in its own worktree from an empty build directory; absent or true: in build slots kept between tasks (build-slot.ts)"),
      results: z
        .lazy(() => ResultsRules)
        .optional()
        .describe("the build and test results store (results/README.md): reused when the build inputs are the same"),
    })
    .strict()
  export type CacheRules = z.infer<typeof CacheRules>

  /**
   * The results store: build and test outcomes recorded under a key of everything that can change them
   * (runtime/results/). Defaults are filled by `resultsRules`, not here (a nested zod default is not parsed).
   */
  export const ResultsRules = z
    .object({
      enabled: z.boolean().default(true).describe("false: every build and test runs, nothing is recorded"),
      dir: z.string().min(1).default(AirPaths.RESULTS).describe("the local store, relative to the project root"),
      maxSize: z.string().regex(/^\d+(\.\d+)?[KMGT]?i?B?$/i).default("1G").describe("size limit of the local store; the oldest entries go first"),
      remote: z
        .string()
        .regex(/^(https?|redis):\/\//, "http(s)://host[:port]/path or redis://host[:port]")
        .optional()
        .describe("a store the team shares: an HTTP cache with GET/PUT (bazel-remote, nginx WebDAV) or Redis"),
      remoteMode: z
        .enum(["read-write", "read-only"])
        .default("read-write")
        .describe("read-only: this machine reuses, never claims; AIRCODING_RESULTS_REMOTE_MODE overrides it per machine"),
      notInputs: z.array(z.string().min(1)).default([]).describe("globs of tracked paths that change no build or test result (docs/**)"),
      env: z.array(z.string().min(1)).default([]).describe("environment variables the build or tests read: their values are part of the key"),
      testData: z.array(z.string().min(1)).default([]).describe("globs of data files tests read, for test selection: a changed one re-runs every test"),
      selection: z.boolean().default(true).describe("false: a build that changed anything re-runs every test"),
    })
    .strict()
  export type ResultsRules = z.infer<typeof ResultsRules>

  /** The results rules with their defaults. */
  export function resultsRules(rules: Rules): ResultsRules {
    return ResultsRules.parse(rules.cache.results ?? {})
  }

  /** What detection (or `aircoding init`) found, kept so people can see why the commands are what they are. */
  export const Detected = z
    .object({
      system: z.enum(["cmake-presets", "cmake", "meson", "make", "runners", "none"]),
      /** With `runners`: the test runners the project's files declare (pytest, vitest, jest, go, cargo). */
      runners: z.array(z.string()).optional(),
      preset: z.string().optional(),
      buildDir: z.string().optional(),
      generator: z.string().optional(),
      jobs: z.number().int().positive().optional(),
    })
    .strict()

  /** The baseline `aircoding init` ran once on the project's HEAD. */
  export const Baseline = z
    .object({
      commit: z.string(),
      passed: z.boolean(),
      build: z.object({ passed: z.boolean(), ms: z.number().int().nonnegative() }).strict(),
      test: z.object({ passed: z.boolean(), ms: z.number().int().nonnegative() }).strict(),
      analysis: z.object({ passed: z.boolean(), ms: z.number().int().nonnegative(), findings: z.number().int().nonnegative() }).strict(),
      at: z.string(),
    })
    .strict()

  /**
   * A JUnit report the project's own test runner writes (gtest's --gtest_output=xml, pytest's --junitxml,
   * Gradle, a script): a path or glob inside the worktree, since the gates read it after the test command.
   */
  export const JunitPattern = z
    .string()
    .min(1)
    .refine((p) => !p.startsWith("/") && !/^[A-Za-z]:/.test(p) && !p.includes("\\"), "a path relative to the worktree, with / between directories")
    .refine((p) => !p.split("/").includes(".."), "inside the worktree (no ..)")
    .refine((p) => !p.split("/").includes(".git"), "not inside .git")

  export const Rules = z
    .object({
      schemaVersion: z.literal(1),
      build: z.array(z.string().min(1)).default([]).describe("shell commands run in order in the worktree"),
      test: z.array(z.string().min(1)).default([]).describe("shell commands run in order after the build"),
      junit: z
        .array(JunitPattern)
        .default([])
        .describe(
          "JUnit XML files the test commands write, as globs relative to the worktree (e.g. build/test-results/*.xml): read for per-test results, as CTest's own",
        ),
      analysis: AnalysisRules.default({
        failOn: "error",
        cppcheck: { enabled: true, args: [], binary: "cppcheck" },
        clangTidy: { binary: "clang-tidy", args: [] },
        backends: {},
      }),
      timeoutMs: z.number().int().positive().default(DEFAULT_TIMEOUT_MS).describe("per command"),
      network: z.boolean().default(false).describe("true lets sandboxed commands (workers' shells, gates) reach the network"),
      cache: CacheRules.default({ tool: "auto", dir: AirPaths.CCACHE, maxSize: "5G" }),
      farm: Farm.Rules.optional().describe("a distcc build farm the compiles go through, behind the compiler cache: { tool, hosts: [{ host, port, slots }] }"),
      detected: Detected.optional(),
      baseline: Baseline.optional(),
      areas: Areas.List.describe("the repository's parts in other languages, each with its own root, build, test and analysers (areas.ts); with areas, build and test are theirs"),
    })
    .strict()
    // With areas, build and test are every area's commands, each from its root: what the final check, the merge
    // build and the baseline run; a task's gates narrow them to the areas it touches (Areas.scope).
    .transform((rules) => (rules.areas.length === 0 ? rules : { ...rules, build: Areas.commands(rules.areas, "build"), test: Areas.commands(rules.areas, "test") }))
  export type Rules = z.infer<typeof Rules>
  /** What a project may write in toolchain.json (defaults filled in by `Rules.parse`). */
  export type RulesInput = z.input<typeof Rules>

  export interface Resolved {
    rules: Rules
    /** `file`: from toolchain.json; `detected`: a build system found; `none`: nothing to build or test. */
    source: "file" | "detected" | "none"
    /** Where the rules came from, for people. */
    note: string
  }

  export interface DetectOptions {
    /** Parallel jobs for the build and the tests; default AIRCODING_JOBS or `os.availableParallelism()`. */
    jobs?: number
    /** A build directory of the user's whose CMakeCache.txt options (C++ standard, feature switches) are reused. */
    fromBuild?: string
    env?: NodeJS.ProcessEnv
  }
}
