import { spawn, type ChildProcess } from "node:child_process"
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { Farm } from "../../src/scheduler/runtime/toolchain/farm.ts"
import { FarmDoctor } from "../../src/scheduler/runtime/toolchain/farm-doctor.ts"
import { farmDegradedEvent } from "../../src/scheduler/runtime/gates/farm-event.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { taskBranches, firstGates } from "../runtime/task-branch.ts"
import { writeFileSync, mkdirSync } from "node:fs"

/** Sources with some templates, so a build of twelve lasts past its first remote compile while a daemon is killed. */
function sources(count: number, salt: string): Record<string, string> {
  const files: Record<string, string> = {
    "CMakeLists.txt": `cmake_minimum_required(VERSION 3.16)\nproject(farm CXX)\nfile(GLOB SRC src/*.cpp)\nadd_library(farm STATIC \${SRC})\n`,
  }
  for (let i = 0; i < count; i++)
    files[`src/part${i}.cpp`] =
      `#include <map>\n#include <string>\n#include <vector>\n// ${salt}\n` +
      `int part${i}(const std::string& s) { std::map<std::string, std::vector<int>> m; m[s].push_back(${i}); return int(m.size()) + ${i}; }\n`
  return files
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })
}

interface Daemon {
  port: number
  log: string
  child: ChildProcess
}

/** A real distccd on 127.0.0.1; as root it runs as nobody (distccd will not run compiles as root). */
async function startDaemon(dir: string, name: string): Promise<Daemon> {
  const port = await freePort()
  const log = path.join(dir, `${name}.log`)
  const user = process.getuid?.() === 0 ? ["--user", "nobody"] : []
  const child = spawn("distccd", ["--daemon", "--no-detach", "--allow", "127.0.0.1", "--listen", "127.0.0.1", "--port", String(port), "--jobs", "2", "--log-file", log, "--log-level", "info", ...user], { stdio: "ignore", detached: true })
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => (socket.end(), resolve(true)))
      socket.on("error", () => resolve(false))
    })
    if (up) return { port, log, child }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`distccd on ${port} did not start`)
}

/** distccd preforks its workers: the whole process group dies, or the workers go on answering on the port. */
function stop(daemon: Daemon): void {
  try {
    process.kill(-daemon.child.pid!, "SIGKILL")
  } catch {}
}

async function compilesSeen(daemon: Daemon): Promise<number> {
  const text = await readFile(daemon.log, "utf8").catch(() => "")
  return (text.match(/COMPILE_OK/g) ?? []).length
}

describe("a distcc farm behind the compiler cache (two real distccd)", () => {
  let dir: string
  let repo: CppRepo
  let one: Daemon
  let two: Daemon
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "air-farm-"))
    await chmod(dir, 0o777)
    ;[one, two] = await Promise.all([startDaemon(dir, "one"), startDaemon(dir, "two")])
    repo = await createCppRepo({ empty: true, files: sources(12, "base") })
  }, 60_000)
  afterAll(async () => {
    for (const daemon of [one, two]) if (daemon) stop(daemon)
    await repo?.cleanup()
    await rm(dir, { recursive: true, force: true })
  })
  const { task } = taskBranches(() => repo, { commit: true })

  function rules(cacheDir: string, hosts: Daemon[]): Toolchain.RulesInput {
    return {
      schemaVersion: 1,
      build: ["cmake -S . -B .air-build -G Ninja", "cmake --build .air-build"],
      analysis: { cppcheck: { enabled: false } },
      cache: { dir: cacheDir },
      farm: { hosts: hosts.map((d) => ({ host: "127.0.0.1", port: d.port, slots: 2 })) },
    }
  }

  test("the build's compiles go to both daemons, through ccache", async () => {
    const { wt } = await task("farm-on", (ws) => ws.write("src/part0.cpp", sources(1, "task one")["src/part0.cpp"]!))
    const report = await firstGates(repo.root, "farm-on", wt.path, { requires: ["build"], toolchain: rules(".air/local/ccache-on", [one, two]) })
    expect(report.passed, report.message).toBe(true)
    const build = report.gates.find((g) => g.gate === "build")
    expect(build?.summary).toMatch(/farm: \d+ compile\(s\) sent/)
    expect(build?.summary).toMatch(/ccache/)
    const seen = Farm.Seen.parse(JSON.parse(await readFile(path.join(repo.root, ".air/local/evidence/farm-on/attempt-1/farm.json"), "utf8")))
    expect(Object.keys(seen.remote).sort()).toEqual([`127.0.0.1:${one.port}`, `127.0.0.1:${two.port}`].sort())
    expect(await compilesSeen(one)).toBeGreaterThan(0)
    expect(await compilesSeen(two)).toBeGreaterThan(0)
    // Every host answered: nothing to record.
    expect(await farmDegradedEvent("farm-on", path.join(repo.root, ".air/local/evidence/farm-on/attempt-1"))).toBeUndefined()
  }, 120_000)

  test("a daemon killed mid-build: the build still passes, its compiles go on elsewhere (the other daemon, or locally), farm.degraded names it", async () => {
    const { wt } = await task("farm-kill", async (ws) => {
      for (const [file, text] of Object.entries(sources(12, "task kill"))) if (file.startsWith("src/")) await ws.write(file, text)
    })
    const before = await compilesSeen(two)
    let settled = false
    const gates = firstGates(repo.root, "farm-kill", wt.path, { requires: ["build"], toolchain: rules(".air/local/ccache-kill", [one, two]) }).finally(() => (settled = true))
    // Killed once it has done one of this build's compiles: the rest of its share must fall back.
    while (!settled && (await compilesSeen(two)) === before) await new Promise((r) => setTimeout(r, 50))
    stop(two)
    const report = await gates
    expect(report.passed, report.message).toBe(true)
    const seen = Farm.Seen.parse(JSON.parse(await readFile(path.join(repo.root, ".air/local/evidence/farm-kill/attempt-1/farm.json"), "utf8")))
    expect(seen.failedHosts).toContain(`127.0.0.1:${two.port}`)
    expect(report.gates.find((g) => g.gate === "build")?.summary).toMatch(new RegExp(`127\\.0\\.0\\.1:${two.port} failed`))
    // What the interpreter records from the gate run's evidence: farm.degraded naming the lost host.
    const degraded = await farmDegradedEvent("farm-kill", path.join(repo.root, ".air/local/evidence/farm-kill/attempt-1"))
    expect(degraded).toMatchObject({ type: "farm.degraded", taskId: "farm-kill", hosts: [`127.0.0.1:${two.port}`] })
    // Its share went on elsewhere: distcc 3.4 sends a compile whose host refused to the next host, and compiles
    // locally only when no host is left (a compile lost mid-transfer also retries locally).
    const farmLog = await readFile(path.join(repo.root, ".air/local/evidence/farm-kill/attempt-1/farm.log"), "utf8")
    expect(farmLog).toMatch(new RegExp(`connect to 127\\.0\\.0\\.1:${two.port} failed`))
    expect((seen.remote[`127.0.0.1:${one.port}`] ?? 0) + seen.localFallbacks, farmLog).toBeGreaterThan(0)
  }, 120_000)

  test("every host down from the start: each compile falls back to the local compiler, the build passes, farm.degraded names them all", async () => {
    const { wt } = await task("farm-none", (ws) => ws.write("src/part1.cpp", sources(2, "task none")["src/part1.cpp"]!))
    const dead = [await freePort(), await freePort()]
    const toolchain: Toolchain.RulesInput = { ...rules(".air/local/ccache-none", []), farm: { hosts: dead.map((port) => ({ host: "127.0.0.1", port, slots: 2 })) } }
    const report = await firstGates(repo.root, "farm-none", wt.path, { requires: ["build"], toolchain })
    expect(report.passed, report.message).toBe(true)
    const evidence = path.join(repo.root, ".air/local/evidence/farm-none/attempt-1")
    const seen = Farm.Seen.parse(JSON.parse(await readFile(path.join(evidence, "farm.json"), "utf8")))
    const farmLog = await readFile(path.join(evidence, "farm.log"), "utf8")
    expect(Object.values(seen.remote).reduce((a, b) => a + b, 0), farmLog).toBe(0)
    expect(seen.localFallbacks).toBeGreaterThan(0)
    expect(seen.failedHosts.sort()).toEqual(dead.map((port) => `127.0.0.1:${port}`).sort())
    const degraded = await farmDegradedEvent("farm-none", evidence)
    expect(degraded).toMatchObject({ type: "farm.degraded", taskId: "farm-none" })
    expect([...(degraded?.hosts ?? [])].sort()).toEqual(dead.map((port) => `127.0.0.1:${port}`).sort())
  }, 120_000)

  test("doctor: a live host passes, a host answering garbage and a dead port are each said so", async () => {
    const garbage = net.createServer((socket) => {
      socket.once("data", () => socket.end("HTTP/1.0 200 OK\r\n\r\nthis is not distcc\r\n"))
    })
    await new Promise<void>((resolve) => garbage.listen(0, "127.0.0.1", () => resolve()))
    const garbagePort = (garbage.address() as net.AddressInfo).port
    const deadPort = await freePort()
    const root = await mkdtemp(path.join(os.tmpdir(), "air-farm-doctor-"))
    try {
      mkdirSync(path.join(root, ".air/shared/rules"), { recursive: true })
      writeFileSync(
        path.join(root, Toolchain.RULES_PATH),
        JSON.stringify({ schemaVersion: 1, farm: { hosts: [{ host: "127.0.0.1", port: one.port }, { host: "127.0.0.1", port: garbagePort }, { host: "127.0.0.1", port: deadPort }] } }),
      )
      const checks = await FarmDoctor.checks(root)
      const by = (port: number) => checks.find((c) => c.name === `farm 127.0.0.1:${port}`)
      expect(by(one.port)).toMatchObject({ ok: true })
      expect(by(garbagePort)).toMatchObject({ ok: false })
      expect(by(garbagePort)?.detail).toMatch(/not distcc's protocol/)
      expect(by(deadPort)?.detail).toMatch(/connection refused/)
    } finally {
      garbage.close()
      await rm(root, { recursive: true, force: true })
    }
  }, 60_000)

  test("toolchain.json: a misspelt farm key is refused with the nearest known one", () => {
    expect(() => Toolchain.parse(JSON.stringify({ schemaVersion: 1, farm: { hosts: [{ host: "h", prot: 3632 }] } }))).toThrow(/prot.*port/)
  })
})
