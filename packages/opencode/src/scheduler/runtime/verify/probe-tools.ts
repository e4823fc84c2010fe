import { accessSync, constants, readFileSync } from "node:fs"
import { delimiter, join } from "node:path"

/**
 * The programs a service probe drives, found before anything starts: a missing one is a verdict naming it
 * and the command that installs it, never a probe that silently passes or a spawn error mid-run.
 */
export namespace ProbeTools {
  export interface Tool {
    /** The program's name. */
    name: string
    /** The Debian/Ubuntu package that ships it. */
    debian: string
    /** Why the probe needs it, for the message. */
    purpose: string
  }

  export const TOOLS: readonly Tool[] = [
    { name: "bwrap", debian: "bubblewrap", purpose: "to hold the service's network namespace and fence its files" },
    { name: "nsenter", debian: "util-linux", purpose: "to start the service, its capture and its probe inside that namespace" },
    { name: "setpriv", debian: "util-linux", purpose: "to end the capture when AirCoding dies" },
    { name: "tcpdump", debian: "tcpdump", purpose: "to capture the service's traffic" },
  ]

  /** tcpdump and nsenter sit in sbin on some systems, which a user's PATH may lack. */
  const SBIN = ["/usr/local/sbin", "/usr/sbin", "/sbin"]

  export type Found = { ok: true; paths: Record<string, string> } | { ok: false; tool: Tool; install: string; message: string }

  export function find(env: Readonly<Record<string, string | undefined>>, tools: readonly Tool[] = TOOLS): Found {
    const paths: Record<string, string> = {}
    for (const tool of tools) {
      const path = which(tool.name, env)
      if (!path) {
        const install = `sudo apt-get install -y ${tool.debian} (Debian/Ubuntu; Fedora: sudo dnf install ${tool.debian})`
        return { ok: false, tool, install, message: `${tool.name} is not installed, and the service probe needs it ${tool.purpose}: install it with ${install}, then run the probe again` }
      }
      paths[tool.name] = path
    }
    return { ok: true, paths }
  }

  export function which(name: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
    for (const dir of [...(env.PATH ?? "").split(delimiter).filter(Boolean), ...SBIN]) {
      const candidate = join(dir, name)
      try {
        accessSync(candidate, constants.X_OK)
        return candidate
      } catch {
        // next
      }
    }
    return undefined
  }

  /** Capability bits (linux/capability.h). */
  const CAP_NET_RAW = 13
  const CAP_SYS_ADMIN = 21

  /**
   * Whether this process may do what the probe does: join the namespace it made (nsenter: CAP_SYS_ADMIN)
   * and capture there (tcpdump: CAP_NET_RAW). Measured here: root has both; a user does not, and
   * `nsenter -U -n` into bwrap's unprivileged namespace is refused too ("reassociate to namespace 'ns/net'
   * failed: Operation not permitted"); a container's root without CAP_SYS_ADMIN cannot start bwrap at all.
   */
  export function privileges(status = readStatus()): { ok: true } | { ok: false; message: string } {
    const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(status)?.[1]
    const caps = effective ? BigInt(`0x${effective}`) : 0n
    const lacking = [
      [CAP_SYS_ADMIN, "CAP_SYS_ADMIN (to start the service, its capture and its probe in the service's network namespace)"],
      [CAP_NET_RAW, "CAP_NET_RAW (for tcpdump to capture there)"],
    ].filter(([bit]) => (caps & (1n << BigInt(bit as number))) === 0n)
    if (lacking.length === 0) return { ok: true }
    return {
      ok: false,
      message: `the service probe needs ${lacking.map(([, why]) => why).join(" and ")}, which this process lacks: run AirCoding as root (sudo, or a CI job's root), or leave service tasks to a machine where it runs as root`,
    }
  }

  function readStatus(): string {
    try {
      return readFileSync("/proc/self/status", "utf8")
    } catch {
      return ""
    }
  }
}
