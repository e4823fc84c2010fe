import { GateError } from "../errors.ts"
import type { Exec } from "../exec/exec.ts"
import type { Proc } from "../process.ts"
import type { JobBudget } from "./budget.ts"
import { CommandJobs } from "./command-jobs.ts"
import { FarmJobs } from "./farm-jobs.ts"
import { Farm } from "../toolchain/farm.ts"

/**
 * An Exec that takes its jobs from the run's budget: the command runs with `-j` set to its share, and a
 * compile the kernel killed for memory (SIGKILL, exit 137, gcc's "Killed signal terminated program") is
 * run again alone — the whole budget, one job — and never blamed on the task: killed alone too, the gates
 * reach no verdict (`ToolCrashed`) and a person is asked.
 */
export namespace BudgetExec {
  /** `place`: where its commands queue (JobBudget.acquire): the merge queue's first, a gate run's in the order it started. */
  export function wrap(inner: Exec, budget: JobBudget, label: string, place: JobBudget.Place = {}): Exec {
    return async (command, args, options) => {
      const shell = options.shell && args.length === 0
      if (options.probe) return run(inner, command, args, options, shell, 1, budget.size)
      const want = shell ? CommandJobs.wanted(command, budget.size) : 1
      const result = await budget.with(
        want,
        `${label}: ${command}`,
        async (jobs) => {
          const result = await run(inner, command, args, options, shell, jobs, budget.size)
          // The log says what ran: the share, when it is not what the command asked for.
          return jobs === want ? result : { ...result, output: `# ${jobs} of the ${want} jobs asked for (the run's job budget is ${budget.size})\n${result.output}` }
        },
        options.signal,
        place,
      )
      if (!killedForMemory(result)) return result
      const again = await budget.with("all", `${label} (alone after a kill): ${command}`, () => run(inner, command, args, options, shell, 1, budget.size), options.signal)
      const note = `# killed by the kernel (out of memory?) while running with other jobs; run again alone with 1 job\n`
      if (!killedForMemory(again)) return { ...again, output: note + again.output }
      throw new GateError(
        "ToolCrashed",
        `${label}: \`${command}\` was killed by the kernel twice, the second time running alone with one job: the machine is short of memory, ` +
          `which is not the task's doing. Free memory (or add swap) and run the gates again.`,
      )
    }
  }

  /**
   * The share is local cores; a build that sends its compiles to a farm (DISTCC_HOSTS in its env) runs the
   * farm's slots more, and its links and tests stay within local cores (farm-jobs.ts).
   */
  function run(inner: Exec, command: string, args: readonly string[], options: Parameters<Exec>[2], shell: boolean, jobs: number, localCores: number): Promise<Proc.Result> {
    const farmSlots = shell ? Farm.slotsInHosts(options.env.DISTCC_HOSTS) : 0
    const total = FarmJobs.jobs(command, jobs, farmSlots)
    const written = shell ? FarmJobs.withLinkPool(CommandJobs.limit(command, total), localCores, farmSlots) : command
    return inner(written, args, { ...options, env: CommandJobs.env(options.env, total) })
  }

  /** Output lines that say a compiler or a job was killed by signal 9 (make's "] Killed", gcc's driver, a shell's "Killed"). */
  const KILLED = /Killed signal terminated program|\]\s+Killed\b|^Killed\b|:\s*Killed\s*$|signal 9\b|terminated by signal SIGKILL/m

  /** Killed by SIGKILL and not by us (no timeout, no abort): what the kernel's OOM killer does. */
  export function killedForMemory(result: Proc.Result): boolean {
    if (result.ok || result.timedOut || result.aborted) return false
    return result.signal === "SIGKILL" || result.code === 137 || KILLED.test(result.output)
  }
}
