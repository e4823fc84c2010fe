import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { availableParallelism, tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { buildGate } from "../../src/scheduler/runtime/gates/build.ts"
import { runGates } from "../../src/scheduler/runtime/gates/pipeline.ts"
import { testGate } from "../../src/scheduler/runtime/gates/test.ts"
import { JobBudget } from "../../src/scheduler/runtime/jobs/budget.ts"
import { CommandJobs } from "../../src/scheduler/runtime/jobs/command-jobs.ts"
import { BudgetExec } from "../../src/scheduler/runtime/jobs/exec.ts"
import { JobsFile } from "../../src/scheduler/runtime/jobs/file.ts"
import { Pressure } from "../../src/scheduler/runtime/jobs/pressure.ts"
import { RunJobs } from "../../src/scheduler/runtime/jobs/run-jobs.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { RunView } from "../../src/read/view.ts"
import { ViewText } from "../../src/read/view-text.ts"
import { initialState } from "../../src/scheduler/core/state.ts"
import { parallelProject } from "../support/parallel-project.ts"

const calm = { probe: () => ({ availableMb: 64_000, load1: 0, cores: 2 }) }

describe("a command's jobs", () => {
  test.each([
    ["cmake --build .air-build -j 8", 2, 8, "cmake --build .air-build -j 2"],
    ["make -j8 all", 2, 8, "make -j 2 all"],
    ["ctest --test-dir b --output-on-failure -j 4", 3, 4, "ctest --test-dir b --output-on-failure -j 3"],
    ["cmake --build --preset dev --parallel=6", 1, 6, "cmake --build --preset dev --parallel=1"],
    ["meson test -C b --num-processes 4 --print-errorlogs", 2, 4, "meson test -C b --num-processes 2 --print-errorlogs"],
    ["make -j", 2, 4, "make -j 2"],
    ["cmake -S . -B .air-build", 2, 1, "cmake -S . -B .air-build"],
    ["cmake --build .air-build", 4, 4, "cmake --build .air-build"],
  ])("%s asks for its jobs and is limited to its share", (command, share, wanted, limited) => {
    expect(CommandJobs.wanted(command, 4)).toBe(wanted)
    expect(CommandJobs.limit(command, share)).toBe(limited)
  })

  test("an inherited jobserver is dropped and the runners' parallel level set", () => {
    const env = CommandJobs.env({ MAKEFLAGS: "-j16 --jobserver-auth=3,4 -k" }, 2)
    expect(env.MAKEFLAGS).toBe("-k -j2")
    expect(env.CMAKE_BUILD_PARALLEL_LEVEL).toBe("2")
    expect(env.CTEST_PARALLEL_LEVEL).toBe("2")
  })
})

describe("the job budget", () => {
  test("shares never add up to more than the budget; a request for all of it waits for the others, in turn", async () => {
    const budget = new JobBudget({ size: 3, ...calm })
    const a = await budget.acquire(2, "a")
    const b = await budget.acquire(8, "b")
    expect([a.jobs, b.jobs]).toEqual([2, 1])
    let alone = false
    const all = budget.acquire("all", "alone").then((lease) => ((alone = true), lease))
    let later = false
    const next = budget.acquire(1, "later").then((lease) => ((later = true), lease))
    a.release()
    await new Promise((r) => setTimeout(r, 20))
    expect([alone, later]).toEqual([false, false])
    b.release()
    const lease = await all
    expect(lease.jobs).toBe(3)
    expect(later).toBe(false)
    lease.release()
    ;(await next).release()
    expect(budget.snapshot()).toMatchObject({ inUse: 0, waiting: 0, peakInUse: 3 })
  })

  test("the merge queue's command goes first: ahead of the gates' waiters, and with its whole share at once", async () => {
    const budget = new JobBudget({ size: 3, ...calm })
    const held = [await budget.acquire(2, "task A build"), await budget.acquire(1, "task B build")]
    const order: string[] = []
    const wait = (want: number, label: string, first = false) => budget.acquire(want, label, undefined, { first }).then((lease) => (order.push(`${label}:${lease.jobs}`), lease))
    const gate = wait(2, "task C build")
    const merge = wait(2, "merge build", true)
    held[1]!.release()
    await new Promise((r) => setTimeout(r, 20))
    // One job is free: a gate would take it, the merge build waits for its two, and nobody overtakes it meanwhile.
    expect(order).toEqual([])
    held[0]!.release()
    const [m, g] = [await merge, await gate]
    expect(order).toEqual(["merge build:2", "task C build:1"])
    m.release()
    g.release()
    expect(budget.snapshot()).toMatchObject({ inUse: 0, waiting: 0 })
  })

  test("a gate run's next command keeps the place of its start: ahead of gate runs that started later, never of a request for all", async () => {
    const budget = new JobBudget({ size: 1, ...calm })
    const served: string[] = []
    const wait = (label: string, place: { order?: number }, want: number | "all" = 1) => budget.acquire(want, label, undefined, place).then((lease) => (served.push(label), lease))
    const configureA = await wait("A configure", { order: 100 })
    const configureB = wait("B configure", { order: 200 })
    const configureC = wait("C configure", { order: 300 })
    configureA.release()
    const b = await configureB
    // A's build, asked for after B's and C's configures, goes before C's: A's gates started first.
    const buildA = wait("A build", { order: 100 })
    b.release()
    const a = await buildA
    expect(served).toEqual(["A configure", "B configure", "A build"])
    // A retry that needs the whole budget is not overtaken, not even by a gate run that started before it.
    const alone = wait("retry alone", {}, "all")
    const testA = wait("A test", { order: 100 })
    a.release()
    ;(await configureC).release()
    ;(await alone).release()
    ;(await testA).release()
    expect(served).toEqual(["A configure", "B configure", "A build", "C configure", "retry alone", "A test"])
  })

  test("while ours run, a free slot waits while memory is short, and starts once it is back", async () => {
    let availableMb = 100
    const budget = new JobBudget({ size: 2, probe: () => ({ availableMb, load1: 0, cores: 2 }), pollMs: 10 })
    const first = await budget.acquire(1, "first")
    expect(first.jobs).toBe(1)
    let started = false
    const pending = budget.acquire(1, "x").then((lease) => ((started = true), lease))
    await new Promise((r) => setTimeout(r, 60))
    expect(started).toBe(false)
    availableMb = 4_000
    ;(await pending).release()
    expect(started).toBe(true)
    first.release()
  })

  test("our own threads far above the cores: with none of ours running the next command starts at once, the one after waits for it", async () => {
    const budget = new JobBudget({ size: 2, probe: () => ({ availableMb: 4_000, load1: 9, cores: 2, ours: 9 }), pollMs: 10 })
    const lease = await budget.acquire(1, "x")
    expect(lease.jobs).toBe(1)
    let second = false
    const next = budget.acquire(1, "y").then((l) => ((second = true), l))
    await new Promise((r) => setTimeout(r, 40))
    expect(second).toBe(false)
    lease.release()
    ;(await next).release()
    expect(budget.snapshot().peakLoad).toBe(9)
  })

  test("the other users' load does not hold ours back: at a load of 30 on two cores, with two of our threads runnable, both shares start", async () => {
    const budget = new JobBudget({ size: 2, probe: () => ({ availableMb: 4_000, load1: 30, cores: 2, ours: 2 }), pollMs: 10 })
    const [a, b] = await Promise.all([budget.acquire(1, "a"), budget.acquire(1, "b")])
    expect(budget.snapshot()).toMatchObject({ inUse: 2, peakLoad: 30 })
    a.release()
    b.release()
    // Without /proc to say what is ours, the machine's load stands in.
    expect(Pressure.reason({ availableMb: 4_000, load1: 30, cores: 2 }, Pressure.DEFAULT_LIMITS)).toMatch(/load 30/)
    expect(Pressure.reason({ availableMb: 4_000, load1: 30, cores: 2, ours: 2 }, Pressure.DEFAULT_LIMITS)).toBeUndefined()
  })

  test.skipIf(process.platform !== "linux")("our runnable threads are counted among this process's descendants: a busy child is one", async () => {
    const busy = spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" })
    try {
      await new Promise((r) => setTimeout(r, 200))
      // R is running or waiting for a core: a busy loop is always one, however loaded the machine.
      expect(Pressure.runnableDescendants(process.pid)!).toBeGreaterThanOrEqual(1)
      expect(Pressure.runnableDescendants(busy.pid!)).toBe(0)
    } finally {
      busy.kill("SIGKILL")
    }
  })

  test("a run's budget is the cores + 1 (a serial step of one share leaves no core idle), or AIRCODING_JOBS", () => {
    expect(JobBudget.machineSize({})).toBe(availableParallelism() + 1)
    expect(JobBudget.machineSize({ AIRCODING_JOBS: "5" })).toBe(5)
    expect(JobBudget.machineSize({ AIRCODING_JOBS: "0" })).toBe(availableParallelism() + 1)
  })

  test("the gate timeout is three times the baseline with a floor, unless toolchain.json sets its own", () => {
    const rules = Toolchain.Rules.parse({ schemaVersion: 1 })
    expect(RunJobs.gateTimeout(rules, 100_000).ms).toBe(300_000)
    expect(RunJobs.gateTimeout(rules, 1_000).ms).toBe(RunJobs.TIMEOUT_FLOOR_MS)
    expect(RunJobs.gateTimeout({ ...rules, timeoutMs: 42_000 }, 100_000).ms).toBe(42_000)
    expect(RunJobs.gateTimeout(rules, undefined).ms).toBe(Toolchain.DEFAULT_TIMEOUT_MS)
  })
})

describe("four tasks gating at once on a generated CMake project", () => {
  let repo: CppRepo
  let dir: string
  beforeAll(async () => {
    repo = await createCppRepo()
    dir = await mkdtemp(path.join(tmpdir(), "air-jobs-"))
  })
  afterAll(async () => {
    RunJobs.forget(repo.root)
    await repo?.cleanup()
    await rm(dir, { recursive: true, force: true })
  })

  const gate = (worktree: string, taskId: string, toolchain: Toolchain.RulesInput) =>
    runGates({
      root: repo.root,
      worktree,
      taskId,
      base: "main",
      kind: "feature",
      attempt: 1,
      evidenceDir: path.join(dir, "evidence", taskId),
      requires: [],
      toolchain,
      sandbox: "off",
      gates: [buildGate, testGate],
    })

  test("each asks for -j 8, and the compile jobs running at once never exceed the budget of 2", async () => {
    const project = await parallelProject(path.join(dir, "par"), { sources: 3, work: 1 })
    const budget = RunJobs.use(repo.root, new JobBudget({ size: 2, ...calm }))
    const rules = { schemaVersion: 1 as const, ...project.commands(8), cache: { tool: "none" as const } }
    const worktrees = await project.worktrees(4)
    const reports = await Promise.all(worktrees.map((wt, i) => gate(wt, `T-${i + 1}`, rules)))
    expect(reports.map((r) => [r.passed, r.message.slice(0, 200)])).toEqual(reports.map((r) => [true, r.message.slice(0, 200)]))
    const peak = await project.peakCompiles()
    expect(peak).toBeGreaterThanOrEqual(1)
    expect(peak).toBeLessThanOrEqual(2)
    expect(budget.snapshot()).toMatchObject({ size: 2, inUse: 0, waiting: 0, peakInUse: 2 })
    expect(JobsFile.read(repo.root)).toMatchObject({ size: 2, inUse: 0, peakInUse: 2 })
    // `aircoding status` and the dashboard show it.
    const view = RunView.build({ state: initialState(), jobs: JobsFile.read(repo.root)! })
    expect(ViewText.budgetLines("en", view)).toContain("Build and test jobs: 0 of 2 in use, 0 waiting (peak 2); gate timeout per command 10m00s")
    // Each build ran with its share, not the -j 8 it asked for.
    const log = await readFile(reports[0]!.gates.find((g) => g.gate === "build")!.logPath!, "utf8")
    expect(log).toMatch(/# [12] of the 8 jobs asked for \(the run's job budget is 2\)/)
  }, 120_000)

  test("a compile killed by SIGKILL is run again alone and the task passes", async () => {
    const marker = path.join(dir, "killed-once")
    const project = await parallelProject(path.join(dir, "oom"), { sources: 2, work: 1, killOnceMarker: marker })
    RunJobs.use(repo.root, new JobBudget({ size: 2, ...calm }))
    const [wt] = await project.worktrees(1)
    const report = await gate(wt!, "T-oom", { schemaVersion: 1, ...project.commands(2), cache: { tool: "none" } })
    expect(existsSync(marker)).toBe(true)
    expect(report.passed).toBe(true)
    const log = await readFile(report.gates.find((g) => g.gate === "build")!.logPath!, "utf8")
    expect(log).toContain("run again alone with 1 job")
  }, 60_000)

  test("a probe (ctest's listing, ldd) takes no job: it runs while the whole budget is held; other commands wait", async () => {
    const budget = new JobBudget({ size: 1, ...calm })
    const ok = { ok: true, code: 0, signal: null, timedOut: false, aborted: false, ms: 1, output: "", stdout: "", stderr: "", truncated: false }
    const ran: string[] = []
    const exec = BudgetExec.wrap(async (command) => (ran.push(command), ok), budget, "task T-9")
    let release!: () => void
    const held = budget.with(1, "a long compile", () => new Promise<void>((r) => (release = r)))
    const probe = await exec("ctest --test-dir b --show-only=json-v1", [], { cwd: dir, env: {}, shell: true, timeoutMs: 1000, probe: true })
    expect(probe.ok).toBe(true)
    const queued = exec("ctest --test-dir b", [], { cwd: dir, env: {}, shell: true, timeoutMs: 1000 })
    await new Promise((r) => setTimeout(r, 50))
    expect(ran).toEqual(["ctest --test-dir b --show-only=json-v1"])
    expect(budget.snapshot()).toMatchObject({ inUse: 1, waiting: 1 })
    release()
    await held
    await queued
    expect(ran).toHaveLength(2)
    expect(budget.snapshot()).toMatchObject({ inUse: 0, waiting: 0 })
  })

  test("killed again when alone: no verdict on the task (ToolCrashed), never a build failure", async () => {
    const budget = new JobBudget({ size: 2, ...calm })
    const killed = { ok: false, code: 137, signal: null, timedOut: false, aborted: false, ms: 1, output: "Killed\n", stdout: "", stderr: "", truncated: false }
    const seen: string[] = []
    const exec = BudgetExec.wrap(async (command) => (seen.push(command), killed), budget, "task T-9")
    await expect(exec("cmake --build b -j 8", [], { cwd: dir, env: {}, shell: true, timeoutMs: 1000 })).rejects.toThrow(/killed by the kernel twice/)
    expect(seen).toEqual(["cmake --build b -j 2", "cmake --build b -j 1"])
  })
})
