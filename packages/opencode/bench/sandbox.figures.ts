/**
 * sandbox_overhead_ms: what the OS sandbox adds to one shell command of a worker — the median, over 30
 * commands, of (the whole sandboxed call: policy, HEAD detached, `bwrap … bash -c true`, task branch
 * settled) minus (`bash -c true` alone), on a real task worktree. Target (issue 14): under 30 ms.
 */
import { spawnSync } from "node:child_process"
import { Sandbox } from "../src/scheduler/runtime/sandbox/sandbox"
import { SandboxShell } from "../src/scheduler/runtime/sandbox/shell"
import { makeSandboxRepo } from "../test/sandbox/repo"
import { median, registerFigure } from "./figures"

const RUNS = 30

async function overhead(): Promise<number> {
  if (!Sandbox.check().ok) throw new Error(`sandbox_overhead_ms: ${(Sandbox.check() as { message: string }).message}`)
  const repo = makeSandboxRepo()
  try {
    const plain: number[] = []
    const wrapped: number[] = []
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now()
      spawnSync("/bin/bash", ["-c", "true"], { cwd: repo.worktree })
      plain.push(performance.now() - t)
      t = performance.now()
      const entered = await SandboxShell.enter({ key: `bench-${i}`, worktree: repo.worktree, command: "true", mode: "on", env: repo.env })
      if (entered.kind !== "sandboxed") throw new Error(`sandbox_overhead_ms: not sandboxed (${entered.kind})`)
      const r = spawnSync("/bin/bash", ["-c", entered.command], { cwd: repo.worktree })
      await SandboxShell.leave(`bench-${i}`)
      wrapped.push(performance.now() - t)
      if (r.status !== 0) throw new Error(`sandbox_overhead_ms: the sandboxed command failed: ${r.stderr}`)
    }
    return median(wrapped) - median(plain)
  } finally {
    repo.cleanup()
  }
}

registerFigure({
  name: "sandbox_overhead_ms",
  description: "median added time of one worker shell command in the OS sandbox (bwrap + task-branch bookkeeping)",
  unit: "ms",
  target: { op: "<", value: 30 },
  run: overhead,
})
