import type { Proc } from "../process.ts"

/**
 * How a part of the runtime runs a program: the process runner, or a sandbox or the jobs budget around it.
 * Below the gates, the sandbox, the jobs and verify/, which all take one and wrap one, so none imports another for it.
 */
export type Exec = (
  command: string,
  args: readonly string[],
  options: {
    cwd: string
    env: NodeJS.ProcessEnv
    shell: boolean
    timeoutMs: number
    signal?: AbortSignal
    onOutput?: (chunk: Buffer) => void
    /**
     * A short read-only look at what a command built (ctest's listing, ldd), taking no job of the run's budget: the
     * budget is for work that needs cores, and queued behind other tasks' compiles such a half-second call waited
     * 12–14 s (bench twenty_tasks, concurrency 8). Still sandboxed, still bounded by `timeoutMs`.
     */
    probe?: boolean
  },
) => Promise<Proc.Result>
