/**
 * A hundred tasks (issue 38 item 2), through the real `aircoding run` CLI and engine with the scripted model and the
 * real gates (cmake, Ninja, g++, ctest, ccache): a CMake project whose sources and tests are globbed, 20 of each to
 * start with, and a plan of TASKS independent tasks, each adding one source and its test, at concurrency 8. Once
 * with build slots (as shipped) and once with `cache.slots: false` (each task's gates build its fresh worktree from
 * an empty build directory, the way before slots), in one bench run.
 *
 * - hundred_tasks_wall_s: the run with slots, graph.accepted → last merge.succeeded.
 * - hundred_tasks_gate_s_first10 / hundred_tasks_gate_s_last10: median build + test gate seconds of the first and
 *   last ten tasks to reach their gates (issue 38's goal: last10 ≤ 1.5 × first10).
 * - hundred_tasks_merges_per_min, hundred_tasks_engine_peak_rss_mb (the engine process, sampled every second; goal
 *   ≤ 1 GiB), hundred_tasks_engine_cpu_share (the engine's CPU seconds over the wall, the Scheduler included).
 * - hundred_tasks_vs_rebuild_ratio: the wall with slots over the wall without (goal ≤ 0.5).
 * Each run prints where its test gates' time went (test-steps.json, gates/step-times.ts) and what its builds did
 * (compiles and links per task and per merge build, orchestration.timeline.ts buildWork). AIR_BENCH_SLOTS_ONLY=1 skips the
 * run without slots. The twenty_tasks_* figures are the same with 20 tasks. AIR_BENCH_SKIP_MANY_TASKS=1 leaves both out of
 * `bun run bench` (the hundred costs two runs of several minutes each on two cores).
 */
import { existsSync, readFileSync, readlinkSync, writeFileSync, mkdirSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { Proc } from "../src/scheduler/runtime/process"
import { aircodingBin, bunBinary, makeSandbox, type Sandbox } from "../test/support/sandbox"
import { withFinalReview } from "../test/support/final-review"
import { median, registerFigure } from "./figures"
import { buildWork, gateSteps, readEvents } from "./orchestration.timeline"

const CONCURRENCY = 8
const START = 20
const RUN_TIMEOUT_MS = 60 * 60_000

const source = (name: string, value: string) => `int ${name}() { return ${value}; }\n`
const test = (name: string, value: string) => `int ${name}();\nint main() { return ${name}() == ${value} ? 0 : 1; }\n`

function project(dir: string, slots: boolean): void {
  const write = (file: string, text: string) => {
    mkdirSync(join(dir, file, ".."), { recursive: true })
    writeFileSync(join(dir, file), text)
  }
  write(
    "CMakeLists.txt",
    `cmake_minimum_required(VERSION 3.16)
project(mosaic CXX)
set(CMAKE_CXX_STANDARD 17)
file(GLOB SOURCES CONFIGURE_DEPENDS \${CMAKE_SOURCE_DIR}/src/*.cpp)
add_library(mosaic \${SOURCES})
enable_testing()
file(GLOB TESTS CONFIGURE_DEPENDS \${CMAKE_SOURCE_DIR}/test/*_test.cpp)
foreach(t \${TESTS})
  get_filename_component(name \${t} NAME_WE)
  add_executable(\${name} \${t})
  target_link_libraries(\${name} mosaic)
  add_test(NAME \${name} COMMAND \${name})
endforeach()
`,
  )
  for (let i = 0; i < START; i++) {
    write(`src/s${i}.cpp`, source(`s${i}`, String(i)))
    write(`test/s${i}_test.cpp`, test(`s${i}`, String(i)))
  }
  write(
    ".air/shared/rules/toolchain.json",
    JSON.stringify({
      schemaVersion: 1,
      build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build -j 2"],
      test: ["ctest --test-dir .air-build -j 2"],
      analysis: { cppcheck: { enabled: false } },
      ...(slots ? {} : { cache: { slots: false } }),
    }),
  )
}

const requirementOf = (tasks: number) => `Add ${tasks} independent parts src/n1.cpp … src/n${tasks}.cpp, each with its test.`

function scenario(tasks: number) {
  const requirement = requirementOf(tasks)
  const plan = Array.from({ length: tasks }, (_, i) => ({
    id: `T-${i + 1}`,
    title: `Add src/n${i + 1}.cpp and its test`,
    kind: "test",
    phase: 1,
    deps: [],
    writeSet: [
      { path: `src/n${i + 1}.cpp`, action: "create" },
      { path: `test/n${i + 1}_test.cpp`, action: "create" },
    ],
    keep: ["no other file changes"],
    doneWhen: `n${i + 1}() returns ${1000 + i + 1} and its test passes`,
    validation: ["true"],
    adrRefs: [],
  }))
  return withFinalReview({
    name: `bench: ${tasks} one-file tasks`,
    description: `the Architect plans ${tasks} independent tasks; each executor adds a source and its test`,
    scripts: [
      { name: "main", agent: "main", steps: [{ tool: "air_submit", args: { requirement } }, { tool: "air_listen", args: {}, until: "RUN ENDED" }, { text: "The run has ended." }] },
      {
        name: "architect",
        agent: "architect",
        match: "^Requirement:",
        steps: [{ tool: "air_propose", args: { summary: `${tasks} independent tasks.` } }, { tool: "air_plan", args: { requirement, tasks: plan } }, { text: "Plan written." }],
      },
      {
        name: "executor",
        agent: "executor",
        match: "^Task T-(?<n>\\d+):",
        steps: [
          { tool: "bash", args: { command: `mkdir -p src test && printf 'int n{{n}}() { return 1000 + {{n}}; }\\n' > src/n{{n}}.cpp && printf 'int n{{n}}();\\nint main() { return n{{n}}() == 1000 + {{n}} ? 0 : 1; }\\n' > test/n{{n}}_test.cpp && git add -A && git commit -q -m "Add n{{n}}"`, description: "write and commit" } },
          { tool: "air_report", args: { summary: "Added src/n{{n}}.cpp and its test; committed." } },
          { text: "Reported." },
        ],
      },
      {
        name: "reviewer",
        agent: "reviewer",
        match: "^Review task (?<id>T-\\d+):",
        steps: [
          {
            tool: "air_review",
            args: {
              verdict: "pass",
              rows: [{ designRef: "{{id}}: done-when condition", code: "the diff of {{id}}", status: "match", note: "as specified" }],
              findings: [],
              checklist: { lifetimes: { status: "not-applicable" }, rawPointers: { status: "not-applicable" }, concurrency: { status: "not-applicable" }, exceptions: { status: "not-applicable" }, integerOverflow: { status: "checked" }, undefinedBehaviour: { status: "checked" }, loggingKeyPaths: { status: "not-applicable" }, loggingFormat: { status: "not-applicable" } },
            },
          },
          { text: "Reviewed." },
        ],
      },
    ],
  })
}

type Run = { wallS: number; gateS: number[]; mergesPerMin: number; peakRssMb: number; cpuShare: number }

/** The run's engine processes: `opencode` in their command line, working in the run's project. */
function engineStats(dir: string): { rssKb: number; cpuTicks: number }[] {
  const out: { rssKb: number; cpuTicks: number }[] = []
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (readlinkSync(`/proc/${pid}/cwd`) !== dir) continue
      if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("opencode")) continue
      const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
      out.push({ rssKb: Number(rss?.[1] ?? 0), cpuTicks: Number(fields[11]) + Number(fields[12]) })
    } catch {
      // gone meanwhile
    }
  }
  return out
}

async function runOnce(sandbox: Sandbox, tasks: number, slots: boolean): Promise<Run> {
  const name = `${tasks}-${slots ? "slots" : "rebuild"}`
  const dir = sandbox.project(name)
  project(dir, slots)
  const git = (args: string[]) => Proc.runSync("git", args, { cwd: dir, env: sandbox.env, timeoutMs: 60_000 })
  git(["add", "-A"])
  git(["commit", "-qm", "the mosaic"])
  const scenarioFile = join(sandbox.root, `scenario-${tasks}.json`)
  writeFileSync(scenarioFile, JSON.stringify(scenario(tasks), null, 2))
  const env = { ...sandbox.env, PWD: dir, AIRCODING_CONCURRENCY: String(CONCURRENCY), AIRCODING_AUTO_CONFIRM: "1", AIRCODING_SCRIPTED_LOG: join(sandbox.root, `model-${name}.jsonl`) }
  process.stderr.write(`  [many tasks] ${tasks} tasks at concurrency ${CONCURRENCY}, ${slots ? "build slots" : "no slots (a fresh build per task)"} …\n`)
  let peakKb = 0
  let ticks = 0
  const sampler = setInterval(() => {
    const stats = engineStats(dir)
    peakKb = Math.max(peakKb, ...stats.map((s) => s.rssKb), 0)
    ticks = Math.max(ticks, stats.reduce((sum, s) => sum + s.cpuTicks, 0))
  }, 1000)
  const out = await Proc.run(bunBinary(), [aircodingBin, "run", dir, "--yes", "--json", "--scripted", scenarioFile], { cwd: dir, env, timeoutMs: RUN_TIMEOUT_MS, input: requirementOf(tasks) })
  clearInterval(sampler)
  if (out.code !== 0) throw new Error(`many-tasks bench (${name}): the run exited ${out.code}; kept in ${sandbox.root}\n${out.stderr.slice(-2000)}`)
  const events = readEvents(dir)
  const accepted = events.find((e) => e.type === "graph.accepted")
  const merges = events.filter((e) => e.type === "merge.succeeded")
  if (!accepted || merges.length !== tasks) throw new Error(`many-tasks bench (${name}): ${merges.length} of ${tasks} tasks merged; kept in ${sandbox.root}`)
  const wallS = (Date.parse(merges.at(-1)!.at) - Date.parse(accepted.at)) / 1000
  // Each task's first gate run, in the order the tasks reached their gates.
  const order = [...new Set(events.filter((e) => e.type === "gates.started" && e.taskId).map((e) => e.taskId!))]
  const gateS = order.map((id) => {
    const file = join(dir, ".air", "local", "evidence", id, "attempt-1", "report.json")
    if (!existsSync(file)) return Number.NaN
    const report = JSON.parse(readFileSync(file, "utf8")) as { gates: { gate: string; ms: number }[] }
    return report.gates.filter((g) => g.gate === "build" || g.gate === "test").reduce((sum, g) => sum + g.ms, 0) / 1000
  })
  const run = { wallS, gateS, mergesPerMin: tasks / (wallS / 60), peakRssMb: Math.round(peakKb / 1024), cpuShare: ticks / 100 / wallS }
  process.stderr.write(`  [many tasks]   wall ${wallS.toFixed(0)} s, gates first10 ${median(gateS.slice(0, 10)).toFixed(1)} s, last10 ${median(gateS.slice(-10)).toFixed(1)} s, engine peak ${run.peakRssMb} MB\n`)
  process.stderr.write(`  [many tasks]   ${gateSteps(dir, "test")}\n`)
  process.stderr.write(`  [many tasks]   ${buildWork(dir)}\n`)
  return run
}

const measured = new Map<number, Promise<{ slots: Run; rebuild: Run }>>()
function measure(tasks: number) {
  let m = measured.get(tasks)
  if (!m) {
    m = (async () => {
      const sandbox = makeSandbox(`air-bench-many-${tasks}-`)
      try {
        const slots = await runOnce(sandbox, tasks, true)
        // AIR_BENCH_SLOTS_ONLY=1: the run with slots alone (to look at its gates; the ratio to the rebuild is then not measured).
        const rebuild = process.env.AIR_BENCH_SLOTS_ONLY === "1" ? { ...slots, wallS: Number.NaN } : await runOnce(sandbox, tasks, false)
        return { slots, rebuild }
      } finally {
        if (!process.env.AIR_BENCH_KEEP) sandbox.cleanup()
      }
    })()
    measured.set(tasks, m)
  }
  return m
}

if (!process.env.AIR_BENCH_SKIP_MANY_TASKS)
  for (const [tasks, prefix] of [
    [20, "twenty_tasks"],
    [100, "hundred_tasks"],
  ] as const) {
    const slots = async () => (await measure(tasks)).slots
    registerFigure({ name: `${prefix}_wall_s`, description: `${tasks} one-file tasks at concurrency ${CONCURRENCY}, real gates, build slots: graph accepted → last merge`, unit: "s", run: async () => (await slots()).wallS })
    registerFigure({ name: `${prefix}_gate_s_first10`, description: "median build + test gate seconds of the first ten tasks to reach their gates", unit: "s", run: async () => median((await slots()).gateS.slice(0, 10)) })
    registerFigure({ name: `${prefix}_gate_s_last10`, description: "the same for the last ten", unit: "s", run: async () => median((await slots()).gateS.slice(-10)) })
    registerFigure({
      name: `${prefix}_gate_growth_ratio`,
      description: "last ten's gates over the first ten's (issue 38: ≤ 1.5)",
      unit: "ratio",
      target: { op: "<=", value: 1.5 },
      run: async () => {
        const s = (await slots()).gateS
        return median(s.slice(-10)) / median(s.slice(0, 10))
      },
    })
    registerFigure({ name: `${prefix}_merges_per_min`, description: "merges per minute over the run", unit: "count", run: async () => (await slots()).mergesPerMin })
    registerFigure({ name: `${prefix}_engine_peak_rss_mb`, description: "the engine's peak resident memory, MB (issue 38: ≤ 1024)", unit: "count", target: { op: "<=", value: 1024 }, run: async () => (await slots()).peakRssMb })
    registerFigure({ name: `${prefix}_engine_cpu_share`, description: "the engine's CPU seconds over the run's wall (the Scheduler runs in it)", unit: "ratio", run: async () => (await slots()).cpuShare })
    registerFigure({
      name: `${prefix}_vs_rebuild_ratio`,
      description: "the run's wall with slots over the same run with cache.slots false (issue 38: ≤ 0.5)",
      unit: "ratio",
      target: { op: "<=", value: 0.5 },
      run: async () => {
        const { slots: s, rebuild } = await measure(tasks)
        return s.wallS / rebuild.wallS
      },
    })
  }
