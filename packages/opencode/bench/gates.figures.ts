/**
 * The gates on a C++ project the bench generates (200 translation units, 3 test programs), through real
 * worktrees, CMake, ccache, CTest and cppcheck: what the first worktree's build costs, what a second worktree
 * of the same commit costs once the project's ccache is warm, and a one-line task through every gate.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import type { CompilerCache } from "../src/scheduler/runtime/toolchain/cache.ts"
import { Gates } from "../src/scheduler/runtime/gates/index.ts"
import { git } from "../src/scheduler/runtime/git/git.ts"
import { Toolchain } from "../src/scheduler/runtime/toolchain/index.ts"
import { Worktrees } from "../src/scheduler/runtime/git/worktree.ts"
import { registerFigure } from "./figures"

const UNITS = 200
const TESTS = 3

interface Measured {
  coldMs: number
  warmMs: number
  hitRate: number
  totalMs: number
}

let measured: Promise<Measured> | undefined
/** One generated project serves every figure of this file (a cold build is measured once). */
function measure(): Promise<Measured> {
  measured ??= run()
  return measured
}

function unit(i: number): { header: string; source: string } {
  const n = String(i).padStart(3, "0")
  return {
    header: `#pragma once\n#include <string>\n#include <vector>\nnamespace gen {\nstd::string describe_${n}(int count);\nint sum_${n}(const std::vector<int>& values);\n}\n`,
    source:
      `#include "gen/unit_${n}.h"\n#include <algorithm>\n#include <numeric>\n\nnamespace gen {\n` +
      `std::string describe_${n}(int count) {\n  std::string out;\n  for (int i = 0; i < count; ++i) out += std::to_string(i * ${i + 1}) + ';';\n  return out;\n}\n\n` +
      `int sum_${n}(const std::vector<int>& values) {\n  std::vector<int> sorted(values);\n  std::sort(sorted.begin(), sorted.end());\n` +
      `  return std::accumulate(sorted.begin(), sorted.end(), ${i});\n}\n}  // namespace gen\n`,
  }
}

async function generate(root: string): Promise<void> {
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true })
    await writeFile(path.join(root, file), text)
  }
  const sources: string[] = []
  for (let i = 0; i < UNITS - TESTS; i++) {
    const { header, source } = unit(i)
    const n = String(i).padStart(3, "0")
    await write(`include/gen/unit_${n}.h`, header)
    await write(`src/unit_${n}.cpp`, source)
    sources.push(`src/unit_${n}.cpp`)
  }
  const tests: string[] = []
  for (let t = 0; t < TESTS; t++) {
    const n = String(t).padStart(3, "0")
    await write(
      `test/test_${t}.cpp`,
      `#include "gen/unit_${n}.h"\n#include <cstdio>\nint main() {\n  const int got = gen::sum_${n}({3, 1, 2});\n  if (got != ${6 + t}) { std::printf("FAIL: %d\\n", got); return 1; }\n  return gen::describe_${n}(3).empty() ? 1 : 0;\n}\n`,
    )
    tests.push(`add_executable(test_${t} test/test_${t}.cpp)\ntarget_link_libraries(test_${t} gen)\nadd_test(NAME test_${t} COMMAND test_${t})\n`)
  }
  await write(
    "CMakeLists.txt",
    `cmake_minimum_required(VERSION 3.16)\nproject(gen CXX)\nset(CMAKE_CXX_STANDARD 17)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\n` +
      `add_library(gen\n  ${sources.join("\n  ")}\n)\ntarget_include_directories(gen PUBLIC include)\nenable_testing()\n${tests.join("")}`,
  )
}

async function task(root: string, taskId: string, file: string, line: string, requires: Gates.Requirement[]): Promise<Gates.GateReport> {
  const wt = await Worktrees.create(root, taskId, "main")
  const target = path.join(wt.path, file)
  await writeFile(target, (await readFile(target, "utf8").catch(() => "")) + line)
  await git(wt.path, ["add", "-A"])
  await git(wt.path, ["commit", "--quiet", "-m", `${taskId}: one line`])
  // Detected rules, with room for a cold build on a loaded machine (the default per-command limit is 10 min).
  const detected = (await Toolchain.detect(wt.path)).rules
  const report = await Gates.run({
    toolchain: { ...detected, timeoutMs: 60 * 60 * 1000 },
    root,
    worktree: wt.path,
    taskId,
    base: "main",
    kind: "code",
    attempt: 1,
    evidenceDir: path.join(root, ".air/local/evidence", taskId, "attempt-1"),
    requires,
  })
  if (!report.passed) throw new Error(`bench task ${taskId} did not pass its gates: ${report.message}`)
  return report
}

const gateMs = (report: Gates.GateReport, gate: Gates.GateName) => report.gates.find((g) => g.gate === gate)?.ms ?? 0

async function run(): Promise<Measured> {
  const root = await mkdtemp(path.join(tmpdir(), "air-bench-gates-"))
  try {
    await generate(root)
    await git(root, ["init", "--quiet", "--initial-branch", "main"])
    for (const [key, value] of [["user.name", "AirCoding bench"], ["user.email", "bench@aircoding.invalid"], ["commit.gpgsign", "false"]] as const) {
      await git(root, ["config", key, value])
    }
    await git(root, ["add", "-A"])
    await git(root, ["commit", "--quiet", "-m", "generated project"])
    // Two worktrees of the same commit, each with a change that is no source (the same sources compile in both).
    const cold = await task(root, "bench-cold", "NOTES.md", "first\n", ["diff", "build"])
    const warm = await task(root, "bench-warm", "NOTES.md", "second\n", ["diff", "build"])
    const stats = JSON.parse(await readFile(path.join(warm.evidenceDir, "cache.json"), "utf8")) as CompilerCache.Stats
    // A one-line task through every gate: commit, diff, build, test, analysis, evidence.
    const started = Date.now()
    await task(root, "bench-one-line", "src/unit_042.cpp", "// one line\n", ["diff", "build", "test", "analysis"])
    const totalMs = Date.now() - started
    return { coldMs: gateMs(cold, "build"), warmMs: gateMs(warm, "build"), hitRate: stats.rate ?? 0, totalMs }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

registerFigure({
  name: "gate_build_cold_ms",
  description: `build gate in the first worktree of a generated ${UNITS}-unit CMake project (configure + build, empty ccache)`,
  unit: "ms",
  run: async () => (await measure()).coldMs,
})
registerFigure({
  name: "gate_build_warm_ms",
  description: "build gate in a second worktree of the same commit (the project's ccache now warm)",
  unit: "ms",
  run: async () => (await measure()).warmMs,
})
registerFigure({
  name: "gate_build_warm_ratio",
  description: "warm build / cold build (target: a second worktree costs at most a fifth of the first)",
  unit: "ratio",
  target: { op: "<=", value: 0.2 },
  run: async () => {
    const m = await measure()
    return m.warmMs / m.coldMs
  },
})
registerFigure({
  name: "gate_ccache_hit_rate",
  description: "ccache hits / cacheable compilations in the second worktree's build",
  unit: "ratio",
  run: async () => (await measure()).hitRate,
})
registerFigure({
  name: "gate_total_ms",
  description: "a one-line task in a third worktree through every gate (commit, diff, build, test, cppcheck, evidence)",
  unit: "ms",
  run: async () => (await measure()).totalMs,
})
