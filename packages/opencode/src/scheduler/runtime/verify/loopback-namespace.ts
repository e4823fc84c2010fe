import { readFileSync } from "node:fs"
import type { Proc } from "../process"

/**
 * A network namespace with only a loopback interface, for one service probe: the service, its capture and
 * its probe all enter it (`enter`), so the probe reaches the service on 127.0.0.1 and nothing any of them
 * sends can leave it (no interface but `lo`, no route).
 *
 * Held by a bubblewrap process (`--unshare-net`, which also brings `lo` up; measured on bwrap 0.8) that only
 * sleeps: the namespace lives exactly as long as it, and `--die-with-parent` ends it when we die, SIGKILL
 * included. Others join it with nsenter (util-linux), which needs CAP_SYS_ADMIN over the namespace: root.
 */
export namespace LoopbackNamespace {
  export interface Namespace {
    /** The holder's pid on the host: /proc/<pid>/ns/net is the namespace. */
    readonly pid: number
    /** The interfaces inside (only "lo" when it is what it should be). */
    readonly interfaces: readonly string[]
    /** The argv that runs `argv` inside the namespace. */
    enter(argv: readonly string[]): string[]
    /** TCP ports listening inside the namespace, from its /proc view (IPv4 and IPv6). */
    listeningPorts(): number[]
    /** Ends the holder and waits for it. */
    close(): Promise<void>
  }

  export type Opened = { ok: true; namespace: Namespace } | { ok: false; message: string }

  export async function open(options: { exec: (command: string, args: readonly string[], options: Proc.Options) => Promise<Proc.Result>; env: NodeJS.ProcessEnv; bwrap: string; nsenter: string; timeoutMs: number; signal?: AbortSignal }): Promise<Opened> {
    const stop = new AbortController()
    const onAbort = () => stop.abort()
    options.signal?.addEventListener("abort", onAbort, { once: true })
    let printed = ""
    let announce: ((pid: number) => void) | undefined
    const announced = new Promise<number>((resolve) => (announce = resolve))
    // No pid namespace: the holder's $$ is its pid on the host, which nsenter needs.
    const holder = options.exec(
      options.bwrap,
      ["--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--", "/bin/sh", "-c", 'echo "$$"; exec sleep infinity'],
      {
        cwd: "/",
        env: options.env,
        // A backstop only: close() ends it.
        timeoutMs: 24 * 3600_000,
        signal: stop.signal,
        onOutput: (chunk) => {
          printed += chunk.toString("utf8")
          const m = /^(\d+)\n/.exec(printed)
          if (m) announce?.(Number(m[1]))
        },
      },
    )
    const timer = new Promise<"timeout">((resolve) => {
      const t = setTimeout(() => resolve("timeout"), options.timeoutMs)
      t.unref?.()
      void holder.then(() => clearTimeout(t))
      void announced.then(() => clearTimeout(t))
    })
    const first = await Promise.race([announced, holder, timer])
    const close = async () => {
      stop.abort()
      await holder
      options.signal?.removeEventListener("abort", onAbort)
    }
    if (typeof first !== "number") {
      await close()
      const ended = await holder
      const why = first === "timeout" ? `it did not start within ${options.timeoutMs / 1000} s` : (ended.stderr || ended.spawnError || `bwrap exited with ${ended.code}`).trim()
      return { ok: false, message: `could not create the service's network namespace with bubblewrap (${why})` }
    }
    const pid = first
    const interfaces = interfacesOf(pid)
    return {
      ok: true,
      namespace: {
        pid,
        interfaces,
        enter: (argv) => [options.nsenter, `--net=/proc/${pid}/ns/net`, "--", ...argv],
        listeningPorts: () => listeningPorts(pid),
        close,
      },
    }
  }

  /** Interface names from /proc/<pid>/net/dev (two header lines, then "  lo: …"). */
  function interfacesOf(pid: number): string[] {
    try {
      return readFileSync(`/proc/${pid}/net/dev`, "utf8")
        .split("\n")
        .slice(2)
        .map((l) => l.split(":")[0]!.trim())
        .filter(Boolean)
    } catch {
      return []
    }
  }

  /** State 0A is LISTEN in /proc/net/tcp; the local port is the hex after the colon. */
  export function listeningPorts(pid: number): number[] {
    const ports = new Set<number>()
    for (const file of ["tcp", "tcp6"]) {
      let text: string
      try {
        text = readFileSync(`/proc/${pid}/net/${file}`, "utf8")
      } catch {
        continue
      }
      for (const line of text.split("\n").slice(1)) {
        const fields = line.trim().split(/\s+/)
        if (fields[3] !== "0A") continue
        const port = Number.parseInt(fields[1]?.split(":")[1] ?? "", 16)
        if (Number.isFinite(port)) ports.add(port)
      }
    }
    return [...ports].sort((a, b) => a - b)
  }
}
