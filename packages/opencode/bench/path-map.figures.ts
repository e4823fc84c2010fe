/**
 * Path-independent build outputs (issue 38 item 1), on a Debug CMake project the bench generates: SOURCES
 * library sources, TESTS test executables each taking TEST_S seconds, and a benchmark program no test
 * contains (as leveldb's db_bench). The baseline is built in its own worktree, then one task rewords the
 * benchmark's comment in another worktree and goes through the build and test gates (ccache on, as
 * shipped). Once as shipped (the worktree's path mapped out of the outputs) and once with
 * `cache.pathMap: false`, in two fresh repositories.
 *
 * - debug_reused_tests / debug_reused_tests_unmapped: tests the task's test gate reused (TESTS expected as shipped; issue 38 measured 0).
 * - debug_task_gates_s / debug_task_gates_unmapped_s: the task's build and test gates, wall seconds.
 */
import { Baseline } from "../src/scheduler/runtime/integration/baseline"
import { REGISTRY } from "../src/scheduler/runtime/gates/index"
import { Toolchain } from "../src/scheduler/runtime/toolchain/index"
import { Worktrees } from "../src/scheduler/runtime/git/worktree"
import { createCppRepo } from "../test/runtime/cpp-repo"
import { firstGates, taskBranches } from "../test/runtime/task-branch"
import { registerFigure } from "./figures"

const SOURCES = Number(process.env.AIR_BENCH_DEBUG_SOURCES ?? 40)
const TESTS = Number(process.env.AIR_BENCH_DEBUG_TESTS ?? 8)
const TEST_S = Number(process.env.AIR_BENCH_DEBUG_TEST_S ?? 2)

function generatedFiles(): Record<string, string> {
  const files: Record<string, string> = {}
  for (let i = 0; i < SOURCES; i++) files[`src/f${i}.cpp`] = `#include <cassert>\nint f${i}(int x) {\n  assert(x > -1000000);\n  return x * ${i + 1} + ${i % 7};\n}\n`
  files["include/lib.h"] = Array.from({ length: SOURCES }, (_, i) => `int f${i}(int x);`).join("\n") + "\n"
  for (let t = 0; t < TESTS; t++)
    files[`test/t${t}.cpp`] =
      `#include "lib.h"\n#include <chrono>\n#include <thread>\nint main() {\n  std::this_thread::sleep_for(std::chrono::milliseconds(${Math.round(TEST_S * 1000)}));\n` +
      `  return f${t % SOURCES}(1) == ${(t % SOURCES) + 1 + ((t % SOURCES) % 7)} ? 0 : 1;\n}\n`
  files["tools/bench.cpp"] = `// a benchmark\n#include "lib.h"\n#include <cstdio>\nint main() { std::printf("%d\\n", f0(1)); }\n`
  files["CMakeLists.txt"] =
    `cmake_minimum_required(VERSION 3.16)\nproject(gen CXX)\nset(CMAKE_CXX_STANDARD 17)\nadd_library(lib ${Array.from({ length: SOURCES }, (_, i) => `src/f${i}.cpp`).join(" ")})\n` +
    `target_include_directories(lib PUBLIC include)\nadd_executable(bench tools/bench.cpp)\ntarget_link_libraries(bench lib)\nenable_testing()\n` +
    Array.from({ length: TESTS }, (_, t) => `add_executable(t${t} test/t${t}.cpp)\ntarget_link_libraries(t${t} lib)\nadd_test(NAME t${t} COMMAND t${t})\n`).join("")
  return files
}

function rules(mapped: boolean) {
  return {
    schemaVersion: 1,
    build: ["cmake -S . -B .air-build -G Ninja -DCMAKE_BUILD_TYPE=Debug", "cmake --build .air-build -j 2"],
    test: ["ctest --test-dir .air-build -j 2"],
    cache: mapped ? { tool: "auto" } : { tool: "auto", pathMap: false },
  }
}

type Measured = { reused: number; gatesS: number }

async function commentTask(mapped: boolean): Promise<Measured> {
  const repo = await createCppRepo({ empty: true, files: { ...generatedFiles(), [Toolchain.RULES_PATH]: JSON.stringify(rules(mapped)) } })
  try {
    await Worktrees.ensureExcluded(repo.root)
    const base = await Baseline.run(repo.root, "main")
    if (base.status !== "passed") throw new Error(`path map bench: the baseline did not pass: ${base.message}`)
    const tasks = taskBranches(() => repo, { commit: true })
    const { wt } = await tasks.task("T-bench-comment", (ws) => ws.write("tools/bench.cpp", generatedFiles()["tools/bench.cpp"]!.replace("// a benchmark", "// a benchmark of f0")))
    const report = await firstGates(repo.root, "T-bench-comment", wt.path, {
      requires: ["diff", "build", "test"],
      gates: REGISTRY.filter((g) => g.id === "diff" || g.id === "build" || g.id === "test"),
    })
    if (!report.passed) throw new Error(`path map bench: the task's gates failed: ${report.message}`)
    const timed = report.gates.filter((g) => g.gate === "build" || g.gate === "test")
    const tested = report.gates.find((g) => g.gate === "test")
    return { reused: tested?.reused?.tests ?? 0, gatesS: timed.reduce((sum, g) => sum + g.ms, 0) / 1000 }
  } finally {
    await repo.cleanup()
  }
}

let measured: Promise<{ mapped: Measured; unmapped: Measured }> | undefined
function measure() {
  measured ??= (async () => {
    process.stderr.write(`  generated Debug project: ${SOURCES} sources, ${TESTS} test executables of ${TEST_S} s each, a benchmark no test contains\n`)
    const unmapped = await commentTask(false)
    const mapped = await commentTask(true)
    process.stderr.write(
      `  comment in the benchmark: reused ${mapped.reused}/${TESTS} tests, gates ${mapped.gatesS.toFixed(1)} s; ` +
        `unmapped: reused ${unmapped.reused}/${TESTS}, gates ${unmapped.gatesS.toFixed(1)} s\n`,
    )
    return { mapped, unmapped }
  })()
  return measured
}

registerFigure({
  name: "debug_reused_tests",
  description: `Debug build, a comment in a program no test contains: tests the task's test gate reused (of ${TESTS})`,
  unit: "count",
  target: { op: ">=", value: TESTS },
  run: async () => (await measure()).mapped.reused,
})
registerFigure({
  name: "debug_reused_tests_unmapped",
  description: "the same with cache.pathMap false (the worktree's path left in the outputs)",
  unit: "count",
  run: async () => (await measure()).unmapped.reused,
})
registerFigure({
  name: "debug_task_gates_s",
  description: "that task's build and test gates, wall seconds",
  unit: "s",
  run: async () => (await measure()).mapped.gatesS,
})
registerFigure({
  name: "debug_task_gates_unmapped_s",
  description: "the same with cache.pathMap false",
  unit: "s",
  run: async () => (await measure()).unmapped.gatesS,
})
