import { readFile, stat } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { z } from "zod"
import { ToolchainSchema } from "./rules-schema.ts"
import { CompilerCache } from "./cache.ts"
import { DetectRunners } from "./detect-runners.ts"
import { DetectAreas } from "./detect-areas.ts"
import type { Areas } from "./areas.ts"

/**
 * Detection of the project's own build: CMakePresets.json first (the team's configure, build and test
 * presets), then CMakeLists.txt, meson.build, a Makefile, then the test runners a project's files declare
 * (detect-runners.ts). Build directories stay inside the worktree.
 */
export namespace Detect {
  export type Options = ToolchainSchema.DetectOptions

  export function defaultJobs(env: NodeJS.ProcessEnv = process.env): number {
    const configured = Number.parseInt(env.AIRCODING_JOBS ?? "", 10)
    if (Number.isInteger(configured) && configured > 0) return configured
    return Math.max(1, os.availableParallelism())
  }

  /**
   * The top's build (below), and when directories below it are projects of their own (python/pyproject.toml,
   * web/package.json, a go.mod, a Cargo.toml: detect-areas.ts), one area each beside the top's.
   */
  export async function run(dir: string, options: Options = {}): Promise<ToolchainSchema.Resolved> {
    const top = await topLevel(dir, options)
    const below = await DetectAreas.below(dir)
    if (below.length === 0) return top
    const system = top.rules.detected?.system
    const own: Areas.Area[] =
      top.source === "detected" && system !== "runners"
        ? [{ name: "cpp", root: ".", build: top.rules.build, test: top.rules.test, detected: system === "cmake-presets" ? "CMakePresets.json" : system === "cmake" ? "CMakeLists.txt" : system === "meson" ? "meson.build" : "Makefile" }]
        : []
    const areas = [...own, ...DetectAreas.named([...(own.length > 0 ? [] : await DetectAreas.at(dir, ".")), ...below], own.map((a) => a.name))]
    const rules = ToolchainSchema.Rules.parse({ ...top.rules, build: [], test: [], areas })
    const listed = areas.map((a) => `${a.name} (${a.root}: ${a.detected ?? "given"})`).join(", ")
    return { rules, source: "detected", note: `${areas.length} areas detected: ${listed}; no ${ToolchainSchema.RULES_PATH}` }
  }

  async function topLevel(dir: string, options: Options): Promise<ToolchainSchema.Resolved> {
    const env = options.env ?? process.env
    const jobs = options.jobs ?? defaultJobs(env)
    const ninja = CompilerCache.onPath("ninja", env) !== undefined
    const rulesFile = ToolchainSchema.RULES_PATH

    const presets = await readPresets(dir)
    if (presets) {
      const chosen = choosePresets(presets, path.basename(dir))
      if (chosen) return presetRules(chosen, jobs, ninja)
    }
    if (await isFile(path.join(dir, "CMakeLists.txt"))) {
      const extra = options.fromBuild ? await cacheOptions(path.resolve(dir, options.fromBuild)) : []
      const build = ToolchainSchema.BUILD_DIR
      const configure = [
        `cmake -S . -B ${build}`,
        ...(ninja ? ["-G Ninja"] : []),
        ...(extra.some((o) => o.startsWith("-DCMAKE_BUILD_TYPE=")) ? [] : ["-DCMAKE_BUILD_TYPE=Debug"]),
        "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
        ...extra.map(shellQuote),
      ].join(" ")
      return resolved(
        {
          build: [configure, `cmake --build ${build} -j ${jobs}`],
          test: [`ctest --test-dir ${build} --output-on-failure -j ${jobs}`],
          project: `${build}/compile_commands.json`,
          detected: { system: "cmake", buildDir: build, ...(ninja ? { generator: "Ninja" } : {}), jobs },
        },
        `CMake project detected (CMakeLists.txt${ninja ? ", Ninja" : ""}, -j ${jobs}` +
          `${extra.length > 0 ? `, ${extra.length} option(s) from ${options.fromBuild}` : ""}); no ${rulesFile}`,
      )
    }
    if (await isFile(path.join(dir, "meson.build"))) {
      const build = ToolchainSchema.BUILD_DIR
      return resolved(
        {
          build: [`test -f ${build}/build.ninja || meson setup ${build}`, `meson compile -C ${build} -j ${jobs}`],
          test: [`meson test -C ${build} --num-processes ${jobs} --print-errorlogs`],
          project: `${build}/compile_commands.json`,
          detected: { system: "meson", buildDir: build, generator: "Ninja", jobs },
        },
        `Meson project detected (meson.build, -j ${jobs}); no ${rulesFile}`,
      )
    }
    for (const name of ["GNUmakefile", "makefile", "Makefile"]) {
      const file = path.join(dir, name)
      if (!(await isFile(file))) continue
      const text = await readFile(file, "utf8")
      const target = ["check", "test"].find((t) => new RegExp(`^${t}\\s*:`, "m").test(text))
      const db = (await isFile(path.join(dir, "compile_commands.json"))) ? "compile_commands.json" : undefined
      return resolved(
        {
          build: [`make -j ${jobs}`],
          test: target ? [`make ${target}`] : [],
          ...(db ? { project: db } : {}),
          detected: { system: "make", jobs },
        },
        `Makefile project detected (${name}, -j ${jobs}${target ? `, tests: make ${target}` : ", no check/test target"}); no ${rulesFile}`,
      )
    }
    const runners = await DetectRunners.run(dir)
    const problems = runners.problems.length > 0 ? ` (${runners.problems.join("; ")})` : ""
    if (runners.found.length > 0)
      return resolved(
        {
          build: runners.found.flatMap((r) => (r.build ? [r.build] : [])),
          test: runners.found.map((r) => r.test),
          detected: { system: "runners", runners: runners.found.map((r) => r.framework) },
        },
        `test runners detected (${runners.found.map((r) => `${r.framework}: ${r.because}`).join(", ")})${problems}; no ${rulesFile}`,
      )
    return {
      rules: ToolchainSchema.Rules.parse({ schemaVersion: 1 }),
      source: "none",
      note: `no ${rulesFile} and no CMakeLists.txt, meson.build, Makefile or test runner's file at the top of the project${problems}: no build or test command to run`,
    }
  }

  function resolved(
    found: { build: string[]; test: string[]; project?: string; detected: z.input<typeof ToolchainSchema.Detected> },
    note: string,
  ): ToolchainSchema.Resolved {
    return {
      rules: ToolchainSchema.Rules.parse({
        schemaVersion: 1,
        build: found.build,
        test: found.test,
        ...(found.project ? { analysis: { cppcheck: { project: found.project } } } : {}),
        detected: found.detected,
      }),
      source: "detected",
      note,
    }
  }

  // ---- CMakePresets.json ----

  const ConfigurePreset = z
    .object({
      name: z.string(),
      hidden: z.boolean().optional(),
      inherits: z.union([z.string(), z.array(z.string())]).optional(),
      binaryDir: z.string().optional(),
      generator: z.string().optional(),
    })
    .passthrough()
  const StepPreset = z.object({ name: z.string(), hidden: z.boolean().optional(), configurePreset: z.string().optional() }).passthrough()
  const PresetsFile = z
    .object({
      configurePresets: z.array(ConfigurePreset).default([]),
      buildPresets: z.array(StepPreset).default([]),
      testPresets: z.array(StepPreset).default([]),
    })
    .passthrough()
  type PresetsFile = z.infer<typeof PresetsFile>

  interface Chosen {
    configure: string
    build?: string
    test?: string
    /** The configure preset's binaryDir relative to the source dir, when it uses only macros we can expand. */
    binaryDir?: string
    generator?: string
  }

  async function readPresets(dir: string): Promise<PresetsFile | undefined> {
    let text: string
    try {
      text = await readFile(path.join(dir, "CMakePresets.json"), "utf8")
    } catch {
      return undefined
    }
    try {
      const parsed = PresetsFile.safeParse(JSON.parse(text))
      return parsed.success ? parsed.data : undefined
    } catch {
      return undefined
    }
  }

  /** A visible configure preset (a debug/dev/default one first), with the build and test presets made for it. */
  export function choosePresets(file: PresetsFile, sourceDirName: string): Chosen | undefined {
    const visible = file.configurePresets.filter((p) => !p.hidden)
    if (visible.length === 0) return undefined
    const configure = visible.find((p) => /debug|dev|default/i.test(p.name)) ?? visible[0]!
    const byName = new Map(file.configurePresets.map((p) => [p.name, p]))
    const chain = (name: string, seen = new Set<string>()): z.infer<typeof ConfigurePreset>[] => {
      const preset = byName.get(name)
      if (!preset || seen.has(name)) return []
      seen.add(name)
      const parents = preset.inherits === undefined ? [] : Array.isArray(preset.inherits) ? preset.inherits : [preset.inherits]
      return [preset, ...parents.flatMap((parent) => chain(parent, seen))]
    }
    const lineage = chain(configure.name)
    const rawBinaryDir = lineage.find((p) => p.binaryDir !== undefined)?.binaryDir
    const generator = lineage.find((p) => p.generator !== undefined)?.generator
    const binaryDir = rawBinaryDir === undefined ? undefined : expandBinaryDir(rawBinaryDir, configure.name, sourceDirName)
    const forConfigure = (p: z.infer<typeof StepPreset>) => !p.hidden && p.configurePreset === configure.name
    const build = file.buildPresets.find(forConfigure)?.name
    const test = file.testPresets.find(forConfigure)?.name
    return {
      configure: configure.name,
      ...(build ? { build } : {}),
      ...(test ? { test } : {}),
      ...(binaryDir ? { binaryDir } : {}),
      ...(generator ? { generator } : {}),
    }
  }

  function expandBinaryDir(raw: string, presetName: string, sourceDirName: string): string | undefined {
    const expanded = raw
      .replaceAll("${sourceDir}", ".")
      .replaceAll("${presetName}", presetName)
      .replaceAll("${sourceDirName}", sourceDirName)
      .replaceAll("${sourceParentDir}", "..")
    if (expanded.includes("$")) return undefined
    const relative = path.posix.normalize(expanded.replaceAll("\\", "/"))
    // Outside the source dir, two worktrees would build into one directory.
    if (path.posix.isAbsolute(relative) || relative.startsWith("..")) return undefined
    return relative.replace(/^\.\//, "")
  }

  function presetRules(chosen: Chosen, jobs: number, ninja: boolean): ToolchainSchema.Resolved {
    // A binaryDir we cannot place inside the worktree is replaced by ours; its build preset then cannot be used.
    const ownDir = chosen.binaryDir === undefined
    const build = chosen.binaryDir ?? ToolchainSchema.BUILD_DIR
    const configure = [
      `cmake --preset ${shellQuote(chosen.configure)}`,
      ...(ownDir ? [`-B ${build}`] : []),
      ...(!chosen.generator && ninja ? ["-G Ninja"] : []),
      "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
    ].join(" ")
    const buildCommand =
      chosen.build && !ownDir ? `cmake --build --preset ${shellQuote(chosen.build)} -j ${jobs}` : `cmake --build ${build} -j ${jobs}`
    const testCommand =
      chosen.test && !ownDir
        ? `ctest --preset ${shellQuote(chosen.test)} --output-on-failure -j ${jobs}`
        : `ctest --test-dir ${build} --output-on-failure -j ${jobs}`
    return resolved(
      {
        build: [configure, buildCommand],
        test: [testCommand],
        project: `${build}/compile_commands.json`,
        detected: {
          system: "cmake-presets",
          preset: chosen.configure,
          buildDir: build,
          ...(chosen.generator ? { generator: chosen.generator } : ninja ? { generator: "Ninja" } : {}),
          jobs,
        },
      },
      `CMakePresets.json: configure preset ${chosen.configure}` +
        `${chosen.build && !ownDir ? `, build preset ${chosen.build}` : ""}${chosen.test && !ownDir ? `, test preset ${chosen.test}` : ""}` +
        ` (build dir ${build}, -j ${jobs}); no ${ToolchainSchema.RULES_PATH}`,
    )
  }

  // ---- options from the user's own build directory ----

  const KEPT_CMAKE = new Set(["CMAKE_BUILD_TYPE", "CMAKE_CXX_STANDARD", "CMAKE_C_STANDARD", "CMAKE_CXX_FLAGS", "CMAKE_C_FLAGS", "CMAKE_CXX_EXTENSIONS"])

  /**
   * The configure options a user chose in their build directory: the CMAKE_ settings above plus the project's
   * own switches (BOOL/STRING entries set on the command line or by option()), never paths found by probing.
   */
  export async function cacheOptions(buildDir: string): Promise<string[]> {
    let text: string
    try {
      text = await readFile(path.join(buildDir, "CMakeCache.txt"), "utf8")
    } catch {
      return []
    }
    const options: string[] = []
    for (const line of text.split(/\r?\n/)) {
      const match = /^([A-Za-z_][A-Za-z0-9_.+-]*):([A-Z]+)=(.*)$/.exec(line)
      if (!match) continue
      const [, key, type, value] = match as unknown as [string, string, string, string]
      if (KEPT_CMAKE.has(key)) {
        if (value !== "") options.push(`-D${key}=${value}`)
        continue
      }
      if (key.startsWith("CMAKE_") || key.startsWith("FETCHCONTENT_") || key.startsWith("_")) continue
      if (!["BOOL", "STRING", "UNINITIALIZED"].includes(type)) continue
      if (/(_DIR|_LIBRARY|_LIBRARIES|_INCLUDE_DIR|_EXECUTABLE|_PATH)$/.test(key)) continue
      options.push(`-D${key}=${value}`)
    }
    return options
  }

  function shellQuote(word: string): string {
    return /^[A-Za-z0-9_./:=+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
  }

  async function isFile(file: string): Promise<boolean> {
    try {
      return (await stat(file)).isFile()
    } catch {
      return false
    }
  }
}
