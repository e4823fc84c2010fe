/**
 * The results store's figures (issue 22), on a CMake project the bench generates: SOURCES library sources,
 * TESTS test executables each taking TEST_S seconds (printed when measured). A one-line comment task goes
 * through what the Scheduler runs itself — the run's baseline, the task's gates (build, test, analysis),
 * the fast-forward merge, the final check — once with the caches as shipped (ccache and the results
 * store, after `aircoding init`'s baseline on the same inputs) and once with every cache off.
 * Not measured here: the engine and the model (the scripted model answers in under 2 s; issue 22).
 *
 * - one_line_task_s / one_line_task_uncached_s: wall time of that pipeline; target ratio ≤ 0.2.
 * - final_check_reused: 1 when the final check after the fast-forward ran nothing.
 * - selection_false_pass: planted changes (test/results/planted.ts) whose gates passed on a recorded base: 0.
 */
import { writeFile } from "node:fs/promises"
import path from "node:path"
import { Baseline } from "../src/scheduler/runtime/integration/baseline"
import { FinalCheck } from "../src/scheduler/runtime/integration/final-check"
import { BaselineRun } from "../src/scheduler/runtime/toolchain/baseline-run"
import { Toolchain } from "../src/scheduler/runtime/toolchain/index"
import { Worktrees } from "../src/scheduler/runtime/git/worktree"
import { createCppRepo, type CppRepo } from "../test/runtime/cpp-repo"
import { firstGates, taskBranches } from "../test/runtime/task-branch"
import { PLANTED_CHANGES, PLANTED_FILES, PLANTED_RULES } from "../test/results/planted"
import { registerFigure } from "./figures"

const SOURCES = Number(process.env.AIR_BENCH_SOURCES ?? 60)
const TESTS = Number(process.env.AIR_BENCH_TESTS ?? 10)
const TEST_S = Number(process.env.AIR_BENCH_TEST_S ?? 1.5)

function project(): Record<string, string> {
  const files: Record<string, string> = {}
  for (let i = 0; i < SOURCES; i++) files[`src/f${i}.cpp`] = `// source ${i}\nint f${i}(int x) { return x * ${i + 1} + ${i % 7}; }\n`
  files["include/lib.h"] = Array.from({ length: SOURCES }, (_, i) => `int f${i}(int x);`).join("\n") + "\n"
  for (let t = 0; t < TESTS; t++)
    files[`test/t${t}.cpp`] =
      `#include "lib.h"\n#include <chrono>\n#include <thread>\nint main() {\n  std::this_thread::sleep_for(std::chrono::milliseconds(${Math.round(TEST_S * 1000)}));\n` +
      `  return f${t % SOURCES}(1) == ${(t % SOURCES) + 1 + ((t % SOURCES) % 7)} ? 0 : 1;\n}\n`
  files["CMakeLists.txt"] =
    `cmake_minimum_required(VERSION 3.16)\nproject(gen CXX)\nset(CMAKE_CXX_STANDARD 17)\nadd_library(lib ${Array.from({ length: SOURCES }, (_, i) => `src/f${i}.cpp`).join(" ")})\n` +
    `target_include_directories(lib PUBLIC include)\nenable_testing()\n` +
    Array.from({ length: TESTS }, (_, t) => `add_executable(t${t} test/t${t}.cpp)\ntarget_link_libraries(t${t} lib)\nadd_test(NAME t${t} COMMAND t${t})\n`).join("")
  return files
}

function rules(cached: boolean) {
  return {
    schemaVersion: 1,
    build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build -j 2"],
    test: ["ctest --test-dir .air-build -j 2"],
    cache: cached ? { tool: "auto" } : { tool: "none", results: { enabled: false } },
  }
}

async function oneLineTask(cached: boolean): Promise<{ seconds: number; finalReused: boolean }> {
  const repo = await createCppRepo({ empty: true, files: { ...project(), [Toolchain.RULES_PATH]: JSON.stringify(rules(cached)) } })
  try {
    await Worktrees.ensureExcluded(repo.root)
    // `aircoding init` ran before the run (not timed), as in issue 22's measurement.
    await BaselineRun.run(repo.root, Toolchain.parse(JSON.stringify(rules(cached))))
    const started = performance.now()
    await Baseline.run(repo.root, "main")
    const tasks = taskBranches(() => repo, { commit: true })
    const { wt } = await tasks.task("T-1", (ws) => ws.write("src/f0.cpp", `// source 0, said better\nint f0(int x) { return x * 1 + 0; }\n`))
    const report = await firstGates(repo.root, "T-1", wt.path, { requires: ["diff", "build", "test"] })
    if (!report.passed) throw new Error(`one_line_task: the gates failed: ${report.message}`)
    await tasks.merge("T-1")
    await repo.git(["reset", "--quiet", "--hard", "main"])
    const final = await FinalCheck.run(repo.root)
    if (!final.passed) throw new Error(`one_line_task: the final check failed: ${final.summary}`)
    return { seconds: (performance.now() - started) / 1000, finalReused: final.reused !== undefined }
  } finally {
    await repo.cleanup()
  }
}

let measured: Promise<{ cached: number; uncached: number; finalReused: boolean }> | undefined
function measure() {
  measured ??= (async () => {
    process.stderr.write(`  generated project: ${SOURCES} sources, ${TESTS} test executables of ${TEST_S} s each (ctest -j 2)\n`)
    const uncached = await oneLineTask(false)
    const cached = await oneLineTask(true)
    process.stderr.write(`  one line task: ${cached.seconds.toFixed(1)} s cached, ${uncached.seconds.toFixed(1)} s uncached (ratio ${(cached.seconds / uncached.seconds).toFixed(2)})\n`)
    return { cached: cached.seconds, uncached: uncached.seconds, finalReused: cached.finalReused }
  })()
  return measured
}

async function falsePasses(): Promise<number> {
  let passed = 0
  const repo: CppRepo = await createCppRepo({ empty: true, files: { ...PLANTED_FILES, [Toolchain.RULES_PATH]: JSON.stringify(PLANTED_RULES) } })
  try {
    await Worktrees.ensureExcluded(repo.root)
    await Baseline.run(repo.root, "main")
    const tasks = taskBranches(() => repo, { commit: true })
    for (const [i, change] of PLANTED_CHANGES.entries()) {
      const { wt } = await tasks.task(`P-${i}`, async (ws) => {
        for (const [file, content] of Object.entries(change.files ?? {})) await ws.write(file, content)
        if (!change.files) await writeFile(path.join(ws.root, "empty-change.txt"), "")
      })
      const env = { ...process.env, ...(change.env ?? {}) }
      const report = await firstGates(repo.root, `P-${i}`, wt.path, { requires: ["diff", "build", "test"], env, gates: undefined })
      if (report.passed) {
        passed++
        process.stderr.write(`  FALSE PASS: ${change.name}\n`)
      }
    }
  } finally {
    await repo.cleanup()
  }
  return passed
}

registerFigure({
  name: "one_line_task_s",
  description: "baseline + gates + fast-forward merge + final check of a comment-only task, caches as shipped",
  unit: "s",
  run: async () => (await measure()).cached,
})
registerFigure({
  name: "one_line_task_uncached_s",
  description: "the same with ccache and the results store off",
  unit: "s",
  run: async () => (await measure()).uncached,
})
registerFigure({
  name: "one_line_task_ratio",
  description: "one_line_task_s / one_line_task_uncached_s (issue 22: ≤ 0.2)",
  unit: "ratio",
  target: { op: "<=", value: 0.2 },
  run: async () => {
    const m = await measure()
    return m.cached / m.uncached
  },
})
registerFigure({
  name: "final_check_reused",
  description: "1 when the final check after the fast-forward merge reused the gates' result",
  unit: "count",
  target: { op: ">=", value: 1 },
  run: async () => ((await measure()).finalReused ? 1 : 0),
})
registerFigure({
  name: "selection_false_pass",
  description: "planted changes (source, header constant, data file, linker flag, named env) whose gates passed",
  unit: "count",
  target: { op: "<=", value: 0 },
  run: falsePasses,
})
