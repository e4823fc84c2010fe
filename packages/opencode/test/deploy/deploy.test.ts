import { spawnSync } from "node:child_process"
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Deploy } from "../../src/scheduler/runtime/deploy/deploy"
import { DeployDoctor } from "../../src/scheduler/runtime/deploy/doctor"
import { DeployRules } from "../../src/scheduler/runtime/deploy/rules"
import { DeploySsh } from "../../src/scheduler/runtime/deploy/ssh"
import { findBun } from "../scheduler/crash-harness"
import { DeployStep } from "../../src/scheduler/runtime/deploy/step"
import { FinalCheck } from "../../src/scheduler/runtime/integration/final-check"
import { transition } from "../../src/scheduler/core/machine"
import type { SchedulerState } from "../../src/scheduler/core/state"
import type { EventInput } from "../../src/scheduler/runtime/ports"
import { apply, complete, graphOf, passFinalReview, started, task } from "../scheduler/fixtures"
import { untilBeforeStallEnds } from "../support/stall"
import { connectionTo, freePort, pidfileService, startSshd, type Sshd } from "../support/sshd"

/**
 * The deploy against a real OpenSSH server on 127.0.0.1 (a throwaway host key and user key), a target dir
 * standing for the machine, and a small service under a pidfile restarted by the plain-commands preset.
 */
const asRoot = process.getuid?.() === 0

describe.skipIf(!asRoot)("deploy over ssh", () => {
  let sshd: Sshd
  let root: string
  let service: ReturnType<typeof pidfileService>
  let remoteDir: string

  beforeAll(async () => {
    sshd = await startSshd()
    service = pidfileService(sshd.targetDir)
    remoteDir = join(sshd.targetDir, "app")
    root = mkdtempSync(join(tmpdir(), "air-deploy-project-"))
    mkdirSync(join(root, "bin"))
  }, 30_000)

  afterAll(async () => {
    service?.kill()
    await sshd?.stop()
    if (root) rmSync(root, { recursive: true, force: true })
  })

  /** The "build": the service's script and the version it reports. */
  function build(version: string): void {
    writeFileSync(join(root, "bin", "app"), service.app)
    chmodSync(join(root, "bin", "app"), 0o755)
    writeFileSync(join(root, "VERSION"), `${version}\n`)
  }

  function target(over: Partial<DeployRules.Target> = {}): DeployRules.Target {
    return DeployRules.Target.parse({
      name: "local",
      ...connectionTo(sshd),
      artefacts: { paths: ["bin/app", "VERSION"] },
      remoteDir,
      restart: service.restart,
      smoke: service.smoke,
      stepTimeoutMs: 20_000,
      activeWaitMs: 5_000,
      ...over,
    })
  }

  const live = () => readlinkSync(join(remoteDir, "current"))
  const running = () => readFileSync(service.running, "utf8").trim()
  const releases = () => (existsSync(join(remoteDir, "releases")) ? readdir(join(remoteDir, "releases")) : [])
  function readdir(dir: string): string[] {
    return spawnSync("ls", [dir], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).sort()
  }

  it("doctor finds the target reachable, the key accepted and the dir writable; a refused key and a dead port get their fix", async () => {
    expect(await DeployDoctor.target(root, target())).toMatchObject({ ok: true })
    const refused = await DeployDoctor.target(root, target({ identityFile: sshd.strangerIdentity }))
    expect(refused).toMatchObject({ ok: false })
    expect(refused.fix).toContain("ssh-copy-id")
    const dead = await DeployDoctor.target(root, target({ port: await freePort() }))
    expect(dead.ok).toBe(false)
    expect(dead.fix).toContain("sshd listens")
  }, 60_000)

  it("a clean deploy: every hash matches, the service runs the new release, the smoke test passes, all of it in the evidence", async () => {
    build("v1")
    const o = await Deploy.run({ root, target: target(), n: 1, commit: "aaaaaaaaaaaa1111" })
    expect(o).toMatchObject({ status: "passed", hashMatch: true, service: "active", smoke: "passed", rolledBack: false, previous: null })
    expect(live()).toBe("releases/1-aaaaaaaaaaaa")
    expect(running()).toBe("v1")
    const dir = join(root, o.evidencePath)
    const hashes = JSON.parse(readFileSync(join(dir, "hashes.json"), "utf8"))
    expect(Object.keys(hashes.local).sort()).toEqual(["VERSION", "bin/app"])
    expect(hashes.remote).toEqual(hashes.local)
    for (const f of ["commands.json", "service.txt", "journal.txt", "smoke.txt", "result.json"]) expect(existsSync(join(dir, f)), f).toBe(true)
    expect(readFileSync(join(dir, "journal.txt"), "utf8")).toContain("app v1 starting")
    const commands = readFileSync(join(dir, "commands.json"), "utf8")
    // The identity file is named to ssh, never shown.
    expect(commands).not.toContain(sshd.identity)
    expect(commands).toContain("<identity>")
    expect(JSON.parse(commands).every((c: { code: number; ms: number }) => typeof c.code === "number" && c.ms >= 0)).toBe(true)
  }, 60_000)

  it("a copy corrupted on the target fails its hash check and never goes live", async () => {
    build("v2")
    const o = await Deploy.run({
      root,
      target: target(),
      n: 2,
      commit: "bbbbbbbbbbbb2222",
      hooks: { afterTransfer: (release) => appendFileSync(join(release, "bin", "app"), "# corrupted\n") },
    })
    expect(o).toMatchObject({ status: "failed", cause: "hash", hashMatch: false, rolledBack: true, previous: "1-aaaaaaaaaaaa" })
    expect(JSON.parse(readFileSync(join(root, o.evidencePath, "hashes.json"), "utf8")).mismatched).toEqual(["bin/app"])
    expect(live()).toBe("releases/1-aaaaaaaaaaaa")
    expect(running()).toBe("v1")
    expect(releases()).toEqual(["1-aaaaaaaaaaaa"])
  }, 60_000)

  it("a failing smoke test rolls back: the previous release is live and restarted", async () => {
    build("v3")
    const o = await Deploy.run({ root, target: target({ smoke: `${service.smoke} && test "$(cat VERSION)" != v3` }), n: 3, commit: "cccccccccccc3333" })
    expect(o).toMatchObject({ status: "failed", cause: "smoke", hashMatch: true, smoke: "failed", rolledBack: true })
    expect(live()).toBe("releases/1-aaaaaaaaaaaa")
    expect(running()).toBe("v1")
    expect(readFileSync(join(root, o.evidencePath, "smoke.txt"), "utf8")).toContain("exit 1")
  }, 60_000)

  it("an unreachable target and a refused key change nothing on the target", async () => {
    build("v4")
    const before = { live: live(), releases: releases() }
    const down = await Deploy.run({ root, target: target({ port: await freePort() }), n: 4, commit: "dddddddddddd4444" })
    expect(down).toMatchObject({ status: "failed", cause: "unreachable", rolledBack: false })
    const refused = await Deploy.run({ root, target: target({ identityFile: sshd.strangerIdentity }), n: 5, commit: "dddddddddddd4444" })
    expect(refused).toMatchObject({ status: "failed", cause: "auth" })
    expect(refused.message).toContain("Permission denied")
    expect({ live: live(), releases: releases() }).toEqual(before)
    expect(running()).toBe("v1")
  }, 60_000)

  it("a host key that is not known is refused under the strict policy", async () => {
    const empty = join(root, "empty_known_hosts")
    writeFileSync(empty, "")
    const o = await Deploy.run({ root, target: target({ knownHostsFile: empty }), n: 6, commit: "eeeeeeeeeeee6666" })
    expect(o).toMatchObject({ status: "failed", cause: "host-key" })
  }, 60_000)

  it.each(["afterTransfer", "afterSwitch"] as const)("AirCoding killed %s: the deploy resumed with the same number completes, never a mix", async (point) => {
    const bun = findBun()
    expect(bun, "bun runs the deploy in a child process").not.toBeNull()
    const version = point === "afterTransfer" ? "v7" : "v8"
    const n = point === "afterTransfer" ? 7 : 8
    build(version)
    const options = { root, target: target(), n, commit: `${String(n).repeat(12)}` }
    const child = spawnSync(bun!, [join(__dirname, "deploy-child.ts"), JSON.stringify(options), point], { encoding: "utf8", timeout: 60_000 })
    expect(child.signal).toBe("SIGKILL")
    // Whatever is live is one whole release: its files match a build exactly.
    const current = join(remoteDir, live())
    expect(readFileSync(join(current, "bin", "app"), "utf8")).toBe(service.app)
    expect(["v1", version, "v8", "v7"]).toContain(readFileSync(join(current, "VERSION"), "utf8").trim())
    const o = await Deploy.run(options)
    expect(o).toMatchObject({ status: "passed", hashMatch: true, smoke: "passed" })
    expect(live()).toBe(`releases/${Deploy.releaseName(n, options.commit)}`)
    expect(running()).toBe(version)
  }, 90_000)

  it("killed after the switch and resumed with a failing smoke test: rolled back to the release live before the crash", async () => {
    const bun = findBun()!
    build("v9")
    const before = live()
    const options = { root, target: target(), n: 9, commit: "999999999999" }
    const child = spawnSync(bun, [join(__dirname, "deploy-child.ts"), JSON.stringify(options), "afterSwitch"], { encoding: "utf8", timeout: 60_000 })
    expect(child.signal).toBe("SIGKILL")
    expect(live()).toBe("releases/9-999999999999")
    const o = await Deploy.run({ ...options, target: target({ smoke: "exit 4" }) })
    expect(o).toMatchObject({ status: "failed", cause: "smoke", rolledBack: true, previous: before.replace("releases/", "") })
    expect(live()).toBe(before)
  }, 90_000)

  it("a later run deploying the release that already runs: another run's progress is not resumed, and a rollback keeps that release", async () => {
    build("v8")
    expect(live()).toBe("releases/8-888888888888")
    const o = await Deploy.run({ root, target: target({ smoke: "exit 5" }), n: 8, commit: "888888888888", runId: "a-later-run" })
    expect(o).toMatchObject({ status: "failed", cause: "smoke", rolledBack: true, previous: "8-888888888888" })
    expect(live()).toBe("releases/8-888888888888")
    expect(releases()).toContain("8-888888888888")
    expect(running()).toBe("v8")
  }, 60_000)

  /** The runtime's deploy step against the real machine rules: events in the log, then the task or the question. */
  async function step(over: Partial<DeployRules.Target>, hooks?: Deploy.Hooks) {
    writeFileSync(join(root, ".air", "shared", "rules", "deploy.json"), JSON.stringify({ schemaVersion: 1, targets: [{ ...target(over), name: "box" }] }))
    let { state } = started({ ...graphOf(task("T-1")), deployable: true }, { finalReview: true, deploy: { targets: ["box"], everyRun: false } })
    state = passFinalReview(complete(state, "T-1").state).state
    let current: SchedulerState = apply(state, { type: "finalCheck.done", status: "passed", message: "" }).state
    const events: string[] = []
    const log = {
      async apply(event: EventInput) {
        const r = transition(current, { ...event, at: new Date().toISOString() } as never)
        if ("refused" in r) return { ok: false as const, reason: r.refused }
        current = r.state
        events.push(event.type === "deploy.failed" ? `deploy.failed:${event.cause}` : event.type)
        return { ok: true as const }
      },
      state: () => current,
      opened: async () => current,
    }
    const inbox: string[] = []
    const n = current.deploy!.targets[0]!.n
    await DeployStep.run({ root, log, git: async () => "c-T-1\n", inbox: { push: (text: string) => inbox.push(text) } as never }, { target: "box", n }, hooks)
    return { state: current, events }
  }

  it("through the Scheduler: a corrupted copy goes to the Debugger with the deploy evidence; an unreachable target asks the user", async () => {
    mkdirSync(join(root, ".air", "shared", "rules"), { recursive: true })
    build("v10")
    const before = live()
    const bad = await step({}, { afterTransfer: (release) => appendFileSync(join(release, "VERSION"), "x") })
    expect(bad.events).toEqual(["deploy.started", "deploy.failed:hash"])
    const t1 = bad.state.tasks[0]!
    expect([t1.status, t1.lastFailure?.source, t1.lastFailure?.evidencePath]).toEqual(["debugging", "deploy", ".air/local/evidence/_deploy/box/1"])
    expect(live()).toBe(before)
    const down = await step({ port: await freePort() })
    expect(down.events).toEqual(["deploy.started", "deploy.failed:unreachable"])
    expect(down.state.questions.map((q) => q.questionId)).toEqual(["deploy:box:1"])
    expect(down.state.stage).toBe("deploying")
    expect(live()).toBe(before)
  }, 60_000)

  /** A deployable phase 1 (T-1) merged and reviewed, T-2 of phase 2 waiting; the deploy step with the real build at the root. */
  async function phaseStep(build: string) {
    mkdirSync(join(root, ".air", "shared", "rules"), { recursive: true })
    writeFileSync(join(root, ".air", "shared", "rules", "deploy.json"), JSON.stringify({ schemaVersion: 1, targets: [{ ...target(), name: "box" }] }))
    writeFileSync(join(root, ".air", "shared", "rules", "toolchain.json"), JSON.stringify({ schemaVersion: 1, build: [build] }))
    const graph = { ...graphOf(task("T-1"), task("T-2", { phase: 2, deps: ["T-1"] })), deployPhases: [1] }
    let { state } = started(graph, { finalReview: true, deploy: { targets: ["box"], everyRun: false } })
    state = apply(complete(state, "T-1").state, { type: "milestone.reached", phase: 1 }, { type: "milestone.reviewed", phase: 1, verdict: "pass" }).state
    expect([state.stage, state.deploy?.phase]).toEqual(["deploying", 1])
    let current: SchedulerState = state
    const events: string[] = []
    const log = {
      async apply(event: EventInput) {
        const r = transition(current, { ...event, at: new Date().toISOString() } as never)
        if ("refused" in r) return { ok: false as const, reason: r.refused }
        current = r.state
        events.push(event.type === "deploy.failed" ? `deploy.failed:${event.cause}` : event.type)
        return { ok: true as const }
      },
      state: () => current,
      opened: async () => current,
    }
    // Another commit than the earlier tests' (their progress under _deploy/box/1 is not this deploy's).
    const out = join(root, ".air", "local", "evidence", "_deploy", "_build", "phase1")
    await DeployStep.run({ root, log, git: async () => "ph1ph1ph1ph1ph1\n", inbox: { push: () => undefined } as never }, { target: "box", n: 1, phase: 1 }, undefined, () => FinalCheck.build(root, out, { sandbox: "off" }))
    return { state: current, events }
  }

  it("a deployable phase: the merged tree is built at the root, deployed and verified, and only then does the next phase start; a build that fails reaches nothing", async () => {
    build("v10")
    const liveNow = () => (existsSync(join(remoteDir, "current")) ? live() : null)
    const before = liveNow()
    const broken = await phaseStep("exit 7")
    expect(broken.events).toEqual(["deploy.started", "deploy.failed:build"])
    expect([broken.state.tasks[0]!.status, broken.state.tasks[1]!.status, broken.state.currentPhase]).toEqual(["debugging", "pending", 1])
    expect(liveNow()).toBe(before)
    writeFileSync(join(root, "VERSION.in"), "v11\n")
    const ok = await phaseStep("cp VERSION.in VERSION")
    expect(ok.events).toEqual(["deploy.started", "deploy.passed"])
    expect(running()).toBe("v11")
    expect([ok.state.stage, ok.state.currentPhase, ok.state.tasks[1]!.status]).toEqual(["running", 2, "running"])
  }, 60_000)

  it("AirCoding killed mid-deploy leaves no ssh master for long: it ends by itself after its idle bound, and the resumed deploy ends a stale one at once", async () => {
    const bun = findBun()!
    build("v12")
    const options = { root, target: target(), n: 12, commit: "121212121212", sshIdleS: 2 }
    const socket = DeploySsh.open(root, options.target).controlPath
    const master = () => Number(/pid=(\d+)/.exec(spawnSync("ssh", ["-o", `ControlPath=${socket}`, "-O", "check", "-p", String(sshd.port), `${sshd.user}@127.0.0.1`], { encoding: "utf8" }).stderr)?.[1] ?? 0)
    // A zombie is no process left behind (pid 1 of a container may be slow to reap).
    const alive = (pid: number) => existsSync(`/proc/${pid}/stat`) && !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
    const killed = (o: object) => spawnSync(bun, [join(__dirname, "deploy-child.ts"), JSON.stringify(o), "afterTransfer"], { encoding: "utf8", timeout: 60_000 })
    expect(killed(options).signal).toBe("SIGKILL")
    const first = master()
    expect(first, "the killed deploy's master was still there").toBeGreaterThan(0)
    // Gone before half the default idle bound (30 s) could have ended it: 7 times the 2 s bound under test.
    await untilBeforeStallEnds(() => !alive(first), { ms: (DeploySsh.MASTER_IDLE_S * 1000) / 2, what: "half the ssh master's default idle bound" })
    // Killed again with the default bound: the resumed deploy finds that master on the run's socket and ends it.
    expect(killed({ ...options, sshIdleS: undefined }).signal).toBe("SIGKILL")
    const stale = master()
    expect(stale).toBeGreaterThan(0)
    const o = await Deploy.run(options)
    expect(o).toMatchObject({ status: "passed", hashMatch: true })
    expect(alive(stale)).toBe(false)
    expect(master()).toBe(0)
    expect(JSON.parse(readFileSync(join(root, o.evidencePath, "commands.json"), "utf8")).map((c: { step: string }) => c.step)).toContain("stale-master")
  }, 90_000)
})
