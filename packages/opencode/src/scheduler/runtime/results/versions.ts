import { Proc } from "../process.ts"

/**
 * The versions of the tools that make a build or test result: a new compiler or CMake may build the same
 * sources differently, so its version is part of every results key. Asked once per process and tool
 * (each `--version` costs a spawn; a run asks for hundreds of keys).
 */
export namespace ToolVersions {
  /** The tools whose version is in the key; the compiler is `$CXX`/`$CC` when set. */
  export function tools(env: NodeJS.ProcessEnv): string[] {
    return [env.CXX || "c++", env.CC || "cc", "cmake", "ctest", "cppcheck", "clang-tidy"]
  }

  const cache = new Map<string, Promise<string>>()

  /** `tool --version`'s first line (or `args`' for a tool that asks otherwise: `go version`), or "absent" when it does not start (a missing tool is a fact too). */
  export function of(tool: string, env: NodeJS.ProcessEnv = process.env, args: readonly string[] = ["--version"]): Promise<string> {
    const command = [tool, ...args].join(" ")
    const known = cache.get(command)
    if (known) return known
    const asked = Proc.run(tool, [...args], { cwd: process.cwd(), env, shell: false, timeoutMs: 15_000 }).then((r) =>
      r.spawnError ? "absent" : (r.output.split("\n").find((line) => line.trim().length > 0)?.trim() ?? `exit ${r.code}`),
    )
    cache.set(command, asked)
    return asked
  }

  /** Tool → version line, for every tool in the key. */
  export async function all(env: NodeJS.ProcessEnv = process.env): Promise<Record<string, string>> {
    const list = tools(env)
    const versions = await Promise.all(list.map((tool) => of(tool, env)))
    return Object.fromEntries(list.map((tool, i) => [tool, versions[i]!]))
  }
}
