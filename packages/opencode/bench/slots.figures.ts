/**
 * Gates that cost what the change costs (issue 38 items 1 and 2), on a project that grows as its tasks merge: the
 * bench generates a CMake project whose sources and tests are globbed (as the issue's mosaic project), then TASKS
 * one-file tasks each add a source and its test executable, go through the commit, diff, build and test gates and
 * merge, one after the other. Once with the gates in build slots (as shipped: `buildIn: "slot"`) and once in each
 * task's fresh worktree (an empty build directory every time, as before slots), in two fresh repositories; ccache
 * on in both, so the difference is the configure, the links and the tests re-run, not the compiles.
 *
 * - slot_gate_s_first5 / slot_gate_s_last5: median build + test gate seconds of the first and last five tasks, in slots.
 * - slot_gate_growth_ratio: last5 / first5 in slots (issue 38's goal for its hundred tasks: ≤ 1.5).
 * - fresh_gate_s_first5 / fresh_gate_s_last5: the same in fresh worktrees.
 * - slot_vs_fresh_last5_ratio: slots' last five against fresh worktrees' last five.
 * AIR_BENCH_SLOT_TASKS (default 20) and AIR_BENCH_SLOT_SOURCES (default 30, the project's size before the tasks).
 */
import { Worktrees } from "../src/scheduler/runtime/git/worktree"
import { REGISTRY } from "../src/scheduler/runtime/gates/index"
import { Toolchain } from "../src/scheduler/runtime/toolchain/index"
import { createCppRepo } from "../test/runtime/cpp-repo"
import { firstGates, taskBranches } from "../test/runtime/task-branch"
import { median, registerFigure } from "./figures"

const TASKS = Number(process.env.AIR_BENCH_SLOT_TASKS ?? 20)
const SOURCES = Number(process.env.AIR_BENCH_SLOT_SOURCES ?? 30)
const EDGE = 5

const source = (name: string, i: number) => `int ${name}() { return ${i}; }\n`
const test = (name: string, i: number) => `int ${name}();\nint main() { return ${name}() == ${i} ? 0 : 1; }\n`

function project(): Record<string, string> {
  const files: Record<string, string> = {
    "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)
project(grow CXX)
set(CMAKE_CXX_STANDARD 17)
file(GLOB SOURCES CONFIGURE_DEPENDS \${CMAKE_SOURCE_DIR}/src/*.cpp)
add_library(grow \${SOURCES})
enable_testing()
file(GLOB TESTS CONFIGURE_DEPENDS \${CMAKE_SOURCE_DIR}/test/*_test.cpp)
foreach(t \${TESTS})
  get_filename_component(name \${t} NAME_WE)
  add_executable(\${name} \${t})
  target_link_libraries(\${name} grow)
  add_test(NAME \${name} COMMAND \${name})
endforeach()
`,
    [Toolchain.RULES_PATH]: JSON.stringify({
      schemaVersion: 1,
      build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build -j 2"],
      test: ["ctest --test-dir .air-build -j 2"],
      analysis: { cppcheck: { enabled: false } },
    }),
  }
  for (let i = 0; i < SOURCES; i++) {
    files[`src/s${i}.cpp`] = source(`s${i}`, i)
    files[`test/s${i}_test.cpp`] = test(`s${i}`, i)
  }
  return files
}

/** Each task's build + test gate seconds, in order. */
async function tasks(buildIn: "slot" | "worktree"): Promise<number[]> {
  const repo = await createCppRepo({ empty: true, files: project() })
  try {
    await Worktrees.ensureExcluded(repo.root)
    const branches = taskBranches(() => repo, { commit: true })
    const gates = REGISTRY.filter((g) => ["commit", "diff", "build", "test"].includes(g.id))
    const seconds: number[] = []
    for (let i = 0; i < TASKS; i++) {
      const id = `T-${i + 1}`
      const name = `n${i}`
      const { wt } = await branches.task(id, async (ws) => {
        await ws.write(`src/${name}.cpp`, source(name, 1000 + i))
        await ws.write(`test/${name}_test.cpp`, test(name, 1000 + i))
      })
      const report = await firstGates(repo.root, id, wt.path, { requires: ["diff", "build", "test"], gates, buildIn })
      if (!report.passed) throw new Error(`slots bench (${buildIn}): ${id}'s gates failed: ${report.message}`)
      seconds.push(report.gates.filter((g) => g.gate === "build" || g.gate === "test").reduce((sum, g) => sum + g.ms, 0) / 1000)
      await branches.merge(id)
      await Worktrees.remove(repo.root, id).catch(() => undefined)
    }
    return seconds
  } finally {
    await repo.cleanup()
  }
}

type Edges = { first: number; last: number }
const edges = (s: number[]): Edges => ({ first: median(s.slice(0, EDGE)), last: median(s.slice(-EDGE)) })

let measured: Promise<{ slot: Edges; fresh: Edges }> | undefined
function measure() {
  measured ??= (async () => {
    process.stderr.write(`  growing project: ${SOURCES} sources and tests, then ${TASKS} tasks adding one of each, merged in turn\n`)
    const slotS = await tasks("slot")
    const freshS = await tasks("worktree")
    const slot = edges(slotS)
    const fresh = edges(freshS)
    process.stderr.write(`  slots:  ${slotS.map((s) => s.toFixed(1)).join(" ")} s\n  fresh:  ${freshS.map((s) => s.toFixed(1)).join(" ")} s\n`)
    return { slot, fresh }
  })()
  return measured
}

registerFigure({ name: "slot_gate_s_first5", description: "build + test gates of the first five tasks in build slots (median s)", unit: "s", run: async () => (await measure()).slot.first })
registerFigure({ name: "slot_gate_s_last5", description: `the same for the last five of ${TASKS} tasks`, unit: "s", run: async () => (await measure()).slot.last })
registerFigure({
  name: "slot_gate_growth_ratio",
  description: "in slots, the last five tasks' gates against the first five's (issue 38: ≤ 1.5)",
  unit: "ratio",
  target: { op: "<=", value: 1.5 },
  run: async () => {
    const { slot } = await measure()
    return slot.last / slot.first
  },
})
registerFigure({ name: "fresh_gate_s_first5", description: "the same first five in fresh worktrees (an empty build directory each)", unit: "s", run: async () => (await measure()).fresh.first })
registerFigure({ name: "fresh_gate_s_last5", description: "the same last five in fresh worktrees", unit: "s", run: async () => (await measure()).fresh.last })
registerFigure({
  name: "slot_vs_fresh_last5_ratio",
  description: "the last five tasks' gates in slots against fresh worktrees (issue 38: ≤ 0.5)",
  unit: "ratio",
  target: { op: "<=", value: 0.5 },
  run: async () => {
    const { slot, fresh } = await measure()
    return slot.last / fresh.last
  },
})
