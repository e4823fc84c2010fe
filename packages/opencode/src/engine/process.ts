import { spawn } from "node:child_process"

export type Completed = { code: number; stdout: string; stderr: string }

/** Runs a command to completion, capturing output; never rejects for a non-zero exit. */
export function runProcess(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<Completed> {
  return new Promise((resolve, reject) => {
    // OpenCode takes its project directory from PWD, not from the process's cwd: keep them equal.
    const env = opts.cwd ? { ...(opts.env ?? process.env), PWD: opts.cwd } : opts.env
    const child = spawn(cmd, args, { cwd: opts.cwd, env, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          stderr += `\n(killed after ${opts.timeoutMs} ms)`
          child.kill("SIGKILL")
        }, opts.timeoutMs)
      : undefined
    child.on("error", (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr })
    })
    child.stdin.end(opts.input ?? "")
  })
}
