import { Proc } from "../scheduler/runtime/process.ts"

export type Completed = { code: number; stdout: string; stderr: string }

/**
 * Runs a command to completion, capturing output; never rejects for a non-zero exit (rejects only when
 * the program cannot start). The engine launcher's face of the one process runner (`Proc.run`): the
 * whole process tree goes at the timeout, not just the leader.
 */
export async function runProcess(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; signal?: AbortSignal; onOutput?: (chunk: Buffer) => void } = {},
): Promise<Completed> {
  const cwd = opts.cwd ?? process.cwd()
  // OpenCode takes its project directory from PWD, not from the process's cwd: keep them equal.
  const env = opts.cwd ? { ...(opts.env ?? process.env), PWD: opts.cwd } : (opts.env ?? process.env)
  const result = await Proc.run(cmd, args, {
    cwd,
    env,
    input: opts.input ?? "",
    outputCap: Infinity,
    // The engine stays in our process group: a kill of `aircoding run`'s group (even SIGKILL) takes it along.
    ownGroup: false,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onOutput ? { onOutput: opts.onOutput } : {}),
  })
  if (result.spawnError) throw new Error(`${cmd} could not start: ${result.spawnError}`)
  const stopped = result.timedOut ? `\n(killed after ${opts.timeoutMs} ms)` : result.aborted ? "\n(killed: aborted)" : ""
  return { code: result.code ?? (result.signal ? 128 : 1), stdout: result.stdout, stderr: result.stderr + stopped }
}
