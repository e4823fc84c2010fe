import { spawn, type ChildProcess } from "node:child_process"
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { Baseline } from "../../src/scheduler/runtime/integration/baseline.ts"
import { Worktrees } from "../../src/scheduler/runtime/git/worktree.ts"
import { RemoteStore } from "../../src/scheduler/runtime/results/remote.ts"
import { ResultStore } from "../../src/scheduler/runtime/results/store.ts"
import { ResultEntry } from "../../src/scheduler/runtime/results/entry.ts"
import { Toolchain } from "../../src/scheduler/runtime/toolchain/index.ts"
import { createCppRepo, type CppRepo } from "../runtime/cpp-repo.ts"
import { PLANTED_FILES, PLANTED_RULES } from "./planted.ts"

const run = promisify(execFile)

/** A real redis-server on 127.0.0.1, on a free port, with no persistence; resolves once it answers. */
async function startRedis(): Promise<{ port: number; child: ChildProcess }> {
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" })
  const end = Date.now() + 15_000
  while (Date.now() < end) {
    const replies = await RemoteStore.Resp.call("127.0.0.1", port, [["PING"]]).catch(() => undefined)
    if (replies?.[0] === "PONG") return { port, child }
    await new Promise((r) => setTimeout(r, 100))
  }
  child.kill()
  throw new Error("redis-server did not start")
}

/**
 * A results store beyond one machine: two separate checkouts of one project share a real Redis; the second
 * reuses the first's baseline and runs nothing; a tampered entry is refused; a read-only machine writes
 * nothing; an HTTP cache with GET/PUT works the same.
 */
describe("a results store shared between checkouts", () => {
  let redis: { port: number; child: ChildProcess }
  let first: CppRepo
  let second: string
  let rules: Toolchain.Rules

  beforeAll(async () => {
    redis = await startRedis()
    const remote = `redis://127.0.0.1:${redis.port}`
    const json = { ...PLANTED_RULES, cache: { tool: "none", results: { ...PLANTED_RULES.cache.results, remote } } }
    rules = Toolchain.parse(JSON.stringify(json))
    first = await createCppRepo({ empty: true, files: { ...PLANTED_FILES, [Toolchain.RULES_PATH]: JSON.stringify(json) } })
    second = await mkdtemp(path.join(tmpdir(), "air-second-"))
    await run("git", ["clone", "--quiet", first.root, second])
    await Worktrees.ensureExcluded(first.root)
  }, 60_000)
  afterAll(async () => {
    redis?.child.kill()
    await first?.cleanup()
    if (second) await rm(second, { recursive: true, force: true })
  })

  test("the second checkout reuses the first's results through Redis and runs no test", async () => {
    const built = await Baseline.run(first.root, "main")
    expect(built).toMatchObject({ status: "passed", tests: { calc_test: "passed", data_test: "passed" } })
    expect(built.reused).toBeUndefined()
    const reused = await Baseline.run(second, "main")
    expect(reused.reused).toMatchObject({ commit: built.commit, tests: 2, source: `redis://127.0.0.1:${redis.port}` })
    expect(reused.tests).toEqual(built.tests)
    // Nothing was built or tested there: no log of a command, the entry now kept locally too.
    expect(reused.message).toMatch(/^reused: same build inputs as/)
    expect((await ResultStore.summary(second, rules)).entries).toBe(1)
  }, 120_000)

  test("a tampered remote entry is refused (checksum), and a read-only machine writes nothing", async () => {
    const key = "a".repeat(64)
    const body: ResultEntry.Body = {
      version: 1,
      key,
      commit: "c0ffee",
      at: new Date().toISOString(),
      producer: { by: "test", host: "ci", tools: { cmake: "cmake version 3.25.1" } },
      build: { ms: 1000 },
      test: { ms: 1000, source: "junit", tests: { calc_test: "passed" } },
    }
    const sealed = ResultEntry.seal(body)
    const tampered = JSON.stringify({ ...sealed, test: { ...sealed.test, tests: { calc_test: "passed", extra: "passed" } } })
    expect(await RemoteStore.open(`redis://127.0.0.1:${redis.port}`).put(key, tampered)).toBe(true)
    const fresh = await mkdtemp(path.join(tmpdir(), "air-fresh-"))
    try {
      const store = ResultStore.open(fresh, rules)
      expect(await store.get(key, "test")).toBeUndefined()
      const readOnly = ResultStore.open(fresh, rules, { ...process.env, [ResultStore.MODE_ENV]: "read-only" })
      await readOnly.put({ ...body, key: "b".repeat(64) })
      expect(await RemoteStore.open(`redis://127.0.0.1:${redis.port}`).get("b".repeat(64))).toBeUndefined()
      expect(existsSync(path.join(fresh, ".air/local/results/ac/bb", `${"b".repeat(64)}.json`))).toBe(true)
      await store.put({ ...body, key: "c".repeat(64) })
      expect(await RemoteStore.open(`redis://127.0.0.1:${redis.port}`).get("c".repeat(64))).toMatch(/"checksum"/)
    } finally {
      await rm(fresh, { recursive: true, force: true })
    }
  })

  test("an HTTP cache with GET and PUT (the ac/<key> layout) serves another checkout, and eviction keeps the local limit", async () => {
    const kept = new Map<string, string>()
    const server: Server = createServer((req, res) => {
      let data = ""
      req.on("data", (c) => (data += c))
      req.on("end", () => {
        if (req.method === "PUT") kept.set(req.url!, data)
        const found = kept.get(req.url!)
        res.writeHead(req.method === "PUT" ? 200 : found ? 200 : 404).end(req.method === "GET" ? (found ?? "") : "")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cache`
    const httpRules = Toolchain.parse(JSON.stringify({ schemaVersion: 1, cache: { results: { remote: url, maxSize: "1K" } } }))
    const a = await mkdtemp(path.join(tmpdir(), "air-a-"))
    const b = await mkdtemp(path.join(tmpdir(), "air-b-"))
    try {
      const body = (key: string): ResultEntry.Body => ({
        version: 1, key, commit: "c0ffee", at: new Date().toISOString(),
        producer: { by: "test", host: "ci", tools: {} }, build: { ms: 5 }, test: { ms: 5, source: "none", tests: {} },
      })
      for (const k of ["1", "2", "3", "4"]) await ResultStore.open(a, httpRules).put(body(k.repeat(64)))
      expect([...kept.keys()]).toContain(`/cache/ac/${"1".repeat(64)}`)
      const hit = await ResultStore.open(b, httpRules).get("4".repeat(64), "test")
      expect(hit?.source).toBe(url)
      // Four entries of ~450 bytes past a 1K limit: the oldest went.
      const left = await ResultStore.entries(path.join(a, ".air/local/results"))
      expect(left.length).toBeLessThan(4)
      expect(left.some((e) => e.file.includes("1".repeat(64)))).toBe(false)
    } finally {
      server.close()
      await rm(a, { recursive: true, force: true })
      await rm(b, { recursive: true, force: true })
    }
  })
})
