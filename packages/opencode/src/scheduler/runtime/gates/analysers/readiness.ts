import { gitTry } from "../../git/git.ts"
import { Proc } from "../../process.ts"
import { Toolchain } from "../../toolchain/index.ts"
import type { AnalyserBackend } from "./backend.ts"
import { defaultBinary } from "./backend-gate.ts"

/**
 * The analysers of other languages, as `doctor` shows them: each backend's tool installed (its version) or not
 * (its gate then records "not run" on a task that changes its language's files). Missing is a failed check only
 * where the project's rules require the tool (`analysis.backends.<tool>.enabled: true`).
 */
export namespace AnalyserReadiness {
  export interface Check {
    name: string
    ok: boolean
    detail: string
    fix?: string
  }

  export async function checks(dir: string, backends: readonly AnalyserBackend[], env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
    const rules = await projectRules(dir)
    return Promise.all(backends.map((backend) => check(dir, backend, rules?.[backend.tool], env)))
  }

  export async function check(dir: string, backend: AnalyserBackend, rules: Toolchain.BackendRules | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Check> {
    const name = backend.tool
    if (rules?.enabled === false) return { name, ok: true, detail: `off (analysis.backends.${name}.enabled is false in ${Toolchain.RULES_PATH})` }
    const binary = rules?.binary ?? defaultBinary(backend, env)
    const version = await versionOf(binary, backend, dir, env)
    if (version) return { name, ok: true, detail: `${version}: checks the changed ${backend.language} files, judged against each task's base` }
    const local = backend.localBinary ? `; the project's own ${backend.localBinary} is used where it has one` : ""
    return rules?.enabled === true
      ? { name, ok: false, detail: `required in ${Toolchain.RULES_PATH} but \`${binary}\` is not installed: every task changing ${backend.language} files stops at the gates${local}`, fix: backend.install }
      : { name, ok: true, detail: `\`${binary}\` not installed: a task changing ${backend.language} files records the ${name} gate as not run${local} (install: ${backend.install})` }
  }

  /** The tool's version line, or undefined when it does not start or says it is not there (`cargo clippy` without clippy). */
  async function versionOf(binary: string, backend: AnalyserBackend, dir: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
    const r = await Proc.run(binary, [...(backend.versionArgs ?? ["--version"])], { cwd: dir, env: { ...env, ...backend.env?.(dir, env) }, shell: false, timeoutMs: 30_000 })
    if (!r.ok) return undefined
    return r.output.split("\n").find((line) => line.trim().length > 0)?.trim()
  }

  /** The project's `analysis.backends` when `dir` is in a repository whose rules load; otherwise the defaults. */
  async function projectRules(dir: string): Promise<Record<string, Toolchain.BackendRules> | undefined> {
    const top = await gitTry(dir, ["rev-parse", "--show-toplevel"]).catch(() => undefined)
    if (!top || top.code !== 0) return undefined
    const resolved = await Toolchain.load(top.stdout.trim()).catch(() => undefined)
    return resolved?.rules.analysis.backends
  }
}
