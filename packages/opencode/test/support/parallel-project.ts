import { chmod, cp, mkdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"

/**
 * A generated CMake project for the job budget: `sources` translation units and two CTest tests, and a
 * compiler wrapper that logs when each compile starts and ends (so a test can count the compile jobs that
 * ran at once) and, given a marker path, kills itself by SIGKILL on its first call (a compile the kernel
 * killed for memory). `worktrees(n)` copies the project into n task directories.
 */
export interface ParallelProject {
  /** The directory with the wrapper and its log. */
  readonly dir: string
  readonly compiler: string
  readonly log: string
  /** n copies of the project, one per task. */
  worktrees(n: number): Promise<string[]>
  /** Build and test commands with `-j` as given, through the logging compiler. */
  commands(jobs: number, generator?: "Ninja" | "Unix Makefiles"): { build: string[]; test: string[] }
  /** The most compile jobs the log shows running at the same moment. */
  peakCompiles(): Promise<number>
}

export async function parallelProject(dir: string, options: { sources?: number; work?: number; killOnceMarker?: string } = {}): Promise<ParallelProject> {
  const sources = options.sources ?? 6
  const template = path.join(dir, "template")
  await mkdir(path.join(template, "src"), { recursive: true })
  const names = Array.from({ length: sources }, (_, i) => `unit${i}`)
  // Each unit does some template work so compiles take real CPU time, as a project's do.
  const work = options.work ?? 40
  for (const name of names)
    await writeFile(
      path.join(template, "src", `${name}.cpp`),
      `#include <array>\n#include <map>\n#include <string>\n#include <vector>\n` +
        `template <int N> struct Fib { static constexpr long v = Fib<N - 1>::v + Fib<N - 2>::v; };\n` +
        `template <> struct Fib<1> { static constexpr long v = 1; };\ntemplate <> struct Fib<0> { static constexpr long v = 0; };\n` +
        Array.from({ length: work }, (_, k) => `std::map<std::string, std::vector<std::array<int, ${k + 1}>>> ${name}_m${k};\n`).join("") +
        `long ${name}() { return Fib<${30 + (sources % 10)}>::v + (long)${name}_m0.size(); }\n`,
    )
  await writeFile(
    path.join(template, "src", "main.cpp"),
    names.map((n) => `long ${n}();\n`).join("") + `int main() { long s = 0;\n${names.map((n) => `  s += ${n}();\n`).join("")}  return s > 0 ? 0 : 1; }\n`,
  )
  await writeFile(
    path.join(template, "CMakeLists.txt"),
    `cmake_minimum_required(VERSION 3.16)\nproject(par CXX)\nset(CMAKE_CXX_STANDARD 17)\n` +
      `add_library(units ${names.map((n) => `src/${n}.cpp`).join(" ")})\nadd_executable(app src/main.cpp)\ntarget_link_libraries(app units)\n` +
      `enable_testing()\nadd_test(NAME app_runs COMMAND app)\nadd_test(NAME app_again COMMAND app)\n`,
  )
  const log = path.join(dir, "compiles.log")
  const compiler = path.join(dir, "cxx")
  const kill = options.killOnceMarker
    ? `case "$*" in *unit0.cpp*) if mkdir "${options.killOnceMarker}" 2>/dev/null; then kill -9 $$; fi;; esac\n`
    : ""
  // Only the project's own units are logged (CMake's compiler checks are not the build's jobs).
  await writeFile(
    compiler,
    `#!/bin/sh\ncase "$*" in *src/*.cpp*) tracked=1;; *) tracked=;; esac\n${kill}` +
      `[ -n "$tracked" ] && echo "start $(date +%s%N) $$" >> "${log}"\n` +
      `c++ "$@"; rc=$?\n[ -n "$tracked" ] && echo "end $(date +%s%N) $$" >> "${log}"\nexit $rc\n`,
  )
  await chmod(compiler, 0o755)
  await writeFile(log, "")
  return {
    dir,
    compiler,
    log,
    async worktrees(n) {
      const out: string[] = []
      for (let i = 0; i < n; i++) {
        const wt = path.join(dir, `task-${i + 1}`)
        await cp(template, wt, { recursive: true })
        out.push(wt)
      }
      return out
    },
    commands(jobs, generator = "Ninja") {
      return {
        build: [`cmake -S . -B .air-build -G "${generator}" -DCMAKE_CXX_COMPILER=${compiler}`, `cmake --build .air-build -j ${jobs}`],
        test: [`ctest --test-dir .air-build --output-on-failure -j ${jobs}`],
      }
    },
    async peakCompiles() {
      const events = (await readFile(log, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(" "))
        .map(([kind, at]) => ({ delta: kind === "start" ? 1 : -1, at: BigInt(at!) }))
        // An end before a start at the same instant: touching intervals do not overlap.
        .sort((a, b) => (a.at === b.at ? a.delta - b.delta : a.at < b.at ? -1 : 1))
      let now = 0
      let peak = 0
      for (const e of events) peak = Math.max(peak, (now += e.delta))
      return peak
    },
  }
}
