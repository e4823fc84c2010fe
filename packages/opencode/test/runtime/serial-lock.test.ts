import { existsSync } from "node:fs"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { hostname, tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { acquireLock, LockTimeout, withLock } from "../../src/scheduler/runtime/store/lock.ts"
import { Queue, Serial } from "../../src/scheduler/runtime/store/serial.ts"

describe("the serialiser", () => {
  test("work of one key runs one at a time in call order, a failure does not block the rest, other keys run alongside", async () => {
    const serial = new Serial()
    const log: string[] = []
    let running = 0
    let most = 0
    const step = (name: string, fail = false) => async () => {
      running++
      most = Math.max(most, running)
      log.push(`start ${name}`)
      await new Promise((r) => setTimeout(r, 5))
      log.push(`end ${name}`)
      running--
      if (fail) throw new Error(name)
      return name
    }
    const a = [serial.run("k", step("a1")), serial.run("k", step("a2", true)).catch((e: Error) => `failed ${e.message}`), serial.run("k", step("a3"))]
    expect(await Promise.all(a)).toEqual(["a1", "failed a2", "a3"])
    expect(log).toEqual(["start a1", "end a1", "start a2", "end a2", "start a3", "end a3"])
    expect(most).toBe(1)

    most = 0
    await Promise.all([serial.run("x", step("x")), serial.run("y", step("y"))])
    expect(most).toBe(2)
    expect(serial.busy).toBe(0)

    const queue = new Queue()
    const order: number[] = []
    await Promise.all([3, 1, 2].map((n) => queue.run(async () => {
      await new Promise((r) => setTimeout(r, n))
      order.push(n)
    })))
    expect(order).toEqual([3, 1, 2])
  })
})

describe("the lock", () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "air-lock-"))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  test("a live holder past the timeout is a LockTimeout naming the holder and what it does", async () => {
    const file = path.join(dir, "live.lock")
    await writeFile(file, JSON.stringify({ pid: process.ppid, host: hostname(), at: "earlier", token: "t", what: "merge of T-9" }))
    const error = await acquireLock(file, { timeoutMs: 100 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LockTimeout)
    expect((error as LockTimeout).message).toContain(`process ${process.ppid}`)
    expect((error as LockTimeout).message).toContain("merge of T-9")
    expect(existsSync(file)).toBe(true)
  })

  test("a lock naming this process's pid that this process does not hold is an earlier process's: taken over", async () => {
    const file = path.join(dir, "namesake.lock")
    await writeFile(file, JSON.stringify({ pid: process.pid, host: hostname(), at: "before a restart", token: "old" }))
    const lock = await acquireLock(file, { timeoutMs: 100 })
    expect(lock.warnings.join()).toMatch(/earlier process/)
    // One this process holds now is a real conflict.
    expect(await acquireLock(file, { timeoutMs: 50 }).catch((e: unknown) => e)).toBeInstanceOf(LockTimeout)
    lock.release()
    expect(existsSync(file)).toBe(false)
    expect(await withLock(file, {}, async () => existsSync(file))).toBe(true)
    expect(existsSync(file)).toBe(false)
  })
})
