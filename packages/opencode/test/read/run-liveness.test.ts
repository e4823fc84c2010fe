import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { copyFixture } from "../cli-view/helpers"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { readStatus } from "../../src/read/status-read"
import { RunView } from "../../src/read/view"
import { ViewRender } from "../../src/read/view-render"
import { RunLiveness } from "../../src/read/run-liveness"
import { GateProgress } from "../../src/scheduler/runtime/store/gate-progress"
import { ProcessIdentity } from "../../src/scheduler/runtime/store/process-identity"
import { acquireLock } from "../../src/scheduler/runtime/store/lock"
import { RunHolder } from "../../src/scheduler/runtime/store/run-holder"
import { sweepStaleProgress } from "../../src/scheduler/runtime/gates/progress"
import { JobsFile } from "../../src/scheduler/runtime/jobs/file"

/**
 * The views' rule for what still runs (src/read/run-liveness.ts), on the recorded run cut where T-1's gates have
 * started: the run's process is the store lock's holder (or the last one recorded in holder.json), a progress file
 * counts only while its writer runs, the job holders only while the budget's writer runs. Dead processes are real
 * ones (a `sleep` started and SIGKILLed here); a reused pid is this very process named with another start time.
 */

/** A real process, started and killed: its identity names a process that is gone. */
async function deadProcess(): Promise<ProcessIdentity.Data> {
  const child = spawn("sleep", ["60"], { stdio: "ignore" })
  await new Promise((resolve) => child.once("spawn", resolve))
  const identity: ProcessIdentity.Data = { pid: child.pid!, host: hostname(), started: ProcessIdentity.startedOf(child.pid!) }
  expect(ProcessIdentity.judge(identity)).toBe("alive")
  const exited = new Promise((resolve) => child.once("exit", resolve))
  child.kill("SIGKILL")
  await exited
  return identity
}

const me = () => ProcessIdentity.self()
/** This process's pid with a start time that is not its own: what a file of a killed process looks like once its pid was handed out again. */
const reusedPid = (): ProcessIdentity.Data => ({ ...me(), started: (me().started ?? 0) + 1 })

let root: string
let cleanup: () => void
const stateDir = () => RunData.stateDir(root)

function writeLock(holder: ProcessIdentity.Data, restart?: string): void {
  writeFileSync(join(stateDir(), "lock"), JSON.stringify({ ...holder, at: "2026-11-29T09:02:00.000Z", token: "t", ...(restart ? { restart } : {}) }))
}
function writeHolderRecord(holder: ProcessIdentity.Data, restart?: string): void {
  writeFileSync(join(stateDir(), "holder.json"), JSON.stringify({ ...holder, at: "2026-11-29T09:02:00.000Z", ...(restart ? { restart } : {}) }))
}
function writeProgress(taskId: string, writer: ProcessIdentity.Data | undefined): void {
  mkdirSync(GateProgress.dir(root), { recursive: true })
  const file: GateProgress.File = { taskId, gate: "build", command: "ninja", startedAt: "2026-11-29T09:02:05.000Z", updatedAt: "2026-11-29T09:02:10.000Z", done: 4, total: 11, percent: 36, step: "Building CXX object tokenizer.cpp.o", ...(writer ? { writer } : {}) }
  writeFileSync(GateProgress.path(root, taskId), JSON.stringify(file))
}
function writeJobs(writer: ProcessIdentity.Data): void {
  const data: JobsFile.Data = { size: 3, inUse: 3, waiting: 1, peakInUse: 3, peakLoad: 1.5, holders: [{ label: "T-1: ninja", jobs: 3, since: "2026-11-29T09:02:05.000Z" }], at: "2026-11-29T09:02:05.000Z", writer }
  writeFileSync(JobsFile.path(root), JSON.stringify(data))
}
function status(now = "2026-11-29T10:00:00.000Z"): RunView.Status {
  const loaded = RunData.load(root)
  return readStatus(root, loaded.state, loaded.entries, now)
}

beforeEach(() => {
  ;({ root, cleanup } = copyFixture())
  // The log up to T-1's gates.started: the run is at work, T-1 in its gates.
  const events = RunData.eventsFile(root)
  const lines = readFileSync(events, "utf8").split("\n").filter(Boolean)
  const n = lines.findIndex((l) => JSON.parse(l).type === "gates.started") + 1
  writeFileSync(events, lines.slice(0, n).join("\n") + "\n")
  rmSync(RunData.snapshotFile(root), { force: true })
})
afterEach(() => cleanup())

describe("what still runs, as every view reads it", () => {
  test("a progress file and job holders of a process that is gone are ignored; a live writer's are kept", async () => {
    writeLock(me())
    const dead = await deadProcess()
    writeProgress("T-1", dead)
    writeJobs(dead)
    let v = status()
    expect(v.status).toBe("running")
    expect(v.tasks.find((t) => t.id === "T-1")?.state).toBe("gating")
    expect(v.tasks.find((t) => t.id === "T-1")?.progress).toBeNull()
    expect(v.budgets.jobs).toMatchObject({ size: 3, inUse: 0, waiting: 0 })
    expect(ViewRender.render(v, "en")).toContain("Build and test jobs: 0 of 3 in use")

    // A pid alive again, but another process's (its start time differs): as gone.
    writeProgress("T-1", reusedPid())
    writeJobs(reusedPid())
    v = status()
    expect(v.tasks.find((t) => t.id === "T-1")?.progress).toBeNull()
    expect(v.budgets.jobs?.inUse).toBe(0)

    writeProgress("T-1", me())
    writeJobs(me())
    v = status("2026-11-29T09:02:45.000Z")
    // The elapsed time counts from the command's start to the view's clock, not to the file's last write.
    expect(v.tasks.find((t) => t.id === "T-1")?.progress).toMatchObject({ done: 4, total: 11, elapsedMs: 40_000 })
    expect(v.budgets.jobs).toMatchObject({ inUse: 3, waiting: 1 })
  })

  test("a run whose process is gone is interrupted, with its resume command; nothing runs in the view and its times stop", async () => {
    const dead = await deadProcess()
    const resume = "aircoding run /work/proj --resume --scripted /tmp/s.json"
    writeLock(dead, resume)
    writeProgress("T-1", dead)
    writeJobs(dead)
    const v = status()
    expect(v.status).toBe("interrupted")
    expect(v.resume).toBe(resume)
    expect(v.waitingFor).toEqual([{ kind: "interrupted", resume }])
    expect(v.tasks.every((t) => !t.progress)).toBe(true)
    expect(v.budgets.jobs?.inUse).toBe(0)
    expect(v.budgets.active).toBe(0)
    // Times stop at the last event: an hour later the view says the same.
    expect(status("2026-11-29T11:00:00.000Z").tasks.map((t) => t.elapsedMs)).toEqual(v.tasks.map((t) => t.elapsedMs))
    const text = ViewRender.render(v, "en")
    expect(text).toMatch(/^Run run-20261129-0900 — interrupted$/m)
    expect(text.split("\n")).toContain(`    ${resume}`)
    expect(text).not.toMatch(/T-1: build \[4\/11\]/)
    const zh = ViewRender.render(v, "zh-CN")
    expect(zh).toContain("已中断")
    expect(zh).toContain(resume)
  })

  test("the lock's holder is judged by its start time: this very pid started at another time is gone", () => {
    writeLock(reusedPid())
    expect(status().status).toBe("interrupted")
    writeLock(me())
    expect(status().status).toBe("running")
  })

  test("with no lock, the last process recorded in holder.json decides; with neither, the log is trusted", async () => {
    expect(RunLiveness.of(root).state).toBe("unknown")
    expect(status().status).toBe("running")
    const dead = await deadProcess()
    writeHolderRecord(dead, "aircoding /work/proj --scripted /tmp/chat.json")
    const v = status()
    expect(v.status).toBe("interrupted")
    expect(v.resume).toBe("aircoding /work/proj --scripted /tmp/chat.json")
    writeHolderRecord(me())
    expect(status().status).toBe("running")
    // Without a recorded command, the headless resume of this directory.
    writeHolderRecord(dead)
    expect(status().resume).toBe(RunHolder.defaultResume(root))
  })

  test("a run that waits for the user stays waiting without a process: that is true, and the person acts", async () => {
    const events = RunData.eventsFile(root)
    const lines = readFileSync(events, "utf8").split("\n").filter(Boolean)
    writeFileSync(events, lines.slice(0, 2).join("\n") + "\n")
    writeLock(await deadProcess())
    expect(status().status).toBe("waiting")
  })

  test("stale progress files are removed by whoever finds them when their writer is known gone; a live one's stay", async () => {
    const dead = await deadProcess()
    writeProgress("T-1", dead)
    writeProgress("T-2", me())
    writeProgress("T-3", undefined)
    sweepStaleProgress(root)
    expect(existsSync(GateProgress.path(root, "T-1"))).toBe(false)
    expect(existsSync(GateProgress.path(root, "T-2"))).toBe(true)
    // A file naming no writer is judged only by the process that holds the run's store.
    expect(existsSync(GateProgress.path(root, "T-3"))).toBe(true)
    sweepStaleProgress(root, { unnamed: true })
    expect(existsSync(GateProgress.path(root, "T-3"))).toBe(false)
    expect(existsSync(GateProgress.path(root, "T-2"))).toBe(true)
  })

  test("a lock whose pid runs again as another process is taken over (its start time tells)", async () => {
    const other = spawn("sleep", ["60"], { stdio: "ignore" })
    await new Promise((resolve) => other.once("spawn", resolve))
    const path = join(stateDir(), "other.lock")
    try {
      // Another live process has the pid now: the lock names the one that started earlier.
      writeFileSync(path, JSON.stringify({ pid: other.pid, host: hostname(), started: ProcessIdentity.startedOf(other.pid!)! - 1, at: "2026-11-29T09:02:00.000Z", token: "not-ours" }))
      const lock = await acquireLock(path, { timeoutMs: 2_000 })
      expect(lock.warnings.join("\n")).toMatch(/took over a stale lock .*is gone/)
      expect(lock.info.started).toBe(me().started)
      lock.release()
      // The same live process named with its own start time holds the lock: we wait, then are told who holds it.
      writeFileSync(path, JSON.stringify({ pid: other.pid, host: hostname(), started: ProcessIdentity.startedOf(other.pid!), at: "2026-11-29T09:02:00.000Z", token: "theirs" }))
      await expect(acquireLock(path, { timeoutMs: 300 })).rejects.toThrow(new RegExp(`held by process ${other.pid}`))
    } finally {
      other.kill("SIGKILL")
    }
  })
})
