import type { Proc } from "../process.ts"

/**
 * How a part of the runtime runs a program: the process runner, or a sandbox or the jobs budget around it.
 * Below the gates, the sandbox, the jobs and verify/, which all take one and wrap one, so none imports another for it.
 */
export type Exec = (
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; shell: boolean; timeoutMs: number; signal?: AbortSignal; onOutput?: (chunk: Buffer) => void },
) => Promise<Proc.Result>
