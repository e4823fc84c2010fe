import { realpath } from "node:fs/promises"
import { Proc } from "../process.ts"

/**
 * Build outputs that do not depend on where the worktree is. Each task builds in its own worktree
 * (`.air/local/worktrees/<task>`): without this, a Debug build writes that path into every object's debug
 * information and into `__FILE__` (assert messages), so the same sources built for two tasks give test
 * binaries that differ byte for byte, and test selection (results/selection.ts) re-runs every test. GCC ≥ 8
 * and Clang ≥ 10 rewrite the path with `-ffile-prefix-map=<worktree>=.` (debug info and macros alike); it
 * reaches CMake (its first configure reads CFLAGS/CXXFLAGS), Meson and Make through the environment, after
 * whatever flags the person's own environment already sets. ccache ignores the option in its hash, so two
 * worktrees still share their hits.
 */
export namespace PathMap {
  const FLAGS = [
    { variable: "CFLAGS", compiler: "CC", fallback: "cc", language: "c" },
    { variable: "CXXFLAGS", compiler: "CXX", fallback: "c++", language: "c++" },
  ] as const

  /** The flag itself: paths under `worktree` become relative to it. */
  export function flag(worktree: string): string {
    return `-ffile-prefix-map=${worktree}=.`
  }

  /**
   * CFLAGS and CXXFLAGS for a build in `worktree`, each with the map appended to `base`'s value; a variable
   * is left out when its compiler refuses the option (an older compiler: the build goes on as before) or the
   * worktree's path has a space (the variables are split on spaces).
   */
  export async function env(worktree: string, base: NodeJS.ProcessEnv): Promise<Record<string, string>> {
    // The compiler sees the path the build system resolved (symlinks followed): both spellings are mapped.
    const real = await realpath(worktree).catch(() => worktree)
    const paths = [...new Set([worktree, real])]
    if (paths.some((p) => /\s/.test(p))) return {}
    const flags = paths.map(flag).join(" ")
    const out: Record<string, string> = {}
    for (const entry of FLAGS) {
      const compiler = base[entry.compiler] || entry.fallback
      if (!(await accepts(compiler, entry.language, base))) continue
      const before = base[entry.variable]?.trim()
      out[entry.variable] = before ? `${before} ${flags}` : flags
    }
    return out
  }

  const known = new Map<string, Promise<boolean>>()

  /** Whether `compiler` takes the option: asked once per process and compiler (a run builds hundreds of times). */
  export function accepts(compiler: string, language: "c" | "c++", env: NodeJS.ProcessEnv): Promise<boolean> {
    const id = `${compiler}\0${language}`
    let answer = known.get(id)
    if (!answer) {
      // A compile of nothing: an unknown option is an error for both GCC and Clang, so exit 0 means it is understood.
      answer = Proc.run(compiler, [flag("/air-probe"), "-x", language, "-fsyntax-only", "/dev/null"], { cwd: "/", env, shell: false, timeoutMs: 30_000 }).then(
        (r) => r.ok,
      )
      known.set(id, answer)
    }
    return answer
  }
}
