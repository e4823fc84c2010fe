import { CommandJobs } from "./command-jobs.ts"

/**
 * A build farm's share of a command's jobs. Compiles go to the farm (distcc behind ccache), so a build runs its
 * local share plus the farm's slots; they wait on the network, not on our cores. Links and tests run here: a test
 * runner gets the local share only, and a CMake configure gives its links a Ninja pool of the local cores, so a
 * `-j` raised for the farm never runs more links at once than the machine has cores.
 */
export namespace FarmJobs {
  /** The pool CMake's Ninja generator puts every link step in (CMAKE_JOB_POOL_LINK). */
  export const LINK_POOL = "aircoding_link"
  const CONFIGURE = /(^|[\s;&|(])cmake\s+(?![^;&|]*--build)(?=(?:[^;&|]*\s)?(?:-S|-B|\.))/

  /** The jobs `command` runs with: its local share, plus the farm's slots unless it runs tests or configures. */
  export function jobs(command: string, localShare: number, farmSlots: number): number {
    if (farmSlots <= 0 || CommandJobs.runsTests(command) || configures(command)) return localShare
    return localShare + farmSlots
  }

  /** A `cmake` configure command (not `cmake --build`). */
  export function configures(command: string): boolean {
    return CONFIGURE.test(command)
  }

  /**
   * The configure command with its links in a pool of `localCores` (Ninja honours it, Makefiles ignore it),
   * when a farm raises the build's `-j`; without a farm, or for any other command, the command as written.
   * The pool's size is the machine's cores, not the moment's share, so the configure options stay the same run to run.
   */
  export function withLinkPool(command: string, localCores: number, farmSlots: number): string {
    if (farmSlots <= 0 || !configures(command) || command.includes("CMAKE_JOB_POOL_LINK")) return command
    return command.replace(/(cmake\s+(?![^;&|]*--build)[^;&|]*?)(\s*(?:[;&|]|$))/, `$1 -DCMAKE_JOB_POOLS=${LINK_POOL}=${Math.max(1, localCores)} -DCMAKE_JOB_POOL_LINK=${LINK_POOL}$2`)
  }
}
