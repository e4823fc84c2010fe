import { createHash } from "node:crypto"
import { existsSync, mkdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { Proc } from "../process"
import { DeployRules } from "./rules"

/**
 * ssh and scp to one target, through the one process runner. The user's ssh config and agent apply
 * (the environment is passed on); AirCoding never opens the identity file, it names it to ssh. One master
 * connection per target carries every step (ControlMaster), so a deploy pays the handshake once; it is
 * bounded (ControlPersist) and found again after a crash, so a killed AirCoding leaves none behind for long.
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
    /** How long the master outlives its last step (ControlPersist): its bound when AirCoding dies without close(). */
    idleS: number
  }

  /** The master's idle bound: steps follow each other within seconds, a killed AirCoding's master is gone after this. */
  export const MASTER_IDLE_S = 30

  /** sun_path holds 108 bytes, and ssh binds `<ControlPath>.<16 random chars>` first, then renames it. */
  const SOCKET_PATH_MAX = 88

  /**
   * The control socket is the same for every process of the project that deploys to this target (a run
   * resumed after a crash finds the master the dead one left, and ends it): under the run's `.air/local/ssh/`,
   * or in the system's temp dir when that path is too long for a socket. `purpose` keeps doctor's apart.
   */
  export function open(root: string, target: DeployRules.Target, env: NodeJS.ProcessEnv = process.env, o: { purpose?: "deploy" | "doctor"; idleS?: number } = {}): Session {
    const key = createHash("sha256").update(`${root}\0${target.name}\0${o.purpose ?? "deploy"}`).digest("hex").slice(0, 16)
    const inRun = join(root, DeployRules.SSH_DIR, key)
    const controlPath = Buffer.byteLength(inRun) <= SOCKET_PATH_MAX ? inRun : join(tmpdir(), `air-ssh-${key}`)
    return { target, root, env, controlPath, idleS: Math.max(1, Math.round(o.idleS ?? MASTER_IDLE_S)) }
  }

  /**
   * The master connection: one handshake for the whole deploy (each step's ssh then rides on it). ssh
   * detaches it (ControlPersist) once connected and authenticated, so it is never our child: it ends on
   * close(), or by itself `idleS` after its last step when AirCoding was killed. A master a dead process
   * left on this socket is ended first.
   */
  export async function connect(s: Session, log: Step[]): Promise<void> {
    const t = s.target
    await endMaster(s, log, "stale-master")
    mkdirSync(dirname(s.controlPath), { recursive: true, mode: 0o700 })
    const args = [...options(s, true), "-p", String(t.port), `${t.user}@${t.host}`, "true"]
    const r = await Proc.run("ssh", args, { cwd: s.root, env: s.env, timeoutMs: t.stepTimeoutMs })
    const code = r.spawnError ? 127 : r.timedOut ? 124 : (r.code ?? 128)
    const output = r.spawnError ?? r.output
    log.push({ step: "connect", command: shown(s, "ssh", args), code, ms: Math.round(r.ms), timedOut: r.timedOut, output })
    if (code !== 0) {
      await endMaster(s, log, "connect-cleanup")
      throw new ConnectError(r.timedOut ? "unreachable" : classify(output), `ssh to ${t.user}@${t.host}:${t.port} failed (connect): ${lastLine(output) || (r.timedOut ? "no answer in time" : `exit ${code}`)}`)
    }
  }

  /** Ends the master on the socket, if one listens there (`ssh -O exit`), and removes the socket. */
  async function endMaster(s: Session, log: Step[] | undefined, step: string): Promise<void> {
    if (!existsSync(s.controlPath)) return
    const t = s.target
    const args = ["-o", `ControlPath=${s.controlPath}`, "-o", "LogLevel=ERROR", "-O", "exit", "-p", String(t.port), `${t.user}@${t.host}`]
    const r = await Proc.run("ssh", args, { cwd: s.root, env: s.env, timeoutMs: 10_000 })
    log?.push({ step, command: shown(s, "ssh", args), code: r.code ?? 124, ms: Math.round(r.ms), timedOut: r.timedOut, output: r.output })
    rmSync(s.controlPath, { force: true })
  }

  /** Options shared by ssh and scp; the identity file appears only here, and evidence shows it as <identity>. */
  export function options(s: Session, master = false): string[] {
    const t = s.target
    const seconds = Math.max(1, Math.ceil(Math.min(t.stepTimeoutMs, 30_000) / 1000))
    const out = [
      // First given wins in ssh: these override a ControlMaster/ControlPersist of the user's ssh config.
      ...(master ? ["-o", "ControlMaster=yes", "-o", `ControlPersist=${s.idleS}`] : ["-o", "ControlMaster=no"]),
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
    await endMaster(s, undefined, "close").catch(() => undefined)
  }
}
