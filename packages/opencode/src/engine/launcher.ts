/**
 * The engine lives for the `aircoding` process that launched it. Killed by SIGKILL (an OOM killer, a CI job's
 * timeout, `kill -9` of its pid), `aircoding` cannot take its children with it, and the engine — its own Scheduler,
 * its sessions, their tools — went on alone (measured: an orphaned engine still logging and retrying model calls 40 s
 * after its launcher died), holding the run's lock and working in worktrees a resumed run was about to set straight
 * (issue 44). The launcher names itself in the engine's environment; the engine watches it and ends when it is gone.
 */
export namespace Launcher {
  export const ENV = "AIRCODING_LAUNCHER_PID"
  const EVERY_MS = 250

  /** The environment entry the launcher gives the engine it starts. */
  export function entry(): Record<string, string> {
    return { [ENV]: String(process.pid) }
  }

  /**
   * In the engine: calls `gone` once the launcher named in the environment has exited. Started directly by it, the
   * engine sees its parent change (no pid reuse can fool that); otherwise it asks whether the pid still exists.
   */
  export function watch(gone: () => void, env: NodeJS.ProcessEnv = process.env): (() => void) | undefined {
    const pid = Number(env[ENV])
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) return undefined
    const child = process.ppid === pid
    const alive = () => {
      if (child) return process.ppid === pid
      try {
        process.kill(pid, 0)
        return true
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === "EPERM"
      }
    }
    const timer = setInterval(() => {
      if (alive()) return
      clearInterval(timer)
      gone()
    }, EVERY_MS)
    timer.unref?.()
    return () => clearInterval(timer)
  }
}
