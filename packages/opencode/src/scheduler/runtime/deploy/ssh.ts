import { createHash } from "node:crypto"
import { existsSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Proc } from "../process"
import { DeployRules } from "./rules"

/**
 * ssh and scp to one target, through the one process runner. The user's ssh config and agent apply
 * (the environment is passed on); AirCoding never opens the identity file, it names it to ssh. One master
 * connection per target carries every step (ControlMaster), so a deploy pays the handshake once.
 */
export namespace DeploySsh {
  /** Why ssh itself failed (exit 255), read from its message: each has its own fix for the user. */
  export const CONNECT_CAUSES = ["unreachable", "auth", "host-key"] as const
  export type ConnectCause = (typeof CONNECT_CAUSES)[number]

  export type Step = { step: string; command: string; code: number; ms: number; timedOut: boolean; output: string }

  export class ConnectError extends Error {
    readonly _tag = "DeployConnectError"
    constructor(
      readonly kind: ConnectCause,
      message: string,
    ) {
      super(message)
    }
  }

  export type Session = {
    target: DeployRules.Target
    root: string
    env: NodeJS.ProcessEnv
    controlPath: string
    /** The master connection while it runs: aborted by close(). */
    master?: { stop: AbortController; done: Promise<Proc.Result> }
  }

  export function open(root: string, target: DeployRules.Target, env: NodeJS.ProcessEnv = process.env): Session {
    // Socket paths are short (sun_path ≤ 104 bytes): a hash in the system's temp dir.
    const key = createHash("sha256").update(`${root}\0${target.name}\0${process.pid}\0${Date.now()}`).digest("hex").slice(0, 16)
    return { target, root, env, controlPath: join(tmpdir(), `air-ssh-${key}`) }
  }

  /**
   * The master connection: one handshake for the whole deploy (each step's ssh then rides on it). Ready when
   * its control socket appears; a master that ends first failed to connect or authenticate, and says why.
   */
  export async function connect(s: Session, log: Step[]): Promise<void> {
    const t = s.target
    const stop = new AbortController()
    const args = [...options(s), "-M", "-N", "-o", "ControlPersist=no", "-p", String(t.port), `${t.user}@${t.host}`]
    const started = performance.now()
    let ended: Proc.Result | undefined
    const done = Proc.run("ssh", args, { cwd: s.root, env: s.env, signal: stop.signal, timeoutMs: 24 * 60 * 60_000 }).then((r) => (ended = r))
    s.master = { stop, done }
    const until = started + t.stepTimeoutMs
    while (!existsSync(s.controlPath)) {
      if (ended || performance.now() > until) {
        if (!ended) stop.abort()
        const r = ended ?? (await done)
        const output = r.spawnError ?? r.output
        log.push({ step: "connect", command: shown(s, "ssh", args), code: r.code ?? 124, ms: Math.round(performance.now() - started), timedOut: !ended, output })
        s.master = undefined
        throw new ConnectError(ended ? classify(output) : "unreachable", `ssh to ${t.user}@${t.host}:${t.port} failed (connect): ${lastLine(output) || (ended ? `exit ${r.code}` : "no answer in time")}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    log.push({ step: "connect", command: shown(s, "ssh", args), code: 0, ms: Math.round(performance.now() - started), timedOut: false, output: "" })
  }

  /** Options shared by ssh and scp; the identity file appears only here, and evidence shows it as <identity>. */
  export function options(s: Session): string[] {
    const t = s.target
    const seconds = Math.max(1, Math.ceil(Math.min(t.stepTimeoutMs, 30_000) / 1000))
    const out = [
      "-o", "BatchMode=yes",
      "-o", `ConnectTimeout=${seconds}`,
      "-o", `StrictHostKeyChecking=${t.knownHosts === "strict" ? "yes" : t.knownHosts === "accept-new" ? "accept-new" : "no"}`,
      "-o", `ControlPath=${s.controlPath}`,
      "-o", "LogLevel=ERROR",
    ]
    if (t.knownHostsFile) out.push("-o", `UserKnownHostsFile=${DeployRules.localPath(s.root, t.knownHostsFile)}`)
    if (t.identityFile) out.push("-i", DeployRules.localPath(s.root, t.identityFile), "-o", "IdentitiesOnly=yes")
    return out
  }

  /** A command line as evidence shows it: the identity file's path left out. */
  export function shown(s: Session, program: string, args: readonly string[]): string {
    const identity = s.target.identityFile ? DeployRules.localPath(s.root, s.target.identityFile) : undefined
    return [program, ...args.map((a) => (a === identity ? "<identity>" : a.includes(" ") || a === "" ? `'${a}'` : a))].join(" ")
  }

  /** A word for the remote shell. */
  export function quote(word: string): string {
    return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
  }

  function classify(output: string): ConnectCause {
    if (/host key verification failed|remote host identification has changed|no .* host key is known/i.test(output)) return "host-key"
    if (/permission denied|too many authentication failures|no supported authentication/i.test(output)) return "auth"
    return "unreachable"
  }

  async function exec(s: Session, step: string, program: string, args: string[], timeoutMs: number, log: Step[]): Promise<Step> {
    const r = await Proc.run(program, args, { cwd: s.root, env: s.env, timeoutMs, outputCap: 256 * 1024 })
    const code = r.spawnError ? 127 : r.timedOut ? 124 : (r.code ?? 128)
    const entry: Step = { step, command: shown(s, program, args), code, ms: Math.round(r.ms), timedOut: r.timedOut, output: r.spawnError ?? r.output }
    log.push(entry)
    // ssh's own failure (255) before the remote command ran: the target is not there, or refused us.
    if (code === 255 || r.spawnError || (r.timedOut && step === "connect")) {
      const cause = r.timedOut ? "unreachable" : classify(entry.output)
      throw new ConnectError(cause, `${program} to ${s.target.user}@${s.target.host}:${s.target.port} failed (${step}): ${lastLine(entry.output) || `exit ${code}`}`)
    }
    return entry
  }

  function lastLine(text: string): string {
    return text.trim().split("\n").filter(Boolean).pop()?.trim() ?? ""
  }

  /** Runs `script` with the target's shell; returns its step record (any exit code but ssh's own 255). */
  export function run(s: Session, step: string, script: string, log: Step[], timeoutMs = s.target.stepTimeoutMs): Promise<Step> {
    const t = s.target
    return exec(s, step, "ssh", [...options(s), "-p", String(t.port), `${t.user}@${t.host}`, "--", script], timeoutMs, log)
  }

  /** Copies the local directory `from` to `to` on the target (which must not exist yet): scp -r over the same master. */
  export function copyDir(s: Session, from: string, to: string, log: Step[]): Promise<Step> {
    const t = s.target
    return exec(s, "transfer", "scp", [...options(s), "-q", "-r", "-p", "-P", String(t.port), from, `${t.user}@${t.host}:${to}`], t.stepTimeoutMs, log)
  }

  /** Ends the master connection (released on every path by the deploy's finally). */
  export async function close(s: Session): Promise<void> {
    if (!s.master) return
    s.master.stop.abort()
    await s.master.done.catch(() => undefined)
    s.master = undefined
    rmSync(s.controlPath, { force: true })
  }
}
