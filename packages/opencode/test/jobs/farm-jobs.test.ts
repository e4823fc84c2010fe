import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import os from "node:os"
import path from "node:path"
import { describe, expect, test } from "vitest"
import { processExec } from "../../src/scheduler/runtime/gates/pipeline.ts"
import { JobBudget } from "../../src/scheduler/runtime/jobs/budget.ts"
import { BudgetExec } from "../../src/scheduler/runtime/jobs/exec.ts"
import { FarmJobs } from "../../src/scheduler/runtime/jobs/farm-jobs.ts"

/** Issue 38 item 6: the job budget counts the farm's slots for compiles, local cores for links and tests. */
describe("the farm's share of the job budget", () => {
  const rows: [string, number, number, number][] = [
    ["cmake --build .air-build", 2, 6, 8],
    ["ninja -C build", 3, 4, 7],
    ["make -j 2", 2, 4, 6],
    ["ctest --test-dir .air-build --output-on-failure", 2, 6, 2],
    ["cmake --build b && ctest --test-dir b", 2, 6, 2],
    ["cmake -S . -B .air-build -G Ninja", 2, 6, 2],
    ["cmake --build .air-build", 2, 0, 2],
  ]
  test.each(rows)("%s with a local share of %i and %i farm slots runs %i jobs", (command, local, farm, want) => {
    expect(FarmJobs.jobs(command, local, farm)).toBe(want)
  })

  test("a configure puts its links in a pool of the local cores, only when a farm raises -j", () => {
    expect(FarmJobs.withLinkPool("cmake -S . -B .air-build -G Ninja", 3, 4)).toBe(
      "cmake -S . -B .air-build -G Ninja -DCMAKE_JOB_POOLS=aircoding_link=3 -DCMAKE_JOB_POOL_LINK=aircoding_link",
    )
    expect(FarmJobs.withLinkPool("cmake -S . -B b && cmake --build b", 2, 4)).toBe("cmake -S . -B b -DCMAKE_JOB_POOLS=aircoding_link=2 -DCMAKE_JOB_POOL_LINK=aircoding_link && cmake --build b")
    expect(FarmJobs.withLinkPool("cmake ..", 2, 4)).toContain("CMAKE_JOB_POOL_LINK=aircoding_link")
    expect(FarmJobs.withLinkPool("cmake -S . -B b", 2, 0)).toBe("cmake -S . -B b")
    expect(FarmJobs.withLinkPool("cmake --build b", 2, 4)).toBe("cmake --build b")
    expect(FarmJobs.withLinkPool("ctest --test-dir b", 2, 4)).toBe("ctest --test-dir b")
  })

  test("through the budget, a real CMake configure with a farm gives Ninja a link pool of the budget's cores and the build -j local + farm", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "air-farm-jobs-"))
    try {
      await writeFile(path.join(dir, "CMakeLists.txt"), "cmake_minimum_required(VERSION 3.16)\nproject(p CXX)\nadd_executable(a a.cpp)\nadd_executable(b b.cpp)\n")
      await writeFile(path.join(dir, "a.cpp"), "int main() { return 0; }\n")
      await writeFile(path.join(dir, "b.cpp"), "int main() { return 0; }\n")
      const budget = new JobBudget({ size: 2, limits: { minFreeMb: 0, loadFactor: 1000 } })
      const ran: string[] = []
      const exec = BudgetExec.wrap((command, args, options) => (ran.push(command), processExec(command, args, options)), budget, "test")
      const env = { ...process.env, DISTCC_HOSTS: "127.0.0.1:1/3 127.0.0.1:2/3" }
      const configure = await exec("cmake -S . -B build -G Ninja", [], { cwd: dir, env, shell: true, timeoutMs: 120_000 })
      expect(configure.ok, configure.output).toBe(true)
      const ninja = await readFile(path.join(dir, "build", "build.ninja"), "utf8")
      const rules = await readFile(path.join(dir, "build", "CMakeFiles", "rules.ninja"), "utf8").catch(() => "")
      expect(`${ninja}\n${rules}`).toMatch(/pool aircoding_link\s+depth = 2/)
      // Every link step is in the pool; no compile is.
      expect(ninja).toMatch(/build a: CXX_EXECUTABLE_LINKER[^\n]*\n(?:  [^\n]*\n)*?  pool = aircoding_link/)
      expect(ninja).not.toMatch(/CXX_COMPILER[^\n]*\n(?:  [^\n]*\n)*?  pool = aircoding_link/)
      expect(ran[0]).toContain("-DCMAKE_JOB_POOL_LINK=aircoding_link")
      // The build's -j: the budget's share (2) and the farm's six slots; the tests' only the share.
      ran.length = 0
      const record = BudgetExec.wrap(async (command, _args, options) => (ran.push(`${command} (${options.env.CMAKE_BUILD_PARALLEL_LEVEL} jobs)`), { ok: true, code: 0, output: "" }) as Awaited<ReturnType<typeof processExec>>, budget, "test")
      await record("cmake --build build", [], { cwd: dir, env, shell: true, timeoutMs: 1000 })
      await record("ctest --test-dir build", [], { cwd: dir, env, shell: true, timeoutMs: 1000 })
      expect(ran).toEqual(["cmake --build build (8 jobs)", "ctest --test-dir build (2 jobs)"])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
