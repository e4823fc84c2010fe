import { spawn } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Deploy } from "../../src/scheduler/runtime/deploy/deploy"
import { DeployLock } from "../../src/scheduler/runtime/deploy/lock"
import { DeployRules } from "../../src/scheduler/runtime/deploy/rules"
import { DeploySsh } from "../../src/scheduler/runtime/deploy/ssh"
import { findBun } from "../scheduler/crash-harness"
import { connectionTo, pidfileService, startSshd, type Sshd } from "../support/sshd"

/**
 * The fence around remote steps (issue 37 item 9): AirCoding killed while the target's start script still
 * runs, then the same deploy resumed. Without the lock the resumed deploy's start raced the killed one's and
 * left two service processes in the release (the pidfile naming one of them).
 */
const asRoot = process.getuid?.() === 0
/** Long enough that the killed run's start is still running when the resumed deploy restarts the service. */
const START_S = 6

describe("deploy lock: the holder line and its verdict", () => {
  const me = { run: "r1", target: "box", deploy: 2, host: "dev", pid: 100 }
  const holder = { run: "r1", target: "box", deploy: 2, step: "restart", host: "dev", pid: 100, since: "2026-12-03T17:00:00.000Z", pgid: 4242 }
  const line = `run=r1 target=box deploy=2 step=restart host=dev pid=100 since=${encodeURIComponent(holder.since)} pgid=4242`

  it("reads the line a step writes, and nothing else", () => {
    expect(DeployLock.parseHolder(line)).toEqual(holder)
    expect(DeployLock.parseHolder(`run=a%20b ${line.slice("run=r1 ".length)}`)?.run).toBe("a b")
    for (const junk of ["", "garbage", line.replace(" pgid=4242", ""), `${line} extra=1`, line.replace("pid=100", "pid=-3"), "run=%E0%A4%A"])
      expect(DeployLock.parseHolder(junk), junk).toBeNull()
    expect(DeployLock.busyHolder({ step: "probe", command: "", code: 75, ms: 1, timedOut: false, output: `AIR-LOCK-BUSY\n${line}\n` })).toEqual(holder)
    // The script's own exit 75 is the script's, not the lock's.
    expect(DeployLock.busyHolder({ step: "smoke", command: "", code: 75, ms: 1, timedOut: false, output: "tempfail\n" })).toBeUndefined()
  })

  const rows: [DeployLock.Verdict, Partial<DeployLock.Holder>, boolean][] = [
    ["gone", { pid: 101 }, false],
    ["live", { pid: 101 }, true],
    ["ours", {}, true],
    ["live", { deploy: 3 }, true],
    ["live", { host: "elsewhere", pid: 101 }, false],
  ]
  it.each(rows)("%s: a holder %j (its pid alive here: %s)", (verdict, over, pidAlive) => {
    expect(DeployLock.judge({ ...holder, ...over }, me, () => pidAlive)).toBe(verdict)
  })
})

describe.skipIf(!asRoot)("deploy fence: a resumed deploy never races the killed one's remote step", () => {
  let sshd: Sshd
  let root: string
  let remoteDir: string
  let service: ReturnType<typeof pidfileService>
  let starts: string

  beforeAll(async () => {
    sshd = await startSshd()
    service = pidfileService(sshd.targetDir)
    remoteDir = join(sshd.targetDir, "app")
    starts = join(sshd.targetDir, "starts")
    root = mkdtempSync(join(tmpdir(), "air-deploy-fence-"))
    mkdirSync(join(root, "bin"))
    writeFileSync(join(root, "bin", "app"), service.app)
    chmodSync(join(root, "bin", "app"), 0o755)
    writeFileSync(join(root, "VERSION"), "v1\n")
  }, 30_000)

  afterAll(async () => {
    for (const pid of inRelease()) kill(pid)
    await sshd?.stop()
    if (root) rmSync(root, { recursive: true, force: true })
  })

  function kill(pid: number): void {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone
    }
  }

  const alive = (pid: number) => existsSync(`/proc/${pid}/stat`) && !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))

  /** The processes (not zombies) whose working directory is in one of the target's releases. */
  function inRelease(): number[] {
    const out: number[] = []
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue
      try {
        if (readlinkSync(`/proc/${name}/cwd`).startsWith(`${remoteDir}/`) && alive(Number(name))) out.push(Number(name))
      } catch {
        // gone, or not ours to read
      }
    }
    return out
  }

  async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
    const end = Date.now() + ms
    while (!ok()) {
      if (Date.now() > end) throw new Error(`${what} not within ${ms} ms`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  const RUN = "fence-run"

  /** The target with its own start command (the pidfile service's stop, status and smoke). */
  function targetWith(start: string, over: Partial<DeployRules.Target> = {}): DeployRules.Target {
    return DeployRules.Target.parse({
      name: "slow",
      ...connectionTo(sshd),
      artefacts: { paths: ["bin/app", "VERSION"] },
      remoteDir,
      restart: { ...service.restart, start },
      smoke: service.smoke,
      stepTimeoutMs: 60_000,
      activeWaitMs: 10_000,
      ...over,
    })
  }

  const lockSteps = (evidencePath: string) =>
    (JSON.parse(readFileSync(join(root, evidencePath, "commands.json"), "utf8")) as { step: string; output: string }[])
      .filter((c) => c.step === "lock")
      .map((c) => c.output)
      .join("\n")

  /** Processes (not zombies) whose command line names `text`. */
  function running(text: string): number[] {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
      .filter((name) => {
        try {
          return readFileSync(`/proc/${name}/cmdline`, "utf8").includes(text) && alive(Number(name))
        } catch {
          return false
        }
      })
      .map(Number)
  }

  it(`killed while a ${START_S} s start script runs on the target: the resumed deploy ends that step first, and one service runs, named by the pidfile`, async () => {
    const bun = findBun()
    expect(bun, "bun runs the deploy in a child process").not.toBeNull()
    // The start announces itself (its shell's pid) and takes START_S before the service is up.
    const target = targetWith(`echo $$ >> ${starts}; sleep ${START_S}; ${service.restart.start}`)
    const options = { root, target, n: 1, commit: "f00df00df00df00d", runId: RUN }
    const child = spawn(bun!, [join(__dirname, "deploy-child.ts"), JSON.stringify(options), "none"], { stdio: "ignore" })
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)))
    await until("the killed run's start script", () => existsSync(starts), 60_000)
    child.kill("SIGKILL")
    expect(await exited).toBe("SIGKILL")
    const killedStart = Number(readFileSync(starts, "utf8").trim())
    expect(alive(killedStart), "the killed run's start script still runs on the target").toBe(true)

    const o = await Deploy.run(options)
    expect(o).toMatchObject({ status: "passed", hashMatch: true, smoke: "passed" })
    // Every start script that began has ended (the killed one's sleep is far shorter than this bound).
    const shells = () => readFileSync(starts, "utf8").trim().split("\n").map(Number)
    await until("the start scripts' end", () => shells().every((pid) => !alive(pid)), 10 * START_S * 1000)
    const services = inRelease()
    expect(services, "service processes in the release").toHaveLength(1)
    expect(Number(readFileSync(service.pid, "utf8").trim())).toBe(services[0])

    // Nothing of the killed run is left here either: its ssh client of the step went with the master the resumed deploy ended.
    expect(running(DeploySsh.open(root, target).controlPath)).toEqual([])

    // The evidence says what the resumed deploy found and did.
    const lock = lockSteps(o.evidencePath)
    expect(lock).toContain(`probe: ${remoteDir}/.air-deploy.lock is held by step restart of deploy slow/1 (run fence-run), AirCoding pid ${child.pid} on`)
    expect(lock).toContain("that AirCoding is gone")
    expect(lock).toMatch(/ended its process group \d+ on the target \(SIGTERM\); the lock came free/)
  }, 180_000)

  it("a restart that timed out here still runs on the target: the rollback ends it first, and the previous release runs alone", async () => {
    // v2's start hangs (far beyond the 3 s step timeout); the previous release's starts at once.
    writeFileSync(join(root, "VERSION"), "v2\n")
    const hung = join(sshd.targetDir, "hung-start")
    const target = targetWith(`if [ "$(cat VERSION)" = v2 ]; then echo $$ > ${hung}; sleep 300; fi; ${service.restart.start}`, { stepTimeoutMs: 3_000 })
    const o = await Deploy.run({ root, target, n: 2, commit: "beefbeefbeefbeef", runId: RUN })
    expect(o).toMatchObject({ status: "failed", cause: "restart", rolledBack: true, previous: "1-f00df00df00d" })
    expect(o.message).toBe("the restart failed on slow (exit 124) and printed nothing")
    // Ended by the rollback, not by its own sleep (300 s).
    expect(alive(Number(readFileSync(hung, "utf8").trim()))).toBe(false)
    const services = inRelease()
    expect(services).toHaveLength(1)
    expect(Number(readFileSync(service.pid, "utf8").trim())).toBe(services[0])
    expect(readFileSync(service.running, "utf8").trim()).toBe("v1")
    const lock = lockSteps(o.evidencePath)
    expect(lock).toContain(`rollback-switch: ${remoteDir}/.air-deploy.lock is held by step restart of deploy slow/2 (run ${RUN}), AirCoding pid ${process.pid} on`)
    expect(lock).toContain("this deploy's own step, which timed out here")
    expect(lock).toMatch(/ended its process group \d+ on the target/)
  }, 120_000)

  it("a step of another live deploy holding the lock is waited for, and this step runs after it", async () => {
    const session = DeploySsh.open(root, targetWith(service.restart.start))
    const order = join(sshd.targetDir, "order")
    const log: DeploySsh.Step[] = []
    try {
      await DeploySsh.connect(session, log)
      const other = DeployLock.self({ target: "other", n: 9, runId: RUN })
      const first = DeployLock.run(session, "hold", `sleep 3; echo first >> ${order}`, log, other)
      const lockFile = join(remoteDir, DeployLock.FILE)
      await until("the other deploy's hold on the lock", () => existsSync(lockFile) && readFileSync(lockFile, "utf8").includes("step=hold"), 30_000)
      const second = await DeployLock.run(session, "after", `echo second >> ${order}`, log, DeployLock.self({ target: "slow", n: 9, runId: RUN }))
      expect((await first).code).toBe(0)
      expect(second.code).toBe(0)
      expect(readFileSync(order, "utf8")).toBe("first\nsecond\n")
      const lock = log.filter((s) => s.step === "lock").map((s) => s.output)
      expect(lock[0]).toContain("is held by step hold of deploy other/9")
      expect(lock[0]).toContain(": still running")
      expect(lock[1]).toMatch(/^waited for the holder: it let go after \d+ ms$/)
      expect(lock).toHaveLength(2)
    } finally {
      await DeploySsh.close(session)
    }
  }, 120_000)

  it("a failing smoke test that printed nothing says so, with no dangling colon", async () => {
    writeFileSync(join(root, "VERSION"), "v3\n")
    const o = await Deploy.run({ root, target: targetWith(service.restart.start, { smoke: "exit 4" }), n: 3, commit: "cafecafecafecafe", runId: RUN })
    expect(o).toMatchObject({ status: "failed", cause: "smoke", rolledBack: true })
    expect(o.message).toBe("the smoke test failed on slow (exit 4) and printed nothing")
    expect(readFileSync(service.running, "utf8").trim()).toBe("v1")
  }, 120_000)
})
