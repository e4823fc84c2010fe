/**
 * How many jobs a build or test command asks for, and the same command asking for fewer. The runtime admits
 * each command with a share of the run's budget and rewrites its `-j` to that share: measured here, Ninja
 * 1.11 ignores a GNU make jobserver (1.13 is the first to honour one) and make 4.3 knows only the pipe form
 * (`--jobserver-auth=R,W`, not the `fifo:` a runtime can hand to unrelated processes), so a jobserver would
 * bound make alone; admission bounds both.
 */
export namespace CommandJobs {
  /** `-j 8`, `-j8`, `--parallel 8`, `--parallel=8`, `--jobs=8`, `--num-processes 8` (meson test). */
  const FLAG = /(^|\s)(-j|--jobs|--parallel|--num-processes)(=|\s*)(\d+)(?=\s|$|;|&|\|)/g
  /** `make -j` with no number: unlimited jobs. */
  const BARE_J = /(^|\s)-j(?=\s+[^\d\s]|\s*$|\s*[;&|])/g
  /** Runners that go parallel on their own (cmake --build with Ninja, ninja, ctest with its env). */
  const PARALLEL_BY_DEFAULT = /(^|[\s;&|(])(cmake\s+--build|ninja|ctest|meson\s+(compile|test))\b/

  /** The jobs `command` asks for: its largest `-j`, the whole budget for a bare `-j` or a runner parallel by default, else 1. */
  export function wanted(command: string, size: number): number {
    let most = 0
    for (const match of command.matchAll(FLAG)) most = Math.max(most, Number(match[4]))
    if (most > 0) return most
    if (BARE_J.test(command)) {
      BARE_J.lastIndex = 0
      return size
    }
    return PARALLEL_BY_DEFAULT.test(command) ? size : 1
  }

  /** A command that runs tests (ctest, meson test): it gets local cores only, never a farm's slots. */
  export function runsTests(command: string): boolean {
    return /(^|[\s;&|(])(ctest|meson\s+test)\b/.test(command)
  }

  /** `command` with every job count set to `jobs` (a bare `-j` gets the number). */
  export function limit(command: string, jobs: number): string {
    return command.replace(FLAG, (_, lead, flag, sep) => `${lead}${flag}${sep === "=" ? "=" : " "}${jobs}`).replace(BARE_J, (_, lead) => `${lead}-j ${jobs}`)
  }

  /**
   * The environment that bounds runners with no `-j` on the command line: CMake's and CTest's parallel level,
   * make's flags (an inherited jobserver from whoever started AirCoding is dropped: its tokens are not ours).
   */
  export function env(base: NodeJS.ProcessEnv, jobs: number): NodeJS.ProcessEnv {
    const makeflags = (base.MAKEFLAGS ?? "")
      .split(/\s+/)
      .filter((flag) => flag && !/^-j\d*$|^--jobserver-(auth|fds)=/.test(flag))
      .join(" ")
    return {
      ...base,
      CMAKE_BUILD_PARALLEL_LEVEL: String(jobs),
      CTEST_PARALLEL_LEVEL: String(jobs),
      MESON_NUM_PROCESSES: String(jobs),
      MAKEFLAGS: `${makeflags ? `${makeflags} ` : ""}-j${jobs}`.trim(),
    }
  }
}
