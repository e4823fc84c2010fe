/**
 * Figures of the orchestration runtime, measured on real headless runs (issue 5, item 9): the real
 * `aircoding run` CLI, the real engine, real git worktrees and merges, the scripted model in place of the
 * language model. One plan of 8 independent tasks (each creates its own file, so no write-set meets another)
 * runs twice, at concurrency 1 and at concurrency 4; the scripted model waits a fixed delay before every
 * executor and reviewer answer, and the project's toolchain is `true`, so model time dominates and the
 * 2-core machine's CPU does not.
 *
 * - parallel_speedup_8x4: execution wall time at concurrency 1 / at concurrency 4. The execution phase runs
 *   from the `graph.accepted` event to the last `merge.succeeded` (planning is serial in both runs).
 * - scheduler_overhead_ms_per_task: the Scheduler's own latency from a task's report to the next command it
 *   dispatches — median over tasks of `gates.started.at − worker.reported.at`, from both runs' event logs.
 * Both raw execution times and review.reported → merge.started are registered beside them, and each run's
 * merge builds (how many the merge queue ran, their total `ms` from evidence/<task>/merge-<n>/result.json):
 * the queue builds every candidate whose tree the task's gates did not build, which is most of them here.
 * The run ends with the Architect's final review (test/support/final-review.ts scripts it), after the last merge.
 *
 * The two runs happen once, whichever of these figures is asked first; `--only parallel_speedup_8x4` runs
 * just them. Targets (speedup ≥ 3.5, issue 12; overhead < 50 ms) are reported on stderr, never fail the bench:
 * the figures depend on the machine's load. AIR_BENCH_STEP_DELAY_MS changes the per-step delay (default 1500);
 * AIR_BENCH_KEEP=1 keeps the two projects (event logs, model request logs) and prints where;
 * AIR_BENCH_TIMELINE=1 prints each task's timeline (orchestration.timeline.ts) under its run;
 * AIR_BENCH_REPEAT=n makes n pairs of runs and reports the pair with the median speedup (the load drifts between runs);
 * AIR_BENCH_SKIP_ORCHESTRATION=1 leaves these figures out of `bun run bench`.
 */
import { spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { aircodingBin, bunBinary, makeSandbox, type Sandbox } from "../test/support/sandbox"
import { withFinalReview } from "../test/support/final-review"
import { median, registerFigure } from "./figures"
import { latencies, mergeBuilds, phaseSummary, readEvents, timelineTable, timelines, type MergeBuilds, type TaskTimeline } from "./orchestration.timeline"

const TASKS = 8
const CONCURRENCY = 4
const STEP_DELAY_MS = Number(process.env.AIR_BENCH_STEP_DELAY_MS ?? 1500)
const SPEEDUP_TARGET = 3.5
const OVERHEAD_TARGET_MS = 50
const RUN_TIMEOUT_MS = 8 * 60_000
/** Pairs of runs (concurrency 1, then 4) to make; the figures come from the pair with the median speedup. */
const REPEAT = Math.max(1, Math.floor(Number(process.env.AIR_BENCH_REPEAT ?? 1)) || 1)
/** Delayed model answers on a task's critical path: the executor's write, bash and air_report, the reviewer's air_diff and air_review. */
const DELAYED_STEPS_PER_TASK = 5

const REQUIREMENT = `Add ${TASKS} independent translation units src/f1.cpp … src/f${TASKS}.cpp, each defining its own function.`

/** The plan the Architect writes: 8 tasks, no deps, one new file each. Kind `test` needs diff, build and test. */
function plan() {
  return Array.from({ length: TASKS }, (_, i) => {
    const n = i + 1
    return {
      id: `T-${n}`,
      title: `Add src/f${n}.cpp`,
      kind: "test",
      phase: 1,
      deps: [],
      writeSet: [{ path: `src/f${n}.cpp`, action: "create" }],
      keep: ["no other file changes"],
      doneWhen: `src/f${n}.cpp defines int f${n}() and the project builds and tests`,
      validation: ["true"],
      adrRefs: [],
    }
  })
}

function scenario(delayMs: number) {
  const slow = <T extends object>(step: T) => ({ ...step, delayMs })
  return {
    name: "bench: 8 independent tasks",
    description: `Main submits; the Architect plans ${TASKS} independent tasks; every executor and reviewer step waits ${delayMs} ms.`,
    scripts: [
      {
        name: "main",
        agent: "main",
        steps: [
          { tool: "air_submit", args: { requirement: REQUIREMENT } },
          { tool: "air_listen", args: {}, until: "RUN ENDED" },
          { text: "The run has ended." },
        ],
      },
      {
        name: "architect",
        agent: "architect",
        match: "^Requirement:",
        steps: [
          { tool: "air_propose", args: { summary: `${TASKS} independent tasks, one new file each; all may run in parallel.` } },
          { tool: "air_plan", args: { requirement: REQUIREMENT, tasks: plan() } },
          { text: `Plan written: ${TASKS} independent tasks.` },
        ],
      },
      {
        name: "executor",
        agent: "executor",
        match: "^Task T-(?<n>\\d+):",
        steps: [
          slow({ tool: "write", args: { filePath: "src/f{{n}}.cpp", content: "int f{{n}}() { return {{n}}; }\n" } }),
          slow({
            tool: "bash",
            args: { command: 'git add -A && git commit -q -m "Add src/f{{n}}.cpp" && git log --oneline -1', description: "Commit the task's work" },
          }),
          slow({ tool: "air_report", args: { summary: "Added src/f{{n}}.cpp; committed." } }),
          slow({ text: "Reported T-{{n}} to the Scheduler." }),
        ],
      },
      {
        name: "reviewer",
        agent: "reviewer",
        match: "^Review task (?<id>T-\\d+):",
        steps: [
          slow({ tool: "air_diff", args: {} }),
          slow({
            tool: "air_review",
            args: {
              verdict: "pass",
              rows: [{ designRef: "{{id}}: done-when condition", code: "the diff of {{id}}", status: "match", note: "as specified" }],
              findings: [],
              checklist: { lifetimes: { status: "not-applicable" }, rawPointers: { status: "not-applicable" }, concurrency: { status: "not-applicable" }, exceptions: { status: "not-applicable" }, integerOverflow: { status: "checked" }, undefinedBehaviour: { status: "checked" }, loggingKeyPaths: { status: "not-applicable" }, loggingFormat: { status: "not-applicable" } },
            },
          }),
          slow({ text: "Review of {{id}} reported." }),
        ],
      },
    ],
  }
}

interface RunMeasure {
  concurrency: number
  /** graph.accepted → last merge.succeeded */
  executionMs: number
  /** the whole CLI run, engine start-up and planning included */
  totalMs: number
  /** gates.started − worker.reported, one per report */
  reportToGates: number[]
  /** merge.started − review.reported, one per review */
  reviewToMerge: number[]
  tasks: TaskTimeline[]
  mergeBuilds: MergeBuilds
}

interface Measurement {
  runs: RunMeasure[]
  speedup: number
  overheadMs: number
  reviewToMergeMs: number
  when: string
}

async function runOnce(sandbox: Sandbox, scenarioFile: string, concurrency: number, name: string): Promise<RunMeasure> {
  const dir = sandbox.project(name)
  mkdirSync(join(dir, ".air", "shared", "rules"), { recursive: true })
  writeFileSync(
    join(dir, ".air", "shared", "rules", "toolchain.json"),
    JSON.stringify({ schemaVersion: 1, build: ["true"], test: ["true"], analysis: { cppcheck: { enabled: false } } }, null, 2) + "\n",
  )
  const env: NodeJS.ProcessEnv = {
    ...sandbox.env,
    PWD: dir,
    AIRCODING_CONCURRENCY: String(concurrency),
    AIRCODING_AUTO_CONFIRM: "1",
    AIRCODING_SCRIPTED_LOG: join(sandbox.root, `model-${name}.jsonl`),
  }
  const started = Date.now()
  const out = await runCli(["run", dir, "--yes", "--json", "--scripted", scenarioFile], dir, env)
  const totalMs = Date.now() - started
  const fail = (why: string): never => {
    throw new Error(
      `orchestration bench: the run ${name} at concurrency ${concurrency} ${why} (exit ${out.code}); kept in ${sandbox.root}\n` +
        `stderr (last lines):\n${out.stderr.trim().split("\n").slice(-15).join("\n")}\nstdout (head):\n${out.stdout.slice(0, 2000)}`,
    )
  }
  if (out.code !== 0) fail("did not exit 0")
  const modelFailures = readFileSync(env.AIRCODING_SCRIPTED_LOG!, "utf8")
    .split("\n")
    .filter((line) => line.includes('"failure"'))
  if (modelFailures.length) fail(`made ${modelFailures.length} request(s) the scenario did not foresee, first: ${modelFailures[0]!.slice(0, 600)}`)
  let summary: { status?: string; tasks?: { id: string; state: string }[]; wallTimeMs?: number }
  try {
    summary = JSON.parse(out.stdout.slice(out.stdout.indexOf("{")))
  } catch {
    return fail("printed no JSON summary")
  }
  const notMerged = (summary.tasks ?? []).filter((t) => t.state !== "merged")
  if (summary.status !== "done" || (summary.tasks ?? []).length !== TASKS || notMerged.length)
    fail(`ended ${summary.status} with ${summary.tasks?.length ?? 0} task(s), not merged: ${notMerged.map((t) => `${t.id}=${t.state}`).join(", ")}`)
  if (!existsSync(join(dir, ".air", "local", "state", "events.jsonl"))) fail("left no event log")

  const events = readEvents(dir)
  const accepted = events.find((e) => e.type === "graph.accepted")
  const merges = events.filter((e) => e.type === "merge.succeeded")
  if (!accepted || merges.length !== TASKS) fail(`logged ${merges.length} merge.succeeded event(s) for ${TASKS} tasks`)
  return {
    concurrency,
    executionMs: Date.parse(merges.at(-1)!.at) - Date.parse(accepted!.at),
    totalMs: summary.wallTimeMs ?? totalMs,
    reportToGates: latencies(events, "worker.reported", "gates.started"),
    reviewToMerge: latencies(events, "review.reported", "merge.started"),
    tasks: timelines(events, concurrency),
    mergeBuilds: mergeBuilds(dir),
  }
}

/**
 * `bun aircoding.ts …` in its own process group, so a run that overstays RUN_TIMEOUT_MS is killed with the
 * engine it started (a plain kill would leave the engine running on the loaded machine).
 */
function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bunBinary(), [aircodingBin, ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      stderr += `\n(the bench killed the run after ${RUN_TIMEOUT_MS} ms)`
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    }, RUN_TIMEOUT_MS)
    child.on("error", (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr })
    })
    child.stdin.end(REQUIREMENT)
  })
}

async function measure(): Promise<Measurement> {
  const sandbox = makeSandbox("air-bench-orch-")
  const scenarioFile = join(sandbox.root, "scenario.json")
  // Every finished run now ends with the Architect's final review: without its script the scripted model
  // answers that request with an error and the run waits for a verdict until the bench kills it.
  writeFileSync(scenarioFile, JSON.stringify(withFinalReview(scenario(STEP_DELAY_MS)), null, 2))
  const when = new Date().toISOString()
  const log = (line: string) => process.stderr.write(`  [orchestration] ${line}\n`)
  const pairs: { runs: [RunMeasure, RunMeasure]; speedup: number }[] = []
  for (let pair = 1; pair <= REPEAT; pair++) {
    const runs: RunMeasure[] = []
    for (const concurrency of [1, CONCURRENCY]) {
      // The load before and after each run: the two runs are a minute or more apart, and a speedup is only fair when
      // both saw about the same machine.
      log(`run: ${TASKS} independent tasks at concurrency ${concurrency}, ${STEP_DELAY_MS} ms per executor/reviewer step (load: ${loadAverage()}) …`)
      const run = await runOnce(sandbox, scenarioFile, concurrency, pair === 1 ? `c${concurrency}` : `c${concurrency}-${pair}`)
      log(
        `  execution ${(run.executionMs / 1000).toFixed(1)} s (graph.accepted → last merge.succeeded), whole run ${(run.totalMs / 1000).toFixed(1)} s; ` +
          `report → gates median ${median(run.reportToGates)} ms, review → merge median ${median(run.reviewToMerge)} ms (load after: ${loadAverage()})`,
      )
      const floorMs = Math.ceil(TASKS / concurrency) * DELAYED_STEPS_PER_TASK * STEP_DELAY_MS
      log(`  the model's delays alone: ${(floorMs / 1000).toFixed(1)} s; the rest, ${((run.executionMs - floorMs) / 1000).toFixed(1)} s, is the Scheduler, engine and git`)
      log(`  per task, ms: ${phaseSummary(run.tasks)}`)
      log(`  merge builds: ${run.mergeBuilds.count} ran, ${run.mergeBuilds.totalMs} ms in all${run.mergeBuilds.failed ? `, ${run.mergeBuilds.failed} failed` : ""}`)
      if (process.env.AIR_BENCH_TIMELINE) for (const line of timelineTable(run.tasks)) log(`    ${line}`)
      runs.push(run)
    }
    const [c1, cN] = runs as [RunMeasure, RunMeasure]
    pairs.push({ runs: [c1, cN], speedup: c1.executionMs / cN.executionMs })
    if (REPEAT > 1) log(`pair ${pair} of ${REPEAT}: speedup ${pairs.at(-1)!.speedup.toFixed(2)}x`)
  }
  if (process.env.AIR_BENCH_KEEP) log(`runs kept in ${sandbox.root}`)
  else sandbox.cleanup()
  // With AIR_BENCH_REPEAT pairs: the median pair speaks for all (its runs give the other figures).
  const chosen = [...pairs].sort((a, b) => a.speedup - b.speedup)[(pairs.length - 1) >> 1]!
  const runs = chosen.runs
  const [serial, parallel] = runs
  const speedup = chosen.speedup
  const reports = runs.flatMap((r) => r.reportToGates)
  const reviews = runs.flatMap((r) => r.reviewToMerge)
  const m: Measurement = { runs, speedup, overheadMs: median(reports), reviewToMergeMs: median(reviews), when }
  const range = (xs: number[]) => `min ${Math.min(...xs)}, max ${Math.max(...xs)}, n=${xs.length}`
  log(`measured at ${when} on a machine with ${navigator.hardwareConcurrency ?? "?"} cores (load: ${loadAverage()})`)
  log(
    `parallel_speedup_8x4 = ${speedup.toFixed(2)}x (${(serial.executionMs / 1000).toFixed(1)} s at concurrency 1 / ` +
      `${(parallel.executionMs / 1000).toFixed(1)} s at ${CONCURRENCY}); target ≥ ${SPEEDUP_TARGET}: ${speedup >= SPEEDUP_TARGET ? "met" : "NOT met"}`,
  )
  log(
    `scheduler_overhead_ms_per_task = ${m.overheadMs} ms median worker.reported → gates.started (${range(reports)}); ` +
      `target < ${OVERHEAD_TARGET_MS}: ${m.overheadMs < OVERHEAD_TARGET_MS ? "met" : "NOT met"}`,
  )
  log(`review.reported → merge.started: ${m.reviewToMergeMs} ms median (${range(reviews)})`)
  return m
}

function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
  } catch {
    return "unknown"
  }
}

let measured: Promise<Measurement> | undefined
const measurement = () => (measured ??= measure())

// AIR_BENCH_SKIP_ORCHESTRATION=1 leaves these out (they cost two real runs, about 1.5 minutes on a quiet 2-core machine).
if (!process.env.AIR_BENCH_SKIP_ORCHESTRATION) registerAll()

// No `target` on these: a miss is reported on stderr but never fails the bench (the runs are timing-noisy).
function registerAll(): void {
  registerFigure({
    name: "parallel_speedup_8x4",
    description: `8 independent tasks, real runs: execution time at concurrency 1 / at 4 (target >= ${SPEEDUP_TARGET}, reported, not enforced)`,
    unit: "x",
    run: async () => (await measurement()).speedup,
  })
  registerFigure({
    name: "parallel_8x4_c1_exec_ms",
    description: "the same plan at concurrency 1: graph.accepted -> last merge.succeeded",
    unit: "ms",
    run: async () => (await measurement()).runs[0]!.executionMs,
  })
  registerFigure({
    name: "parallel_8x4_c4_exec_ms",
    description: "the same plan at concurrency 4: graph.accepted -> last merge.succeeded",
    unit: "ms",
    run: async () => (await measurement()).runs[1]!.executionMs,
  })
  for (const [i, c] of [[0, 1], [1, CONCURRENCY]] as const) {
    registerFigure({
      name: `parallel_8x4_c${c}_merge_builds`,
      description: `merge builds the run at concurrency ${c} made (candidates whose tree the gates did not build)`,
      unit: "count",
      run: async () => (await measurement()).runs[i]!.mergeBuilds.count,
    })
    registerFigure({
      name: `parallel_8x4_c${c}_merge_build_ms`,
      description: `total time of those merge builds (result.json \`ms\`; toolchain \`true\`, so mostly checkout and sandbox)`,
      unit: "ms",
      run: async () => (await measurement()).runs[i]!.mergeBuilds.totalMs,
    })
  }
  registerFigure({
    name: "scheduler_overhead_ms_per_task",
    description: `median worker.reported -> gates.started over both runs' tasks (target < ${OVERHEAD_TARGET_MS}, reported, not enforced)`,
    unit: "ms",
    run: async () => (await measurement()).overheadMs,
  })
  registerFigure({
    name: "review_to_merge_ms_per_task",
    description: "median review.reported -> merge.started over both runs' tasks",
    unit: "ms",
    run: async () => (await measurement()).reviewToMergeMs,
  })
}
