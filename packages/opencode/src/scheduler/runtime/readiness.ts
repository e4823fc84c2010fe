import { existsSync } from "node:fs"
import path from "node:path"
import { gitTry } from "./git/git.ts"
import { ResultStore } from "./results/store.ts"
import { Toolchain } from "./toolchain/index.ts"
import { CompilerCache } from "./toolchain/cache.ts"
import { Submodules } from "./git/submodules.ts"
import type { Areas } from "./toolchain/areas.ts"
import { AirPaths } from "../core/air-paths"

/** The project's readiness for the gates, as `doctor` shows it: each gap with the command that closes it. */
export namespace Readiness {
  export interface Check {
    name: string
    ok: boolean
    detail: string
    fix?: string
  }

  export async function checks(dir: string, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
    const top = await gitTry(dir, ["rev-parse", "--show-toplevel"]).catch(() => undefined)
    // Outside a repository doctor checks the machine only (the project checks need a project).
    if (!top || top.code !== 0) return []
    const root = top.stdout.trim()
    const result: Check[] = []
    // A repository with nothing to build and no rules is not a C++ project yet: nothing to be ready for.
    const probe = await Toolchain.load(root).catch(() => undefined)
    if (probe?.source === "none" && (await Submodules.list(root)).length === 0) return []

    const problems = await Submodules.problems(root)
    const count = (await Submodules.list(root)).length
    result.push(
      problems.length > 0
        ? { name: "submodules", ok: false, detail: problems.map((p) => p.problem).join("; "), fix: problems.map((p) => p.fix).join(" && ") }
        : { name: "submodules", ok: true, detail: count > 0 ? `${count} submodule(s), all initialised (worktrees get them offline)` : "none" },
    )

    let resolved: Toolchain.Resolved | undefined
    try {
      resolved = await Toolchain.load(root)
    } catch (error) {
      result.push({ name: "configuration", ok: false, detail: (error as Error).message.split("\n")[0]!, fix: `aircoding init --redetect ${root}` })
    }
    if (resolved) {
      const rules = resolved.rules
      const tool = CompilerCache.tool(rules.cache, env)
      result.push(
        tool
          ? { name: "compiler cache", ok: true, detail: `${tool}, ${rules.cache.dir} (limit ${rules.cache.maxSize}) shared by every worktree` }
          : rules.cache.tool === "none"
            ? { name: "compiler cache", ok: true, detail: `off (cache.tool is "none" in ${Toolchain.RULES_PATH})` }
            : {
                name: "compiler cache",
                ok: false,
                detail: `${rules.cache.tool === "auto" ? "ccache" : rules.cache.tool} is not installed: every worktree builds from nothing`,
                fix: "sudo apt-get install ccache (macOS: brew install ccache)",
              },
      )
      result.push(
        resolved.source === "none"
          ? { name: "configuration", ok: false, detail: resolved.note, fix: `write build[] and test[] in ${Toolchain.RULES_PATH}, or run aircoding init` }
          : resolved.source === "detected"
            ? { name: "configuration", ok: false, detail: `${resolved.note} (detected at every gate, no baseline yet)`, fix: `aircoding init ${root}` }
            : { name: "configuration", ok: true, detail: `${Toolchain.RULES_PATH}: ${rules.build.length} build and ${rules.test.length} test command(s)${rules.areas.length > 0 ? ` in ${rules.areas.length} areas (${rules.areas.map((a) => a.name).join(", ")})` : ""}` },
      )
      result.push(...areaChecks(rules.areas, env))
      const tidy = clangTidyCheck(root, rules.analysis.clangTidy, env)
      if (tidy) result.push(tidy)
      const head = (await gitTry(root, ["rev-parse", "HEAD"])).stdout.trim()
      const baseline = rules.baseline
      result.push(
        !baseline
          ? { name: "baseline", ok: false, detail: "never run: nobody knows yet whether HEAD builds and passes", fix: `aircoding init ${root}` }
          : !baseline.passed
            ? {
                name: "baseline",
                ok: false,
                detail: `not green on ${baseline.commit.slice(0, 12)} (build ${baseline.build.passed ? "ok" : "failed"}, tests ${baseline.test.passed ? "ok" : "failed"}; analysis findings are inherited, never the reason); logs in ${AirPaths.EVIDENCE}/_init/`,
                fix: `fix the failure (or the configure options in ${Toolchain.RULES_PATH}), then aircoding init ${root}`,
              }
            : {
                name: "baseline",
                ok: true,
                detail:
                  `green on ${baseline.commit.slice(0, 12)}${baseline.commit === head ? " (HEAD)" : ` (HEAD is now ${head.slice(0, 12)})`}: ` +
                  `build ${(baseline.build.ms / 1000).toFixed(1)} s, tests ${(baseline.test.ms / 1000).toFixed(1)} s, analysis ${(baseline.analysis.ms / 1000).toFixed(1)} s`,
              },
      )
      result.push(await resultsCheck(root, rules, env))
    }
    return result
  }

  /**
   * One check per toolchain area: its root, its commands, the analysers that read it, and whether the programs
   * its commands start are installed (a missing one stops that area's gates as a tool missing).
   */
  export function areaChecks(areas: readonly Areas.Area[], env: NodeJS.ProcessEnv): Check[] {
    return areas.map((area) => {
      const tools = [...new Set([...area.build, ...area.test].map(programOf).filter((t): t is string => t !== undefined))]
      const missing = tools.filter((t) => CompilerCache.onPath(t, env) === undefined && !existsSync(path.resolve(t)))
      const commands = `build: ${area.build.join(" && ") || "(none)"}; test: ${area.test.join(" && ") || "(none)"}`
      const analysers = `analysers: ${area.analysers?.join(", ") || "every one"}`
      const detail = `${area.root}${area.detected ? ` (${area.detected})` : ""}: ${commands}; ${analysers}; tools ${tools.join(", ") || "none"}`
      return missing.length > 0
        ? { name: `area ${area.name}`, ok: false, detail: `${detail}; not installed: ${missing.join(", ")} (its tasks stop at the gates)`, fix: missing.map((t) => INSTALL[t] ?? `install ${t}`).join(" && ") }
        : { name: `area ${area.name}`, ok: true, detail: `${detail}, all installed` }
    })
  }

  const INSTALL: Record<string, string> = {
    cmake: "sudo apt-get install cmake",
    ctest: "sudo apt-get install cmake",
    python3: "sudo apt-get install python3 python3-pytest",
    go: "sudo apt-get install golang-go",
    cargo: "sudo apt-get install cargo rust-clippy",
    npx: "sudo apt-get install npm",
    meson: "sudo apt-get install meson",
    make: "sudo apt-get install make",
  }

  /** The program a shell command starts: its first word after `cd … &&` and variable assignments (`test -f … ||` kept as test). */
  function programOf(command: string): string | undefined {
    const words = command.replace(/^\s*cd\s+\S+\s*&&\s*/, "").trim().split(/\s+/)
    return words.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w))
  }

  /** The results store: where it lives, its size against the limit, the hit rate and time saved so far. */
  export async function resultsCheck(root: string, rules: Toolchain.Rules, env: NodeJS.ProcessEnv = process.env): Promise<Check> {
    const settings = Toolchain.resultsRules(rules)
    if (!settings.enabled) return { name: "results store", ok: true, detail: `off (cache.results.enabled is false in ${Toolchain.RULES_PATH}): every build and test runs` }
    const s = await ResultStore.summary(root, rules, env)
    const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
    const rate = s.lookups > 0 ? `${Math.round((100 * s.hits) / s.lookups)}% hits (${s.hits} of ${s.lookups} lookups)` : "no lookup yet"
    return {
      name: "results store",
      ok: true,
      detail:
        `${path.relative(root, s.dir) || s.dir}: ${s.entries} result(s), ${mb(s.bytes)} of ${settings.maxSize}; ${rate}, about ${(s.savedMs / 1000).toFixed(0)} s saved` +
        (s.remote ? `; shared at ${s.remote.where} (${s.remote.writable ? "read-write" : "read-only"})` : "; this machine only"),
    }
  }

  /**
   * The clang-tidy gate: off and unconfigured says nothing; a .clang-tidy with no clang-tidy installed is said
   * here, because the gate then records "not run" on every task instead of checking.
   */
  export function clangTidyCheck(root: string, rules: Toolchain.ClangTidyRules, env: NodeJS.ProcessEnv = process.env): Check | undefined {
    if (rules.enabled === false) return { name: "clang-tidy", ok: true, detail: `off (analysis.clangTidy.enabled is false in ${Toolchain.RULES_PATH})` }
    const configured = existsSync(path.join(root, ".clang-tidy"))
    if (!configured && rules.enabled === undefined) return undefined
    const found = CompilerCache.onPath(rules.binary, env)
    if (found) return { name: "clang-tidy", ok: true, detail: `${found} checks the changed files with the project's .clang-tidy, judged against each task's base` }
    return {
      name: "clang-tidy",
      ok: false,
      detail:
        rules.enabled === true
          ? `required in ${Toolchain.RULES_PATH} but \`${rules.binary}\` is not installed: every task stops at the gates`
          : `the project has a .clang-tidy but \`${rules.binary}\` is not installed: the clang-tidy gate is recorded as not run`,
      fix: "sudo apt-get install clang-tidy (macOS: brew install llvm)",
    }
  }
}
