import { mkdirSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { writeFileAtomicSync } from "../store/atomic.ts"
import { Toolchain } from "../toolchain/index.ts"
import { JobBudget } from "./budget.ts"
import { JobsFile } from "./file.ts"
import { ProcessIdentity } from "../store/process-identity.ts"

/**
 * The one budget per run: every gate, merge build, baseline and final check of a project in this process
 * takes its jobs from `RunJobs.of(root)`. Its state is kept in jobs.json for the views.
 */
export namespace RunJobs {
  const budgets = new Map<string, JobBudget>()
  const timeouts = new Map<string, NonNullable<JobsFile.Data["timeout"]>>()
  const baselines = new Map<string, number>()

  export function of(where: string, options: JobBudget.Options = {}): JobBudget {
    const root = resolve(where)
    const known = budgets.get(root)
    if (known) return known
    const budget = new JobBudget(options)
    budget.onChange = (snapshot) => save(root, snapshot)
    budgets.set(root, budget)
    return budget
  }

  /** Replaces the run's budget (tests and the bench size it themselves). */
  export function use(where: string, budget: JobBudget): JobBudget {
    const root = resolve(where)
    budget.onChange = (snapshot) => save(root, snapshot)
    budgets.set(root, budget)
    return budget
  }

  export function forget(where: string): void {
    const root = resolve(where)
    budgets.delete(root)
    timeouts.delete(root)
    baselines.delete(root)
  }

  export const TIMEOUT_FACTOR = 3
  export const TIMEOUT_FLOOR_MS = 2 * 60_000

  /**
   * The per-command timeout of build and test commands: a toolchain.json that sets its own `timeoutMs` keeps
   * it; otherwise three times the project's measured baseline (build + tests), never under two minutes.
   */
  export function gateTimeout(rules: Toolchain.Rules, baselineMs: number | undefined): NonNullable<JobsFile.Data["timeout"]> {
    if (rules.timeoutMs !== Toolchain.DEFAULT_TIMEOUT_MS || baselineMs === undefined)
      return { ms: rules.timeoutMs, ...(baselineMs !== undefined ? { baselineMs } : {}), rule: baselineMs === undefined ? "toolchain default (no baseline measured)" : "toolchain.json timeoutMs" }
    const ms = Math.max(TIMEOUT_FLOOR_MS, TIMEOUT_FACTOR * baselineMs)
    return { ms, baselineMs, rule: `${TIMEOUT_FACTOR}× the baseline, at least ${TIMEOUT_FLOOR_MS / 1000} s` }
  }

  /** The run's baseline measured `ms` for build + tests: later gates scale their timeout from it (recorded in jobs.json). */
  export function recordBaseline(where: string, rules: Toolchain.Rules, ms: number): void {
    const root = resolve(where)
    baselines.set(root, ms)
    const timeout = gateTimeout(rules, ms)
    const before = timeouts.get(root)
    timeouts.set(root, timeout)
    if (before?.ms !== timeout.ms) save(root, of(root).snapshot())
  }

  /** `rules` with the run's gate timeout: from the run's baseline, else the one `aircoding init` measured. */
  export function rulesFor(where: string, rules: Toolchain.Rules): Toolchain.Rules {
    const root = resolve(where)
    const init = rules.baseline ? rules.baseline.build.ms + rules.baseline.test.ms : undefined
    const timeout = gateTimeout(rules, baselines.get(root) ?? init)
    if (!timeouts.has(root)) {
      timeouts.set(root, timeout)
      save(root, of(root).snapshot())
    }
    return timeout.ms === rules.timeoutMs ? rules : { ...rules, timeoutMs: timeout.ms }
  }

  function save(root: string, snapshot: JobBudget.Snapshot): void {
    const timeout = timeouts.get(root)
    const data: JobsFile.Data = { ...snapshot, ...(timeout ? { timeout } : {}), at: new Date().toISOString(), writer: ProcessIdentity.self() }
    try {
      mkdirSync(dirname(JobsFile.path(root)), { recursive: true })
      writeFileAtomicSync(JobsFile.path(root), JSON.stringify(data, null, 2) + "\n", { backup: false })
    } catch {
      // The views' copy only: a full disk must not stop a build.
    }
  }
}
