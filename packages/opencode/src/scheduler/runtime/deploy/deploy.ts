import { createHash } from "node:crypto"
import { cpSync, createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import type { DeployCause } from "../../core/deploy"
import { writeFileAtomic } from "../store/atomic"
import { Proc } from "../process"
import { DeployLock } from "./lock"
import { DeployRestart } from "./restart"
import type { DeployRules } from "./rules"
import { DeploySsh } from "./ssh"
import { AirPaths } from "../../core/air-paths"

/**
 * One deploy of one target, in code: stage the artefacts, copy them into a new release on the target,
 * compare every file's SHA-256 with the local build, switch `current` to it (one atomic rename of a
 * symlink: the target runs the old release or the new one, never a mix), restart, wait for the service,
 * smoke-test. A failure after the switch puts the previous release back and restarts it (rollback).
 * Everything goes to `.air/local/evidence/_deploy/<target>/<n>/`. Run again with the same `n` after a
 * crash, it finds its own progress there and completes or rolls back; every step on the target holds the
 * target's lock (DeployLock), so the resumed deploy ends what the crashed one left running there first.
 */
export namespace Deploy {
  export type Outcome = {
    status: "passed" | "failed"
    cause?: DeployCause
    message: string
    release: string
    previous: string | null
    hashMatch: boolean | null
    service: string
    smoke: "passed" | "failed" | "not-run"
    rolledBack: boolean
    /** Relative to the project root. */
    evidencePath: string
    /** Wall time of the whole deploy, and the part spent in the project's own commands (restart, status, smoke). */
    ms: number
    projectMs: number
  }

  /** Points where a test interrupts or damages a deploy (a crash, a corrupted copy). */
  export type Hooks = { afterTransfer?: (release: string) => Promise<void> | void; afterSwitch?: () => Promise<void> | void }

  /** `runId`: deploy numbers start at 1 in every run; progress left by another run's deploy is not this one's. */
  /** `sshIdleS`: the ssh master's idle bound (DeploySsh.MASTER_IDLE_S by default; tests shorten it). */
  export type Options = { root: string; target: DeployRules.Target; n: number; commit: string; runId?: string; env?: NodeJS.ProcessEnv; hooks?: Hooks; sshIdleS?: number }

  type Progress = { release: string; previous: string | null; switched: boolean; runId?: string }

  export function evidenceDir(root: string, target: string, n: number): string {
    return AirPaths.evidence(root, "_deploy", target, String(n))
  }

  export function releaseName(n: number, commit: string): string {
    return `${n}-${commit.slice(0, 12)}`
  }

  /** Only this deploy's own progress resumes it: the same release (commit) of the same run. */
  function ownProgress(file: string, release: string, runId: string | undefined): Progress | undefined {
    const found: Progress | undefined = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined
    return found && found.release === release && found.runId === runId ? found : undefined
  }

  /** Whether this deploy started before (a crash): it then resumes from its progress, past its build. */
  export function resuming(o: Pick<Options, "root" | "n" | "commit" | "runId"> & { target: string }): boolean {
    try {
      return ownProgress(join(evidenceDir(o.root, o.target, o.n), "progress.json"), releaseName(o.n, o.commit), o.runId) !== undefined
    } catch {
      return false
    }
  }

  class StepFailed extends Error {
    constructor(
      readonly kind: DeployCause,
      message: string,
    ) {
      super(message)
    }
  }

  export async function run(o: Options): Promise<Outcome> {
    const started = performance.now()
    const { root, target, n } = o
    const dir = evidenceDir(root, target.name, n)
    mkdirSync(dir, { recursive: true })
    const rel = relative(root, dir)
    const steps: DeploySsh.Step[] = []
    const release = releaseName(n, o.commit)
    const base = target.remoteDir.replace(/\/+$/, "")
    const releasePath = `${base}/releases/${release}`
    const q = DeploySsh.quote
    const restart = DeployRestart.commands(target.restart)
    const progressFile = join(dir, "progress.json")
    const progress = ownProgress(progressFile, release, o.runId)
    const outcome: Outcome = { status: "failed", message: "", release, previous: progress?.previous ?? null, hashMatch: null, service: "unknown", smoke: "not-run", rolledBack: false, evidencePath: rel, ms: 0, projectMs: 0 }
    const session = DeploySsh.open(root, target, o.env ?? process.env, o.sshIdleS !== undefined ? { idleS: o.sshIdleS } : {})
    const inRelease = (script: string) => `cd ${q(`${base}/current`)} && ${script}`
    // Every step that changes or reads the release runs under the target's lock (a killed run's step is ended first).
    const me = DeployLock.self({ target: target.name, n, ...(o.runId ? { runId: o.runId } : {}) })
    const remote: Remote = (step, script) => DeployLock.run(session, step, script, steps, me)
    let switched = progress?.switched ?? false
    try {
      // 1. The artefacts, staged and hashed locally (a build that lacks one is the project's failure).
      const local = await stage(o, AirPaths.deploy(root, target.name, String(n)), steps)
      await writeFileAtomic(join(dir, "hashes.local.json"), JSON.stringify(local.hashes, null, 2) + "\n")

      // 2. Reach the target; the live release before this deploy is the one a rollback restores.
      await DeploySsh.connect(session, steps)
      // One round trip: the dir writable, the live release, whether ours is already whole (after a crash), no half copy left.
      const probe = await remote(
        "probe",
        `mkdir -p ${q(`${base}/releases`)} && test -w ${q(`${base}/releases`)} || exit 3; echo "live=$(readlink ${q(`${base}/current`)})"; ` +
          `if test -d ${q(releasePath)}; then echo present=1; else rm -rf ${q(`${releasePath}.partial`)}; fi`,
      )
      if (probe.code !== 0) throw new StepFailed("transfer", `${target.remoteDir} on ${target.host} is not writable by ${target.user}${tail(probe.output) ? `: ${tail(probe.output)}` : ""}`)
      if (!progress) {
        const live = /^live=(.*)$/m.exec(probe.output)?.[1]?.trim() ?? ""
        outcome.previous = live ? live.replace(/^.*\//, "") : null
        // Deploying what already runs: a rollback restarts it as it was (and never removes it).
      }
      await saveProgress(progressFile, { release, previous: outcome.previous, switched, ...(o.runId ? { runId: o.runId } : {}) })

      // 3. A fresh release dir (a whole one from before a crash is kept: `.partial` is renamed only when complete).
      if (!/^present=1$/m.test(probe.output)) {
        const copy = await DeploySsh.copyDir(session, local.dir, `${releasePath}.partial`, steps)
        if (copy.code !== 0) throw new StepFailed("transfer", said(`the copy to ${target.host} failed (exit ${copy.code})`, copy.output))
        const done = await remote("transfer", `mv ${q(`${releasePath}.partial`)} ${q(releasePath)}`)
        if (done.code !== 0) throw new StepFailed("transfer", said(`the release could not be completed on ${target.host} (exit ${done.code})`, done.output))
      }
      await o.hooks?.afterTransfer?.(releasePath)

      // 4. Every artefact's hash on the target against the local build.
      const names = Object.keys(local.hashes)
      const sums = await remote("hash", `cd ${q(releasePath)} && sha256sum -- ${names.map(q).join(" ")}`)
      const remoteHashes = parseSums(sums.output)
      const mismatched = names.filter((name) => remoteHashes[name] !== local.hashes[name])
      outcome.hashMatch = mismatched.length === 0
      await writeFileAtomic(join(dir, "hashes.json"), JSON.stringify({ local: local.hashes, remote: remoteHashes, mismatched }, null, 2) + "\n")
      if (mismatched.length > 0) throw new StepFailed("hash", `SHA-256 on ${target.name} differs from the local build for ${mismatched.slice(0, 5).join(", ")}${mismatched.length > 5 ? ` and ${mismatched.length - 5} more` : ""}`)

      // 5. The switch: recorded first, so a crash after it is rolled back to the right release.
      switched = true
      await saveProgress(progressFile, { release, previous: outcome.previous, switched, ...(o.runId ? { runId: o.runId } : {}) })
      const flip = await remote("switch", `ln -sfn ${q(`releases/${release}`)} ${q(`${base}/.current.tmp`)} && mv -Tf ${q(`${base}/.current.tmp`)} ${q(`${base}/current`)}`)
      if (flip.code !== 0) throw new StepFailed("transfer", said(`could not switch ${base}/current (exit ${flip.code})`, flip.output))
      await o.hooks?.afterSwitch?.()

      // 6. Restart, wait for the service, smoke test.
      await restartAndWait(remote, restart, inRelease, target, outcome)
      const smoke = await remote("smoke", inRelease(target.smoke))
      outcome.smoke = smoke.code === 0 ? "passed" : "failed"
      await writeFileAtomic(join(dir, "smoke.txt"), `$ ${target.smoke}\n${smoke.output}\n(exit ${smoke.code}${smoke.timedOut ? ", timed out" : ""})\n`)
      if (smoke.code !== 0) throw new StepFailed("smoke", said(`the smoke test failed on ${target.name} (exit ${smoke.code})`, smoke.output))
      outcome.status = "passed"
      outcome.message = `${release} runs on ${target.name}: hashes match, service ${outcome.service}, smoke passed`
    } catch (err) {
      const known = err instanceof StepFailed || err instanceof DeploySsh.ConnectError || err instanceof DeployLock.Held
      outcome.cause = err instanceof StepFailed ? err.kind : err instanceof DeploySsh.ConnectError ? err.kind : "errored"
      outcome.message = known ? (err as Error).message : `the deploy to ${target.name} could not run: ${(err as Error).message}`
      // Unreachable before the switch: nothing on the target changed. After it: put the previous release back.
      if (!(err instanceof DeploySsh.ConnectError) || switched) await rollback(remote, o, outcome, { switched, releasePath, base, restart, inRelease, dir })
    } finally {
      await journal(session, restart, steps, dir).catch(() => undefined)
      await DeploySsh.close(session)
      outcome.ms = Math.round(performance.now() - started)
      outcome.projectMs = steps.filter((s) => PROJECT_STEPS.has(s.step)).reduce((sum, s) => sum + s.ms, 0)
      await writeFileAtomic(join(dir, "commands.json"), JSON.stringify(steps.map(({ output, ...s }) => ({ ...s, output: clip(output) })), null, 2) + "\n")
      await writeFileAtomic(join(dir, "result.json"), JSON.stringify({ target: target.name, n, commit: o.commit, ...outcome }, null, 2) + "\n")
    }
    return outcome
  }

  /** Steps that run the project's own commands (the rest is the deploy's own cost: staging, copy, hashes, switch). */
  const PROJECT_STEPS = new Set(["reload", "restart", "status", "smoke", "rollback-restart", "rollback-status"])

  /** One step on the target, under its lock (DeployLock.run). */
  type Remote = (step: string, script: string) => Promise<DeploySsh.Step>

  async function restartAndWait(remote: Remote, restart: DeployRestart.Commands, inRelease: (script: string) => string, target: DeployRules.Target, outcome: Outcome, prefix = ""): Promise<void> {
    if (restart.reload) {
      const r = await remote(`${prefix}reload`, restart.reload)
      if (r.code !== 0) throw new StepFailed("restart", said(`${restart.reload} failed on ${target.name} (exit ${r.code})`, r.output))
    }
    const r = await remote(`${prefix}restart`, inRelease(restart.restart))
    if (r.code !== 0) throw new StepFailed("restart", said(`the restart failed on ${target.name} (exit ${r.code})`, r.output))
    const until = performance.now() + target.activeWaitMs
    for (;;) {
      const s = await remote(`${prefix}status`, inRelease(restart.status))
      outcome.service = s.code === 0 ? "active" : `inactive (${tail(s.output) || `exit ${s.code}`})`
      if (s.code === 0) return
      if (performance.now() >= until) throw new StepFailed("restart", `the service on ${target.name} is not active ${target.activeWaitMs} ms after the restart: ${tail(s.output) || `exit ${s.code}`}`)
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }

  /**
   * The previous release live again: `current` flipped back and the service restarted. A first deploy has
   * no previous release: the service is stopped and `current` removed. A copy that failed its hashes never
   * went live; its release dir is removed.
   */
  async function rollback(
    remote: Remote,
    o: Options,
    outcome: Outcome,
    c: { switched: boolean; releasePath: string; base: string; restart: DeployRestart.Commands; inRelease: (s: string) => string; dir: string },
  ): Promise<void> {
    const q = DeploySsh.quote
    try {
      if (c.switched) {
        if (outcome.previous) {
          await remote("rollback-switch", `ln -sfn ${q(`releases/${outcome.previous}`)} ${q(`${c.base}/.current.tmp`)} && mv -Tf ${q(`${c.base}/.current.tmp`)} ${q(`${c.base}/current`)}`)
          const probe: Outcome = { ...outcome }
          await restartAndWait(remote, c.restart, c.inRelease, o.target, probe, "rollback-")
          outcome.service = `${probe.service} (previous release ${outcome.previous})`
        } else {
          const stop = o.target.restart.preset === "systemd" ? `${o.target.restart.sudo ? "sudo -n " : ""}systemctl stop ${q(o.target.restart.unit)}` : o.target.restart.stop
          await remote("rollback-stop", c.inRelease(stop))
          await remote("rollback-switch", `rm -f ${q(`${c.base}/current`)}`)
          outcome.service = "stopped (no previous release)"
        }
      }
      if (outcome.previous !== outcome.release) await remote("rollback-remove", `rm -rf ${q(c.releasePath)} ${q(`${c.releasePath}.partial`)}`)
      outcome.rolledBack = true
      await saveProgress(join(c.dir, "progress.json"), { release: outcome.release, previous: outcome.previous, switched: false, ...(o.runId ? { runId: o.runId } : {}) })
    } catch (err) {
      outcome.message += `; the rollback failed too: ${(err as Error).message}`
    }
  }

  async function journal(session: DeploySsh.Session, restart: DeployRestart.Commands, steps: DeploySsh.Step[], dir: string): Promise<void> {
    const last = [...steps].reverse().find((s) => s.step.endsWith("status"))
    if (last) await writeFileAtomic(join(dir, "service.txt"), `$ ${restart.status}\n${last.output}\n(exit ${last.code})\n`)
    if (!restart.journal || !steps.some((s) => s.step.endsWith("restart"))) return
    // In the remote dir, not the release: a rollback of a first deploy leaves no `current`.
    const j = await DeploySsh.run(session, "journal", `cd ${DeploySsh.quote(session.target.remoteDir)} && ${restart.journal}`, steps, 15_000)
    await writeFileAtomic(join(dir, "journal.txt"), clip(j.output, 16_000))
  }

  /** The artefacts in a local directory of their own, with the SHA-256 of every file (paths relative to it). */
  async function stage(o: Options, dir: string, steps: DeploySsh.Step[]): Promise<{ dir: string; hashes: Record<string, string> }> {
    const out = join(dir, "stage")
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(out, { recursive: true })
    const a = o.target.artefacts
    if ("paths" in a) {
      for (const p of a.paths) {
        const from = join(o.root, p)
        if (!existsSync(from)) throw new StepFailed("build", `artefact ${p} is not in the build (looked at ${from}); build the project or fix artefacts.paths in the deploy rules`)
        mkdirSync(dirname(join(out, p)), { recursive: true })
        cpSync(from, join(out, p), { recursive: true, dereference: true, preserveTimestamps: true })
      }
    } else {
      const args = ["--install", join(o.root, a.cmakeInstall.buildDir), "--prefix", out, ...(a.cmakeInstall.component ? ["--component", a.cmakeInstall.component] : [])]
      const r = await Proc.run("cmake", args, { cwd: o.root, env: o.env ?? process.env, timeoutMs: o.target.stepTimeoutMs })
      steps.push({ step: "stage", command: ["cmake", ...args].join(" "), code: r.code ?? 124, ms: Math.round(r.ms), timedOut: r.timedOut, output: r.output })
      if (!r.ok) throw new StepFailed("build", said(`cmake --install ${a.cmakeInstall.buildDir} failed (exit ${r.code ?? "none"})`, r.output))
    }
    const hashes: Record<string, string> = {}
    for (const file of walk(out)) hashes[relative(out, file)] = await sha256(file)
    if (Object.keys(hashes).length === 0) throw new StepFailed("build", "the artefacts hold no file to deploy")
    return { dir: out, hashes }
  }

  function walk(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true })
      .sort((x, y) => (x.name < y.name ? -1 : 1))
      .flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.isFile() || statSync(join(dir, e.name)).isFile() ? [join(dir, e.name)] : []))
  }

  function sha256(file: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const h = createHash("sha256")
      createReadStream(file)
        .on("data", (chunk) => h.update(chunk))
        .on("end", () => resolve(h.digest("hex")))
        .on("error", reject)
    })
  }

  /** sha256sum's lines: `<hex>  <name>` (a backslash first when the name was escaped). */
  export function parseSums(text: string): Record<string, string> {
    const out: Record<string, string> = {}
    for (const line of text.split("\n")) {
      const m = /^\\?([0-9a-f]{64}) [ *](.+)$/.exec(line.trim())
      if (m) out[m[2]!] = m[1]!
    }
    return out
  }

  async function saveProgress(file: string, p: Progress): Promise<void> {
    await writeFileAtomic(file, JSON.stringify(p) + "\n")
  }

  function tail(text: string): string {
    return text.trim().split("\n").slice(-3).join(" | ").slice(0, 300)
  }

  /** A failed step's message with the end of what it printed, or saying it printed nothing (never a dangling colon). */
  export function said(message: string, output: string): string {
    const end = tail(output)
    return end ? `${message}: ${end}` : `${message} and printed nothing`
  }

  function clip(text: string, max = 4000): string {
    return text.length <= max ? text : `${text.slice(0, max / 2)}\n…\n${text.slice(-max / 2)}`
  }
}
