import { execFileSync, spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { GateError } from "../../src/scheduler/runtime/errors.ts"
import { analysisGate } from "../../src/scheduler/runtime/gates/analysis.ts"
import { buildGate } from "../../src/scheduler/runtime/gates/build.ts"
import { diffGate } from "../../src/scheduler/runtime/gates/diff.ts"
import { runGates, type RunInput } from "../../src/scheduler/runtime/gates/pipeline.ts"
import { Proc } from "../../src/scheduler/runtime/process.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { bunBinary } from "../support/sandbox.ts"
import { CALC_CPP, createCppRepo, type CppRepo } from "./cpp-repo.ts"
import { alive } from "../support/pids.ts"


async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 20))
  }
}

const pidsIn = (text: string) => text.split(/\s+/).filter(Boolean).map(Number)

describe("the process runner", () => {
  test("a timeout kills the whole tree, children included", async () => {
    const result = await Proc.run("sh", ["-c", "sleep 1000 & echo $!; sleep 1000 & echo $!; wait"], {
      cwd: tmpdir(),
      env: process.env,
      timeoutMs: 300,
    })
    expect(result.timedOut).toBe(true)
    expect(result.ok).toBe(false)
    const pids = pidsIn(result.stdout)
    expect(pids).toHaveLength(2)
    await until(() => pids.every((pid) => !alive(pid)))
  })

  test("an abort kills the tree; a stray left by a finished command neither hangs the caller nor survives it", async () => {
    const controller = new AbortController()
    const running = Proc.run("sh", ["-c", "sleep 1000 & echo $!; wait"], { cwd: tmpdir(), env: process.env, signal: controller.signal })
    setTimeout(() => controller.abort(), 200)
    const result = await running
    expect(result.aborted).toBe(true)
    await until(() => pidsIn(result.stdout).every((pid) => !alive(pid)))

    const stray = await Proc.run("sh", ["-c", "sleep 1000 & echo $!"], { cwd: tmpdir(), env: process.env, exitGraceMs: 200 })
    expect(stray.code).toBe(0)
    await until(() => pidsIn(stray.stdout).every((pid) => !alive(pid)))
  })

  test("a program given the terminal stays in our process group (a background group reading it would stop) and ends in a result", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "air-terminal-"))
    try {
      const ours = execFileSync("ps", ["-o", "pgid=", "-p", String(process.pid)], { encoding: "utf8" }).trim()
      const r = await Proc.run("sh", ["-c", `ps -o pgid= -p $$ > ${dir}/pgid; exit 3`], { cwd: dir, env: process.env, terminal: true })
      expect(r).toMatchObject({ ok: false, code: 3, stdout: "" })
      expect((await readFile(path.join(dir, "pgid"), "utf8")).trim()).toBe(ours)
      const editor = Proc.runSync(`echo edited > "$FILE"`, [], { shell: true, terminal: true, timeoutMs: 0, env: { ...process.env, FILE: `${dir}/plan.md` } })
      expect(editor).toMatchObject({ ok: true, code: 0 })
      expect(await readFile(path.join(dir, "plan.md"), "utf8")).toBe("edited\n")
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  test("the synchronous probe: its output, a timeout that kills, a missing program, a failing exit — all results", () => {
    const ok = Proc.runSync("sh", ["-c", "echo out; echo err >&2"], { env: process.env, timeoutMs: 10_000 })
    expect(ok).toMatchObject({ ok: true, code: 0, stdout: "out\n", stderr: "err\n", timedOut: false })
    // The command marks the end of its 30 s sleep, 150 times its bound: no mark means it was stopped, not waited for.
    const mark = path.join(tmpdir(), `air-stall-ended-${process.pid}`)
    const slow = Proc.runSync("sh", ["-c", `sleep 30; touch ${mark}`], { env: process.env, timeoutMs: 200 })
    expect(slow).toMatchObject({ ok: false, timedOut: true, signal: "SIGKILL" })
    expect(existsSync(mark), "the runner waited for the sleep to end").toBe(false)
    const missing = Proc.runSync("no-such-program-air", [], { env: process.env, timeoutMs: 10_000 })
    expect(missing.ok).toBe(false)
    expect(missing.spawnError).toMatch(/ENOENT/)
    expect(Proc.runSync("sh", ["-c", "exit 3"], { env: process.env, timeoutMs: 10_000 })).toMatchObject({ ok: false, code: 3 })
  })

  test("output over the cap keeps its head and its tail; a missing program is a spawnError, not a throw", async () => {
    const result = await Proc.run("sh", ["-c", "echo FIRST; seq 1 100000; echo LAST"], { cwd: tmpdir(), env: process.env, outputCap: 4096 })
    expect(result.ok).toBe(true)
    expect(result.truncated).toBe(true)
    expect(result.output.length).toBeLessThan(4096 + 200)
    expect(result.output).toMatch(/^FIRST\n1\n/)
    expect(result.output).toMatch(/bytes of output dropped/)
    expect(result.output).toMatch(/100000\nLAST\n$/)

    const missing = await Proc.run("no-such-program-air", [], { cwd: tmpdir(), env: process.env })
    expect(missing.ok).toBe(false)
    expect(missing.spawnError).toMatch(/ENOENT/)
  })

  test("a SIGTERM to our own process kills the groups it started before it ends", async () => {
    const pidFile = path.join(tmpdir(), `air-exit-${process.pid}.pid`)
    const parent = spawn(bunBinary(), [path.join(import.meta.dirname, "process-exit-child.ts"), pidFile], { stdio: "ignore" })
    await until(async () => pidsIn(await readFile(pidFile, "utf8").catch(() => "")).length === 1)
    const [child] = pidsIn(await readFile(pidFile, "utf8"))
    expect(alive(child!)).toBe(true)
    const ended = new Promise<NodeJS.Signals | null>((resolve) => parent.on("exit", (_code, signal) => resolve(signal)))
    parent.kill("SIGTERM")
    expect(await ended).toBe("SIGTERM")
    await until(() => !alive(child!))
    await rm(pidFile, { force: true })
  })

  test("stdin is given, the environment is exactly the one passed", async () => {
    const result = await Proc.run("sh", ["-c", 'cat; printf "%s" "${AIR_ONLY-unset}${HOME-nohome}"'], {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH, AIR_ONLY: "x" },
      input: "in|",
    })
    expect(result.stdout).toBe("in|xnohome")
  })
})

describe("the gates' processes", () => {
  let repo: CppRepo
  let scratch: string
  beforeAll(async () => {
    repo = await createCppRepo()
    scratch = await mkdtemp(path.join(tmpdir(), "air-proc-"))
  })
  afterAll(async () => {
    await repo?.cleanup()
    await rm(scratch, { recursive: true, force: true })
  })

  function input(taskId: string, extra: Partial<RunInput>): RunInput {
    return {
      root: repo.root,
      worktree: repo.root,
      taskId,
      base: "main",
      kind: "build",
      attempt: 1,
      evidenceDir: path.join(repo.root, ".air", "local", "evidence", taskId, "attempt-1"),
      requires: [],
      gates: [buildGate],
      // The runner's own tree handling: the sandbox (a pid namespace and a private /tmp) would hide the
      // pids and the fake tools these tests look at; test/sandbox covers commands inside it.
      sandbox: "off",
      ...extra,
    }
  }

  const hanging = (pidFile: string) => `sleep 1000 & echo $! > ${pidFile}; sleep 1000 & echo $! >> ${pidFile}; wait`

  test("a build command that hangs with children: the whole tree is gone after the timeout", async () => {
    const pidFile = path.join(scratch, "hang.pids")
    const report = await runGates(input("hang", { toolchain: { schemaVersion: 1, build: [hanging(pidFile)], timeoutMs: 400 } }))
    expect(report.failedGate).toBe("build")
    expect(report.message).toContain("did not finish within 0.4 s")
    const pids = pidsIn(await readFile(pidFile, "utf8"))
    expect(pids).toHaveLength(2)
    await until(() => pids.every((pid) => !alive(pid)))
  })

  test("the run aborted mid-gate: the gate's processes are killed and the run rejects with Aborted", async () => {
    const pidFile = path.join(scratch, "abort.pids")
    const controller = new AbortController()
    const running = runGates(input("abort", { signal: controller.signal, toolchain: { schemaVersion: 1, build: [hanging(pidFile)], timeoutMs: 600_000 } }))
    await until(async () => pidsIn(await readFile(pidFile, "utf8").catch(() => "")).length === 2)
    controller.abort()
    const error = await running.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GateError)
    expect((error as GateError).tag).toBe("Aborted")
    const pids = pidsIn(await readFile(pidFile, "utf8"))
    await until(() => pids.every((pid) => !alive(pid)))
  })

  test("cppcheck crashing (a signal, or a wrapper's exit 139) is ToolCrashed with a clear message, not a hang or a verdict", async () => {
    const wt = await Worktrees.create(repo.root, "crash", "main")
    const ws = repo.at(wt.path)
    await ws.write("src/calc.cpp", CALC_CPP + "\nint mul(int a, int b) { return a * b; }\n")
    await ws.commitAll("mul")
    for (const [name, body] of [
      ["segv", "#!/bin/sh\nkill -SEGV $$\n"],
      ["exit139", "#!/bin/sh\necho 'Segmentation fault (core dumped)' >&2\nexit 139\n"],
    ] as const) {
      const fake = path.join(scratch, `cppcheck-${name}`)
      await writeFile(fake, body)
      await chmod(fake, 0o755)
      const error = await runGates(
        input("crash", {
          worktree: wt.path,
          kind: "code",
          requires: ["diff"],
          gates: [diffGate, analysisGate],
          toolchain: { schemaVersion: 1, analysis: { cppcheck: { binary: fake } } },
        }),
      ).catch((e: unknown) => e)
      expect(error, name).toBeInstanceOf(GateError)
      expect((error as GateError).tag).toBe("ToolCrashed")
      expect((error as GateError).message).toMatch(/cppcheck crashed/)
      expect((error as GateError).message).toContain("src/calc.cpp")
    }
  })
})

describe("a child kept in our process group (the engine launcher)", () => {
  test("is stopped at its timeout, and a kill of our group would take it along; a stray holding the pipes does not hang us", async () => {
    const result = await Proc.run("sh", ["-c", "echo $$; ps -o pgid= -p $$; exec sleep 1000"], { cwd: tmpdir(), env: process.env, timeoutMs: 300, ownGroup: false, killGraceMs: 200 })
    expect(result.timedOut).toBe(true)
    const [pid, pgid] = pidsIn(result.stdout)
    expect(pgid).toBe(Number(execFileSync("ps", ["-o", "pgid=", "-p", String(process.pid)], { encoding: "utf8" }).trim()))
    await until(() => !alive(pid!))

    // The leader exits at once; its child keeps stdout open and is not ours to kill (same group as the test).
    const stray = await Proc.run("sh", ["-c", "sleep 3 & echo $!"], { cwd: tmpdir(), env: process.env, ownGroup: false, exitGraceMs: 100 })
    expect(stray.code).toBe(0)
    expect(pidsIn(stray.stdout)).toHaveLength(1)
  }, 30_000)
})
