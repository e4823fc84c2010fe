/**
 * The run's one job budget on a generated CMake project with four tasks gating at once: the wall time with
 * the shared budget (each build and test command granted its share) beside the same four gates each at
 * full -j (no budget), and the most compile jobs that ran at once under the budget (target: no more than
 * the cores + 1, and a wall no more than 5% above full -j).
 */
import { mkdtemp, rm } from "node:fs/promises"
import os, { tmpdir } from "node:os"
import path from "node:path"
import { buildGate } from "../src/scheduler/runtime/gates/build.ts"
import { runGates } from "../src/scheduler/runtime/gates/pipeline.ts"
import { testGate } from "../src/scheduler/runtime/gates/test.ts"
import { JobBudget } from "../src/scheduler/runtime/jobs/budget.ts"
import { RunJobs } from "../src/scheduler/runtime/jobs/run-jobs.ts"
import { createCppRepo } from "../test/runtime/cpp-repo.ts"
import { parallelProject } from "../test/support/parallel-project.ts"
import { registerFigure } from "./figures"

const TASKS = 4
const SOURCES = 6
const cores = os.availableParallelism()

type Measured = { budgetedS: number; fullS: number; peakJobs: number; peakLoad: number }
let measured: Promise<Measured> | undefined

async function once(budgeted: boolean, dir: string, root: string): Promise<{ s: number; peak: number; load: number }> {
  const project = await parallelProject(dir, { sources: SOURCES, work: 3 })
  // Full -j: a budget too large to hold anything back, so each gate runs as it asks.
  RunJobs.use(root, new JobBudget(budgeted ? { size: cores } : { size: 10_000, limits: { minFreeMb: 0, loadFactor: 1e9 } }))
  const worktrees = await project.worktrees(TASKS)
  let load = 0
  const sampler = setInterval(() => (load = Math.max(load, os.loadavg()[0] ?? 0)), 250)
  const started = performance.now()
  const reports = await Promise.all(
    worktrees.map((worktree, i) =>
      runGates({
        root,
        worktree,
        taskId: `B-${i + 1}`,
        base: "main",
        kind: "code",
        attempt: 1,
        evidenceDir: path.join(dir, "evidence", `B-${i + 1}`),
        requires: [],
        toolchain: { schemaVersion: 1, ...project.commands(cores), cache: { tool: "none" } },
        sandbox: "off",
        gates: [buildGate, testGate],
      }),
    ),
  )
  const s = (performance.now() - started) / 1000
  clearInterval(sampler)
  if (reports.some((r) => !r.passed)) throw new Error(`a bench gate failed: ${reports.find((r) => !r.passed)!.message}`)
  return { s, peak: await project.peakCompiles(), load }
}

function measure(): Promise<Measured> {
  measured ??= (async () => {
    const base = await mkdtemp(path.join(tmpdir(), "air-bench-jobs-"))
    const repo = await createCppRepo()
    try {
      const full = await once(false, path.join(base, "full"), repo.root)
      const budgeted = await once(true, path.join(base, "budgeted"), repo.root)
      return { budgetedS: budgeted.s, fullS: full.s, peakJobs: budgeted.peak, peakLoad: budgeted.load }
    } finally {
      RunJobs.forget(repo.root)
      await repo.cleanup()
      await rm(base, { recursive: true, force: true })
    }
  })()
  return measured
}

registerFigure({
  name: "parallel_gates_wall_s",
  description: `${TASKS} tasks gating at once on a generated ${SOURCES}-unit CMake project, sharing one job budget of ${cores} (the cores)`,
  unit: "s",
  run: async () => (await measure()).budgetedS,
})
registerFigure({
  name: "parallel_gates_wall_fullj_s",
  description: `the same ${TASKS} gates, each at full -j ${cores} (no shared budget); target: parallel_gates_wall_s within 5% of this`,
  unit: "s",
  run: async () => (await measure()).fullS,
})
registerFigure({
  name: "parallel_gates_wall_ratio",
  description: "parallel_gates_wall_s / parallel_gates_wall_fullj_s",
  unit: "ratio",
  target: { op: "<=", value: 1.05 },
  run: async () => {
    const m = await measure()
    return m.budgetedS / m.fullS
  },
})
registerFigure({
  name: "parallel_gates_peak_load",
  description: `the most compile jobs running at once during the budgeted run (target: cores + 1 = ${cores + 1}); the 1-minute load average seen is printed beside it`,
  unit: "count",
  target: { op: "<=", value: cores + 1 },
  run: async () => {
    const m = await measure()
    process.stderr.write(`  (highest 1-minute load average during the budgeted run: ${m.peakLoad.toFixed(2)})\n`)
    return m.peakJobs
  },
})
