import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/**
 * A real OpenSSH server on 127.0.0.1 for the deploy tests: Debian's /usr/sbin/sshd on a free port, with a
 * throwaway host key and user key in a temp dir (run as root: PermitRootLogin yes, AuthorizedKeysFile in
 * the temp dir), and a target dir standing for the machine.
 */
export type Sshd = {
  dir: string
  port: number
  user: string
  /** The user key the server accepts, and one it refuses. */
  identity: string
  strangerIdentity: string
  knownHosts: string
  /** The target machine's dir: releases go under it. */
  targetDir: string
  stop(): Promise<void>
}

export const SSHD = "/usr/sbin/sshd"

/** The connection fields of a deploy target that reaches this server (its user, port, key and host key). */
export function connectionTo(sshd: Sshd) {
  return { host: "127.0.0.1", user: sshd.user, port: sshd.port, identityFile: sshd.identity, knownHostsFile: sshd.knownHosts }
}

export function sshdUsable(): boolean {
  return process.getuid?.() === 0 && spawnSync(SSHD, ["-V"]).status !== null && spawnSync("ssh", ["-V"]).status === 0
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port
      srv.close(() => resolve(port))
    })
    srv.on("error", reject)
  })
}

function keygen(file: string): void {
  const r = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "air-test", "-f", file])
  if (r.status !== 0) throw new Error(`ssh-keygen failed: ${r.stderr}`)
}

export async function startSshd(): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), "air-sshd-"))
  keygen(join(dir, "host_key"))
  keygen(join(dir, "user_key"))
  keygen(join(dir, "stranger_key"))
  writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "user_key.pub")), { mode: 0o600 })
  const port = await freePort()
  const hostPub = readFileSync(join(dir, "host_key.pub"), "utf8").trim().split(" ").slice(0, 2).join(" ")
  writeFileSync(join(dir, "known_hosts"), `[127.0.0.1]:${port} ${hostPub}\n`)
  const config = join(dir, "sshd_config")
  writeFileSync(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host_key")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "PermitRootLogin yes",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no",
      "MaxStartups 50",
      "MaxSessions 50",
      // scp speaks SFTP by default (OpenSSH ≥ 9).
      "Subsystem sftp /usr/lib/openssh/sftp-server",
      "",
    ].join("\n"),
  )
  // Privilege separation needs this dir (absent in containers that never ran sshd).
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 })
  const targetDir = join(dir, "target")
  mkdirSync(targetDir)
  // The target stands for a plain machine: the login user's ~/.bashrc (which bash sources for ssh commands)
  // is masked in a mount namespace of sshd's own, where unshare is allowed (a shared dev box's may take seconds).
  const bashrc = join(process.env.HOME && process.getuid?.() !== 0 ? process.env.HOME : "/root", ".bashrc")
  const masked = existsSync(bashrc) && spawnSync("unshare", ["--mount", "--propagation", "private", "true"]).status === 0
  const child: ChildProcess = masked
    ? spawn("unshare", ["--mount", "--propagation", "private", "sh", "-c", `mount --bind /dev/null ${bashrc}; exec ${SSHD} -D -e -f ${config}`], { stdio: ["ignore", "ignore", "pipe"] })
    : spawn(SSHD, ["-D", "-e", "-f", config], { stdio: ["ignore", "ignore", "pipe"] })
  let log = ""
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sshd did not start in 15 s: ${log}`)), 15_000)
    child.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString()
      if (log.includes("Server listening")) {
        clearTimeout(timer)
        resolve()
      }
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`sshd exited (${code}): ${log}`))
    })
  })
  child.stderr!.resume()
  return {
    dir,
    port,
    user: "root",
    identity: join(dir, "user_key"),
    strangerIdentity: join(dir, "stranger_key"),
    knownHosts: join(dir, "known_hosts"),
    targetDir,
    async stop() {
      child.removeAllListeners("exit")
      child.kill("SIGTERM")
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * A small service for the plain-commands preset: `bin/app` records the VERSION of the release it runs from
 * and sleeps, under a pidfile in the target dir. The smoke test checks that the running version is the
 * deployed one.
 */
export function pidfileService(targetDir: string) {
  const pid = join(targetDir, "service.pid")
  const logFile = join(targetDir, "service.log")
  const running = join(targetDir, "running-version")
  return {
    pid,
    running,
    restart: {
      preset: "commands" as const,
      start: `(setsid ./bin/app </dev/null >>${logFile} 2>&1 & echo $! > ${pid})`,
      stop: `if [ -f ${pid} ]; then kill $(cat ${pid}) 2>/dev/null; rm -f ${pid}; fi; rm -f ${running}`,
      status: `test -f ${pid} && kill -0 $(cat ${pid}) 2>/dev/null && test -f ${running}`,
      logs: `tail -n 50 ${logFile}`,
    },
    smoke: `test "$(cat ${running})" = "$(cat VERSION)"`,
    app: `#!/bin/sh\ncd "$(dirname "$0")/.."\necho "app $(cat VERSION) starting"\ncat VERSION > ${running}\nexec sleep 600\n`,
    /** Stops what the tests started on the "machine". */
    kill() {
      try {
        process.kill(Number(readFileSync(pid, "utf8").trim()))
      } catch {
        // not running
      }
    },
  }
}
