import { hostname } from "node:os"
import { z } from "zod"
import { DeploySsh } from "./ssh"

/**
 * The fence around the steps a deploy runs on its target. A killed AirCoding's remote command goes on
 * running (sshd does not end a command whose client is gone), so a resumed deploy could start the service
 * while the killed run's start script was still on its way: two service processes, the pidfile naming one.
 * Each remote step therefore holds `flock` on `<remoteDir>/.air-deploy.lock` for its whole run, with its
 * holder written in the file (run, target, deploy, step, AirCoding's host and pid, the step's process
 * group on the target). A step that finds the lock held judges the holder: an AirCoding that is gone (or
 * this deploy's own step that timed out here) has its process group ended at once; a live one is waited for
 * up to the step's timeout, then ended. Both what it found and what it did go to commands.json as `lock`.
 */
export namespace DeployLock {
  export const FILE = ".air-deploy.lock"
  /** The exit code and first line of a step that did not run because the lock was held (or flock is missing). */
  const BUSY_CODE = 75
  const BUSY = "AIR-LOCK-BUSY"
  const NO_FLOCK = "AIR-LOCK-NO-FLOCK"
  const FREED = "AIR-LOCK-FREED"
  /** SIGTERM to the holder's group, then SIGKILL after this long without the lock coming free. */
  const TERM_GRACE_S = 5
  /** A step tries again after settling the holder; a lock still taken after that many is reported, not fought over. */
  const ATTEMPTS = 3

  /** Who runs a step, as its line in the lock file says (values URI-encoded, so a line is space-separated key=value). */
  export const Holder = z
    .object({
      run: z.string(),
      target: z.string(),
      deploy: z.coerce.number().int(),
      step: z.string(),
      host: z.string(),
      pid: z.coerce.number().int().positive(),
      since: z.string(),
      pgid: z.coerce.number().int().positive(),
    })
    .strict()
  export type Holder = z.infer<typeof Holder>

  /** This deploy, as it signs its steps. */
  export type Self = { run: string; target: string; deploy: number; host: string; pid: number }

  export function self(o: { runId?: string; target: string; n: number }): Self {
    return { run: o.runId ?? "-", target: o.target, deploy: o.n, host: hostname(), pid: process.pid }
  }

  export class Held extends Error {
    readonly _tag = "DeployLockHeld"
  }

  /**
   * `script` run on the target under the lock: the lock file opened on fd 9 (remoteDir created first), flock
   * without waiting, the holder's line written, then the script in a subshell that closes fd 9, so a service
   * it starts never inherits the lock. The step's exit code is the script's.
   */
  export function wrap(base: string, script: string, holder: Omit<Holder, "pgid">): string {
    const q = DeploySsh.quote
    const lock = q(`${base}/${FILE}`)
    const line = fieldsLine(holder)
    return (
      // `[` is the shell's own: the usual case (the dir is there) costs no process.
      `{ [ -d ${q(base)} ] || mkdir -p ${q(base)}; } && { ` +
      `command -v flock >/dev/null 2>&1 || { echo ${NO_FLOCK}; exit ${BUSY_CODE}; }; ` +
      `if ! flock -n 9; then echo ${BUSY}; cat ${lock}; exit ${BUSY_CODE}; fi; ` +
      // sshd starts the command in a session of its own: its group is the step's whole tree (ps may be absent; /proc is read by the shell).
      `{ read -r _ _ _ _ pgid _ < /proc/$$/stat; } 2>/dev/null || pgid=$$; ` +
      `printf '%s pgid=%s\\n' ${q(line)} "$pgid" > ${lock}; ` +
      `( ${script}\n) 9>&-; } 9>>${lock}`
    )
  }

  /** The holder a busy step found: undefined when the step ran; `null` when the lock file names no one we can read. */
  export function busyHolder(step: DeploySsh.Step): Holder | null | undefined {
    if (step.code !== BUSY_CODE) return undefined
    const lines = step.output.trim().split("\n")
    if (lines[0]?.trim() !== BUSY) return undefined
    return parseHolder(lines[1] ?? "")
  }

  export function parseHolder(line: string): Holder | null {
    const fields: Record<string, string> = {}
    for (const pair of line.trim().split(/\s+/)) {
      const at = pair.indexOf("=")
      if (at <= 0) return null
      try {
        fields[pair.slice(0, at)] = decodeURIComponent(pair.slice(at + 1))
      } catch {
        return null
      }
    }
    const parsed = Holder.safeParse(fields)
    return parsed.success ? parsed.data : null
  }

  export type Verdict = "gone" | "ours" | "live"

  /** Only a holder on this host can be known dead; one on another host (or an unreadable one) is live until its bound. */
  export function judge(h: Holder, me: Self, alive: (pid: number) => boolean = pidAlive): Verdict {
    if (h.host !== me.host) return "live"
    if (h.pid === me.pid) return h.run === me.run && h.target === me.target && h.deploy === me.deploy ? "ours" : "live"
    return alive(h.pid) ? "live" : "gone"
  }

  function pidAlive(pid: number): boolean {
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM"
    }
  }

  export function describe(h: Holder | null, verdict: Verdict | null, lockPath: string): string {
    if (!h) return `${lockPath} is held by a process that left no readable holder line`
    const who = `step ${h.step} of deploy ${h.target}/${h.deploy} (run ${h.run}), AirCoding pid ${h.pid} on ${h.host} since ${h.since}, process group ${h.pgid} on the target`
    const state = verdict === "gone" ? "that AirCoding is gone" : verdict === "ours" ? "this deploy's own step, which timed out here" : "still running"
    return `${lockPath} is held by ${who}: ${state}`
  }

  /**
   * `script` as step `step` under the lock; a held lock is settled (the holder waited for or ended) and the
   * step tried again. Throws Held when the lock stays taken (its message names the holder and the lock file).
   */
  export async function run(session: DeploySsh.Session, step: string, script: string, log: DeploySsh.Step[], me: Self, timeoutMs?: number): Promise<DeploySsh.Step> {
    const base = session.target.remoteDir.replace(/\/+$/, "")
    const lockPath = `${base}/${FILE}`
    for (let attempt = 1; ; attempt++) {
      const holder = { run: me.run, target: me.target, deploy: me.deploy, step, host: me.host, pid: me.pid, since: new Date().toISOString() }
      const entry = await DeploySsh.run(session, step, wrap(base, script, holder), log, timeoutMs)
      if (entry.code === BUSY_CODE && entry.output.trim() === NO_FLOCK)
        throw new Held(`flock is not installed on ${session.target.host}: the deploy locks ${lockPath} around each step so a resumed deploy never races a killed one. Install util-linux there (it provides flock) and deploy again`)
      const found = busyHolder(entry)
      if (found === undefined) return entry
      const verdict = found ? judge(found, me) : null
      // The attempt ran nothing: it is the lock's evidence, not the step's.
      entry.step = "lock"
      entry.output = `${step}: ${describe(found, verdict, lockPath)}`
      if (attempt >= ATTEMPTS) throw new Held(`${describe(found, verdict, lockPath)}; it was still held after ${ATTEMPTS} attempts. Check what runs there (cat ${lockPath}) and deploy again`)
      await settle(session, found, verdict, lockPath, log)
    }
  }

  /** Waits for a live holder up to the step's timeout, then ends it; ends a gone or own one at once. */
  async function settle(session: DeploySsh.Session, h: Holder | null, verdict: Verdict | null, lockPath: string, log: DeploySsh.Step[]): Promise<void> {
    const q = DeploySsh.quote
    const lock = q(lockPath)
    const waitS = Math.max(1, Math.ceil(session.target.stepTimeoutMs / 1000))
    if (verdict === "live" || verdict === null) {
      const started = performance.now()
      const waited = await DeploySsh.run(session, "lock", `{ flock -w ${waitS} 9 && echo ${FREED}; } 9>>${lock}`, log, (waitS + 15) * 1000)
      const freed = waited.output.includes(FREED)
      waited.output = freed ? `waited for the holder: it let go after ${Math.round(performance.now() - started)} ms` : `waited ${waitS} s for the holder (the step timeout): still held`
      // A holder we cannot name is never ended: the next attempt finds it again, and the last one reports it.
      if (freed || !h) return
    }
    if (!h) return
    // Only the group the lock file still names: a holder that changed meanwhile is judged again on the next attempt.
    const same = `grep -qxF ${q(holderLine(h))} ${lock}`
    const ended = await DeploySsh.run(
      session,
      "lock",
      `{ ${same} || { echo ${FREED}-changed; exit 0; }; kill -TERM -- -${h.pgid} 2>/dev/null; ` +
        `if flock -w ${TERM_GRACE_S} 9; then echo ${FREED}-term; else kill -KILL -- -${h.pgid} 2>/dev/null; flock -w ${TERM_GRACE_S} 9 && echo ${FREED}-kill; fi; } 9>>${lock}`,
      log,
      (2 * TERM_GRACE_S + 15) * 1000,
    )
    const how = /AIR-LOCK-FREED-(term|kill|changed)/.exec(ended.output)?.[1]
    ended.output =
      how === "term"
        ? `ended its process group ${h.pgid} on the target (SIGTERM); the lock came free`
        : how === "kill"
          ? `ended its process group ${h.pgid} on the target (SIGTERM, then SIGKILL after ${TERM_GRACE_S} s); the lock came free`
          : how === "changed"
            ? `the lock changed hands meanwhile; nothing ended`
            : `ended its process group ${h.pgid} on the target (SIGTERM, then SIGKILL), but the lock is still held: ${ended.output.trim().slice(0, 200)}`
  }

  /** The line the holder wrote (as parseHolder read it), to check that the lock file still names it. */
  function holderLine(h: Holder): string {
    const { pgid, ...rest } = h
    return `${fieldsLine(rest)} pgid=${pgid}`
  }

  function fieldsLine(fields: Omit<Holder, "pgid">): string {
    return Object.entries(fields)
      .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
      .join(" ")
  }
}
