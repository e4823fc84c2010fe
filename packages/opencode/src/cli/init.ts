import { mkdir, readFile } from "node:fs/promises"
import path from "node:path"
import { writeFileAtomic } from "../scheduler/runtime/store/atomic.ts"
import { Toolchain } from "../scheduler/runtime/toolchain/index.ts"
import { Worktrees } from "../scheduler/runtime/git/worktree.ts"
import { BaselineRun } from "../scheduler/runtime/baseline-run.ts"
import { CompilerCache } from "../scheduler/runtime/toolchain/cache.ts"
import { Submodules } from "../scheduler/runtime/git/submodules.ts"
import { HouseInit } from "../knowledge/house-init.ts"
import { Launch } from "./launch"
import { Args } from "./args"
import { Ui } from "./ui"

/**
 * `aircoding init [dir]`: detects the project's toolchain (build system, presets, Ninja, parallelism, compiler
 * cache, compile_commands.json for cppcheck), runs the baseline once, and writes
 * `.air/shared/rules/toolchain.json` with what it found, saying what it wrote and why; then the house rules
 * (`.air/shared/rules/house.json`) from what the project already logs with.
 */
export namespace Init {
  export interface Options {
    /** A build directory of the user's whose CMake options are reused (detection only). */
    fromBuild?: string
    jobs?: number
    /** Detect and write, without the baseline run. */
    noBaseline?: boolean
    /** Detect again even when toolchain.json exists (its cache settings are kept). */
    redetect?: boolean
    env?: NodeJS.ProcessEnv
  }

  export interface Outcome {
    root: string
    file: string
    rules: Toolchain.Rules
    /** One line per decision, for people. */
    reasons: string[]
    submoduleProblems: Submodules.Problem[]
    baseline?: BaselineRun.Result
    /** The house rules written or kept (absent in outcomes made before init wrote them). */
    house?: HouseInit.Outcome
  }

  export async function run(dir: string, options: Options = {}): Promise<Outcome> {
    const root = await Worktrees.repoRoot(dir)
    const file = path.join(root, Toolchain.RULES_PATH)
    const env = options.env ?? process.env
    const reasons: string[] = []
    const existing = await readExisting(file)
    let rules: Toolchain.Rules
    if (existing && !options.redetect) {
      rules = existing
      reasons.push(`kept the commands of the existing ${Toolchain.RULES_PATH} (--redetect detects them again)`)
    } else {
      const detected = await Toolchain.detect(root, {
        env,
        ...(options.jobs ? { jobs: options.jobs } : {}),
        ...(options.fromBuild ? { fromBuild: options.fromBuild } : {}),
      })
      rules = Toolchain.Rules.parse({ ...detected.rules, ...(existing ? { cache: existing.cache } : {}) })
      reasons.push(detected.note.replace(/; no .*$/, ""))
      if (rules.analysis.cppcheck.project) {
        reasons.push(`cppcheck reads ${rules.analysis.cppcheck.project} (the build's own includes and defines), restricted to the changed files`)
      }
    }
    const cacheTool = CompilerCache.tool(rules.cache, env)
    reasons.push(
      cacheTool
        ? `builds go through ${cacheTool}, cache in ${rules.cache.dir} (limit ${rules.cache.maxSize}) shared by every worktree`
        : `no compiler cache: ${rules.cache.tool === "none" ? "turned off in the rules" : `${rules.cache.tool === "auto" ? "ccache" : rules.cache.tool} is not installed`} (every worktree builds from nothing)`,
    )
    const submoduleProblems = await Submodules.problems(root)
    const submodules = await Submodules.list(root)
    if (submodules.length > 0) {
      reasons.push(
        `${submodules.length} submodule(s), checked out in every worktree from this checkout (offline)` +
          (submoduleProblems.length > 0 ? `; ${submoduleProblems.length} not initialised` : ""),
      )
    }
    let baseline: BaselineRun.Result | undefined
    if (!options.noBaseline) {
      baseline = await BaselineRun.run(root, rules, { env })
      rules = Toolchain.Rules.parse({
        ...rules,
        baseline: {
          commit: baseline.commit,
          passed: baseline.passed,
          build: { passed: baseline.build.passed, ms: baseline.build.ms },
          test: { passed: baseline.test.passed, ms: baseline.test.ms },
          analysis: { passed: baseline.analysis.passed, ms: baseline.analysis.ms, findings: baseline.analysis.findings },
          at: new Date().toISOString(),
        },
      })
    }
    await mkdir(path.dirname(file), { recursive: true })
    await writeFileAtomic(file, JSON.stringify(Toolchain.fileOf(rules), null, 2) + "\n", { backup: false })
    const house = await HouseInit.run(root, options.redetect === true)
    return { root, file, rules, reasons, submoduleProblems, ...(baseline ? { baseline } : {}), house }
  }

  async function readExisting(file: string): Promise<Toolchain.Rules | undefined> {
    let text: string
    try {
      text = await readFile(file, "utf8")
    } catch {
      return undefined
    }
    return Toolchain.parse(text, file)
  }

  export function describe(outcome: Outcome): string {
    const { rules, baseline } = outcome
    const lines: string[] = [`Wrote ${path.relative(outcome.root, outcome.file)}:`]
    if (rules.areas.length > 0)
      for (const area of rules.areas)
        lines.push(
          `  area ${area.name} (${area.root}${area.detected ? `, from ${area.detected}` : ""}): build ${area.build.join(" && ") || "(none)"}; test ${area.test.join(" && ") || "(none)"}; analysers ${area.analysers?.join(", ") ?? "every one"}`,
        )
    else {
      lines.push(`  build:    ${rules.build.join(" && ") || "(none)"}`)
      lines.push(`  test:     ${rules.test.join(" && ") || "(none)"}`)
    }
    lines.push(`  analysis: cppcheck${rules.analysis.cppcheck.project ? ` --project=${rules.analysis.cppcheck.project}` : " -I include -I src"}`)
    lines.push("Why:")
    for (const reason of outcome.reasons) lines.push(`  - ${reason}`)
    for (const problem of outcome.submoduleProblems) lines.push(`  ! ${problem.problem}\n    fix: ${problem.fix}`)
    if (outcome.house) {
      lines.push(`House rules in ${path.relative(outcome.root, outcome.house.file)}:`)
      for (const reason of outcome.house.reasons) lines.push(`  - ${reason}`)
    }
    if (baseline) {
      const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
      lines.push(`Baseline on ${baseline.commit.slice(0, 12)} (logs in ${path.relative(outcome.root, baseline.evidenceDir)}):`)
      lines.push(
        `  build    ${baseline.build.passed ? "passed" : "FAILED"} in ${s(baseline.build.ms)}` +
          (baseline.build.cache ? ` (${CompilerCache.describe(baseline.build.cache)})` : ""),
      )
      lines.push(`  tests    ${baseline.test.passed ? "passed" : "FAILED"} in ${s(baseline.test.ms)}`)
      lines.push(
        baseline.analysis.passed
          ? `  analysis ran in ${s(baseline.analysis.ms)}: ${baseline.analysis.findings} finding(s), ${baseline.analysis.errors} error(s)` +
              (baseline.analysis.findings > 0 ? ", recorded as inherited: a task is judged only on findings it adds" : "")
          : `  analysis could not run in ${s(baseline.analysis.ms)}`,
      )
      if (baseline.analysis.inherited) lines.push(baseline.analysis.inherited.split("\n").map((l) => `    (inherited) ${l}`).join("\n"))
      for (const step of [baseline.build, baseline.test, baseline.analysis]) {
        if (!step.passed && step.failure) lines.push(step.failure.split("\n").map((l) => `    ${l}`).join("\n"))
      }
      for (const note of baseline.submodules) lines.push(`  ! ${note}`)
      lines.push(
        baseline.passed
          ? "The project is ready: tasks are judged by these rules."
          : `The baseline is not green (the ${baseline.build.passed ? "tests" : "build"} failed): fix it first, or edit ${Toolchain.RULES_PATH} (e.g. the configure options) and run aircoding init again.`,
      )
    }
    return lines.join("\n") + "\n"
  }
}

export async function initCommand(dirArg: string | undefined, opts: Init.Options & { json: boolean }): Promise<number> {
  const dir = Args.projectDir(dirArg, "init")
  if (!opts.json) Ui.step(`detecting the toolchain in ${dir}${opts.noBaseline ? "" : " and running the baseline once (build, tests, analysis)"}`)
  const outcome = await Init.run(dir, opts)
  if (opts.json) process.stdout.write(JSON.stringify(outcome, null, 2) + "\n")
  else process.stdout.write(Init.describe(outcome))
  return outcome.baseline && !outcome.baseline.passed ? 1 : 0
}
