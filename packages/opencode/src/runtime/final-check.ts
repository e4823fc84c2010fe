import { existsSync, readFileSync } from "node:fs"
import { readFile, rm } from "node:fs/promises"
import { join } from "node:path"
import { writeFileAtomic } from "./atomic"
import { Toolchain } from "./toolchain/index"
import { Proc } from "./process.ts"
import { JUnit } from "./gates/junit"

/**
 * After the last merge, the Scheduler builds and tests the integration branch itself: each task passed
 * its gates on its own branch, and only this run shows that together they still build and pass.
 * Evidence goes to .air/local/evidence/_final/.
 */
export namespace FinalCheck {
  export type Result = { passed: boolean; summary: string; evidenceDir: string; commands: { command: string; code: number }[] }

  export function dir(root: string): string {
    return join(root, ".air", "local", "evidence", "_final")
  }

  /** Through the one process runner: a timeout kills the shell and everything it started (a hung ctest too). */
  async function sh(command: string, cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv): Promise<{ code: number; output: string; how: string }> {
    const r = await Proc.run(command, [], { cwd, env, shell: true, timeoutMs })
    const code = r.spawnError ? 127 : r.timedOut ? 124 : (r.code ?? 128)
    return { code, output: r.output, how: Proc.describe(r, timeoutMs) }
  }

  /** `knownFailingTests`: tests that failed on the run's baseline (the user went on with them): not a failure here either. */
  export async function run(root: string, options: { knownFailingTests?: readonly string[] } = {}): Promise<Result> {
    const known = new Set(options.knownFailingTests ?? [])
    const inherited: string[] = []
    const { rules, note } = await Toolchain.load(root)
    const out = dir(root)
    const commands: Result["commands"] = []
    let log = `# ${note}\n`
    let lastHow = ""
    // Through the compiler cache the task worktrees filled: the same sources hit at the project root too.
    const env = Toolchain.commandEnv(rules, { root, worktree: root }, process.env)
    const junit = join(root, Toolchain.BUILD_DIR, `final-${JUnit.CTEST_FILE}`)
    for (const command of [...rules.build, ...rules.test]) {
      const isTest = known.size > 0 && rules.test.includes(command) && !rules.build.includes(command)
      const run = (isTest && JUnit.withCtestJunit(command, junit)) || command
      if (run !== command) await rm(junit, { force: true })
      const r = await sh(run, root, rules.timeoutMs, env)
      // Only tests that already failed on the baseline failing: inherited, the check goes on.
      const failing = run !== command && r.code !== 0 ? JUnit.failed(JUnit.results(JUnit.parse(await readFile(junit, "utf8").catch(() => "")) ?? [])) : []
      const onlyKnown = failing.length > 0 && failing.every((name) => known.has(name))
      if (onlyKnown) inherited.push(...failing)
      commands.push({ command, code: onlyKnown ? 0 : r.code })
      lastHow = r.how
      log += `$ ${run}\n${r.output}\n# ${r.how} (exit ${r.code})${onlyKnown ? `; inherited from the baseline: ${failing.join(", ")}` : ""}\n`
      if (r.code !== 0 && !onlyKnown) break
    }
    const passed = commands.length > 0 && commands.every((c) => c.code === 0)
    const summary = commands.length === 0
      ? `no build or test command to run on the integration branch (${note})`
      : passed
        ? `integration branch builds and its tests pass (${commands.length} command(s))${inherited.length > 0 ? `, but for tests failing before the run (inherited): ${inherited.join(", ")}` : ""}`
        : `integration branch FAILS: \`${commands.at(-1)!.command}\` ${lastHow}; see ${join(out, "final.log")}`
    const result: Result = { passed, summary, evidenceDir: out, commands }
    await writeFileAtomic(join(out, "final.log"), log)
    await writeFileAtomic(join(out, "result.json"), JSON.stringify(result, null, 2))
    return result
  }

  export function read(root: string): Result | undefined {
    const file = join(dir(root), "result.json")
    if (!existsSync(file)) return undefined
    try {
      return JSON.parse(readFileSync(file, "utf8"))
    } catch {
      return undefined
    }
  }
}
