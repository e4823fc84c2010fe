import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { readWithBackup, writeFileAtomicSync } from "../../src/scheduler/runtime/store/atomic"
import { acquireLock, LockHeldError } from "../../src/scheduler/runtime/store/lock"
import { Store } from "../../src/scheduler/runtime/store/store"
import { ev, graphOf, steps, task } from "./fixtures"
import { TEST_CONFIG } from "./simulate"

let root: string
beforeEach(() => {
  root = fs.mkdtempSync(join(tmpdir(), "air-store-"))
})
afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

const stateDir = () => join(root, "local", "state")
const eventsPath = () => join(stateDir(), "events.jsonl")
const snapshotPath = () => join(stateDir(), "scheduler-state.json")

async function startedStore(options = {}) {
  const store = await Store.open(root, options)
  for (const event of [
    ev({ type: "run.started", runId: "r1", requirement: "req", config: TEST_CONFIG }),
    ev({ type: "plan.proposed", summary: "p" }),
    ev({ type: "plan.confirmed" }),
    ev({ type: "graph.accepted", graph: graphOf(task("T-1"), task("T-2", { deps: ["T-1"] })) }),
  ]) {
    const result = store.append(event)
    if ("refused" in result) throw new Error(result.refused)
  }
  return store
}

describe("Store", () => {
  it("writes each accepted event as one numbered line before returning its commands", async () => {
    const store = await startedStore()
    const result = store.append(ev(steps.dispatched("T-1")))
    expect("seq" in result && result.seq).toBe(5)
    const lines = fs.readFileSync(eventsPath(), "utf8").trim().split("\n").map((l) => JSON.parse(l))
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5])
    expect(lines[3].type).toBe("graph.accepted")
    store.close()
  })

  it("refuses a malformed or illegal event without writing anything", async () => {
    const store = await startedStore()
    const size = fs.statSync(eventsPath()).size
    const malformed = store.append({ type: "worker.reported", at: "x" } as never)
    expect("refused" in malformed && malformed.refused).toMatch(/malformed event: taskId/)
    const illegal = store.append(ev(steps.merged("T-1")))
    expect("refused" in illegal && illegal.refused).toMatch(/not the merge in flight/)
    expect(fs.statSync(eventsPath()).size).toBe(size)
    store.close()
  })

  it("the run's local state is ignored by git from the first open: git status shows nothing of it", async () => {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" })
    git("init", "-q")
    const store = await startedStore()
    expect(fs.readFileSync(join(root, "local", ".gitignore"), "utf8")).toMatch(/^\*$/m)
    // The store's root stands for the project's .air/: nothing under local/ is offered to commit.
    expect(git("status", "--porcelain", "--untracked-files=all")).toBe("")
    expect(git("check-ignore", "-q", "local/state/events.jsonl") === "").toBe(true)
    store.close()
  })

  it("a replay starts from a snapshot these rules wrote of the same log bytes, folds only what follows, and equals the full fold", async () => {
    const store = await startedStore({ snapshotEvery: 1000 })
    store.snapshot()
    store.append(ev(steps.dispatched("T-1")))
    store.close() // the snapshot now covers every event; the next append lands after it
    const snapshot = fs.readFileSync(snapshotPath(), "utf8")
    expect(snapshot).toMatch(/^\{"schemaVersion":\d+,"seq":5,"log":"[0-9a-f]{40}","bytes":\d+,"rules":"[0-9a-f]{40}",/)
    const again = await Store.open(root, { snapshotEvery: 1000 })
    expect("seq" in again.append(ev(steps.reported("T-1")))).toBe(true)
    again.close()
    // The snapshot's position no longer ends the log: the tail is folded on top of it.
    const fast = await Store.open(root)
    const full = fast.state
    fast.close()
    const careful = await Store.open(root, { verify: "full" })
    expect(careful.warnings).toEqual([])
    expect(full).toEqual(careful.state)
    expect(full.tasks[0]!.status).toBe("gating")
    careful.close()
    // A snapshot from other rules (another version) is not started from: the whole log is folded.
    const other = fs.readFileSync(snapshotPath(), "utf8").replace(/"rules":"[0-9a-f]{40}"/, `"rules":"${"0".repeat(40)}"`)
    fs.writeFileSync(snapshotPath(), other)
    const refolded = await Store.open(root)
    expect(refolded.state).toEqual(full)
    refolded.close()
  })

  it("a refusal shows an invisible character of the event escaped", async () => {
    const store = await startedStore()
    const refused = store.append(ev(steps.dispatched("\uFEFFT-1")))
    expect("refused" in refused && refused.refused).toContain("\\uFEFFT-1")
    expect("refused" in refused && refused.refused).not.toContain("\uFEFF")
    store.close()
  })

  it("reopens to the same state, rebuilt from the log and matching the snapshot", async () => {
    const store = await startedStore()
    store.append(ev(steps.dispatched("T-1")))
    const state = store.state
    store.close()
    const again = await Store.open(root)
    expect(again.warnings).toEqual([])
    expect(again.state).toEqual(state)
    expect(again.seq).toBe(5)
    again.close()
  })

  it("writes the snapshot in ASCII (non-ASCII text escaped) and reopens to the same state, resuming from it", async () => {
    const store = await Store.open(root)
    for (const event of [ev({ type: "run.started", runId: "r1", requirement: "给计算器加上 avg3 ↔ 😀", config: TEST_CONFIG }), ev({ type: "plan.proposed", summary: "方案 é" })]) store.append(event)
    const state = store.state
    store.close()
    const text = fs.readFileSync(snapshotPath(), "utf8")
    expect(text).toMatch(/^[\x00-\x7f]*$/)
    expect(text).toContain("\\u7ed9")
    const again = await Store.open(root)
    expect(again.warnings).toEqual([])
    expect(again.state).toEqual(state)
    expect(again.state.requirement).toBe("给计算器加上 avg3 ↔ 😀")
    again.close()
  })

  it("snapshots every N events with the seq it reflects, keeping one backup", async () => {
    const store = await startedStore({ snapshotEvery: 2 })
    const snap = JSON.parse(fs.readFileSync(snapshotPath(), "utf8"))
    expect(snap).toMatchObject({ schemaVersion: 1, seq: 4, log: expect.stringMatching(/^[0-9a-f]{40}$/), digest: expect.stringMatching(/^[0-9a-f]{40}$/) })
    expect(fs.existsSync(`${snapshotPath()}.bak`)).toBe(true)
    store.close()
  })

  it("drops a torn last line with a warning and appends cleanly after it", async () => {
    const store = await startedStore()
    store.close()
    fs.appendFileSync(eventsPath(), '{"seq":5,"type":"task.dispatched","taskId":"T-1","ro')
    const again = await Store.open(root)
    expect(again.warnings).toEqual([expect.stringMatching(/the last line .* was cut off by a crash and is dropped/)])
    expect(again.seq).toBe(4)
    const result = again.append(ev(steps.dispatched("T-1")))
    expect("seq" in result && result.seq).toBe(5)
    again.close()
    const lines = fs.readFileSync(eventsPath(), "utf8").trim().split("\n")
    expect(lines.map((l) => JSON.parse(l).seq)).toEqual([1, 2, 3, 4, 5])
  })

  it("skips a damaged line in the middle with a warning, never silently", async () => {
    const store = await startedStore()
    store.close()
    const lines = fs.readFileSync(eventsPath(), "utf8").split("\n")
    lines[1] = "{garbage"
    fs.writeFileSync(eventsPath(), lines.join("\n"))
    const again = await Store.open(root)
    expect(again.warnings.some((w) => /damaged and skipped/.test(w))).toBe(true)
    again.close()
  })

  it("recovers a corrupt snapshot from the log, with a warning, and keeps the good backup", async () => {
    const store = await startedStore({ snapshotEvery: 1 })
    const state = store.state
    store.close()
    fs.writeFileSync(snapshotPath(), "{not json")
    const again = await Store.open(root)
    expect(again.state).toEqual(state)
    expect(again.warnings.join("\n")).toMatch(/scheduler-state.json is damaged and was ignored/)
    expect(again.warnings.join("\n")).toMatch(/using its backup/)
    again.close()
    expect(JSON.parse(fs.readFileSync(snapshotPath(), "utf8")).seq).toBe(4)
    expect(JSON.parse(fs.readFileSync(`${snapshotPath()}.bak`, "utf8")).seq).toBeGreaterThan(0)
  })

  it("detects a snapshot whose state was altered, through its digest, and falls back to the backup", async () => {
    const store = await startedStore()
    const state = store.state
    store.close()
    const text = fs.readFileSync(snapshotPath(), "utf8")
    fs.writeFileSync(snapshotPath(), text.replace('"requirement":"req"', '"requirement":"tampered"'))
    const again = await Store.open(root)
    expect(again.warnings.join("\n")).toMatch(/scheduler-state.json is damaged and was ignored: its state does not match its digest/)
    expect(again.warnings.join("\n")).toMatch(/using its backup/)
    expect(again.state).toEqual(state)
    again.close()
  })

  it("accepts a plain { schemaVersion, seq, state } snapshot and compares it in full", async () => {
    const store = await startedStore()
    const state = store.state
    store.close()
    fs.writeFileSync(snapshotPath(), JSON.stringify({ schemaVersion: 1, seq: 4, state }))
    const again = await Store.open(root)
    expect(again.warnings).toEqual([])
    again.close()
    fs.writeFileSync(snapshotPath(), JSON.stringify({ schemaVersion: 1, seq: 4, state: { ...state, requirement: "other" } }))
    const third = await Store.open(root)
    expect(third.warnings).toEqual([expect.stringMatching(/at seq 4 does not match the log/)])
    third.close()
  })

  it("says so when the snapshot was made from another log, and trusts the log", async () => {
    const store = await startedStore()
    store.close()
    const log = fs.readFileSync(eventsPath(), "utf8")
    fs.writeFileSync(eventsPath(), log.replace('"requirement":"req"', '"requirement":"other"'))
    const again = await Store.open(root)
    expect(again.warnings).toEqual([expect.stringMatching(/at seq 4 does not match the log/)])
    expect(again.state.requirement).toBe("other")
    again.close()
    const reopened = await Store.open(root, { verify: "full" })
    expect(reopened.warnings).toEqual([])
    reopened.close()
  })

  it("keeps a second process out with a lock, and takes over the lock of a dead one with a warning", async () => {
    const store = await startedStore()
    await expect(Store.open(root, { lockTimeoutMs: 50 })).rejects.toBeInstanceOf(LockHeldError)
    store.close()
    fs.writeFileSync(join(stateDir(), "lock"), JSON.stringify({ pid: 2 ** 22 + 12345, host: (await import("node:os")).hostname(), at: "earlier", token: "t" }))
    const again = await Store.open(root)
    expect(again.warnings).toEqual([expect.stringMatching(/took over a stale lock .* is gone/)])
    again.close()
    expect(fs.existsSync(join(stateDir(), "lock"))).toBe(false)
  })
})

describe("writeFileAtomic and the lock", () => {
  it("replaces a file whole and keeps the previous version as .bak", () => {
    const path = join(root, "a", "b.json")
    writeFileAtomicSync(path, "one")
    writeFileAtomicSync(path, "two")
    expect(fs.readFileSync(path, "utf8")).toBe("two")
    expect(fs.readFileSync(`${path}.bak`, "utf8")).toBe("one")
    expect(fs.readdirSync(join(root, "a")).sort()).toEqual(["b.json", "b.json.bak"])
  })

  it("reads the backup when the file is damaged, and says so", () => {
    const path = join(root, "c.json")
    writeFileAtomicSync(path, '{"v":1}')
    writeFileAtomicSync(path, '{"v":2}')
    fs.writeFileSync(path, "{")
    const read = readWithBackup(path, (t) => JSON.parse(t))
    expect(read.value).toEqual({ v: 1 })
    expect(read.warnings.join()).toMatch(/damaged/)
  })

  it("waits for a lock held by a live process, then fails naming the holder", async () => {
    const lock = await acquireLock(join(root, "lock"))
    const error = await acquireLock(join(root, "lock"), { timeoutMs: 30 }).catch((e) => e)
    expect(error).toBeInstanceOf(LockHeldError)
    expect(String(error.message)).toContain(`process ${process.pid}`)
    lock.release()
    const next = await acquireLock(join(root, "lock"))
    next.release()
  })
})

describe("snapshots written by an earlier version", () => {
  it("a snapshot from before merge batches (one merge in flight or null, no splits) opens without a warning and equals the fold", async () => {
    const here = join(__dirname, "..", "fixtures")
    const dir = fs.mkdtempSync(join(tmpdir(), "air-old-snapshot-"))
    try {
      fs.cpSync(join(here, "recorded-run", ".air"), join(dir, ".air"), { recursive: true })
      const old = fs.readFileSync(join(here, "old-snapshots", "recorded-run-before-batches.json"), "utf8")
      expect(old).toContain('"merging":null')
      expect(old).not.toContain("mergeSplits")
      fs.writeFileSync(join(dir, ".air", "local", "state", "scheduler-state.json"), old)
      const store = await Store.open(join(dir, ".air"))
      try {
        expect(store.warnings).toEqual([])
        expect([store.state.merging, store.state.mergeSplits]).toEqual([[], []])
      } finally {
        await store.close()
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("a snapshot without the fields added since (finalCheck) opens without a warning and equals the fold", async () => {
    const here = join(__dirname, "..", "fixtures")
    const dir = fs.mkdtempSync(join(tmpdir(), "air-old-snapshot-"))
    try {
      fs.cpSync(join(here, "recorded-run", ".air"), join(dir, ".air"), { recursive: true })
      const old = fs.readFileSync(join(here, "old-snapshots", "recorded-run-before-finalCheck.json"), "utf8")
      expect(old).not.toContain("finalCheck")
      fs.writeFileSync(join(dir, ".air", "local", "state", "scheduler-state.json"), old)
      const store = await Store.open(join(dir, ".air"))
      try {
        expect(store.warnings).toEqual([])
        expect(store.state.finished).toEqual({ status: "done" })
        expect(store.state.finalCheck).toBeNull()
      } finally {
        await store.close()
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
