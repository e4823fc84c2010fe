import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { mkdirSync } from "node:fs"
import os from "node:os"
import path from "node:path"
import { z } from "zod"
import { Proc } from "../process.ts"

/**
 * A distcc build farm behind the compiler cache: ccache runs the preprocessor and looks the object up
 * locally, and only a miss goes to the farm (ccache's prefix command, CCACHE_PREFIX=distcc). distcc itself
 * falls back to a local compile when a host does not answer, so a host that dies mid-build slows the build
 * down and never fails it; its warnings in distcc's log are how the run learns the farm degraded.
 */
export namespace Farm {
  export const Host = z
    .object({
      host: z.string().min(1).regex(/^[^\s/:@,]+$/, "a host name or IPv4 address (no port, no spaces)"),
      port: z.number().int().min(1).max(65535).default(3632).describe("distccd's TCP port (default 3632)"),
      slots: z.number().int().min(1).max(1024).default(4).describe("compile jobs this host takes at once (distcc's /LIMIT)"),
    })
    .strict()
  export type Host = z.infer<typeof Host>

  export const Rules = z
    .object({
      tool: z.literal("distcc").default("distcc").describe("the farm's client: distcc (icecream is not supported yet)"),
      hosts: z.array(Host).min(1).describe("the farm's hosts: { host, port, slots }"),
    })
    .strict()
  export type Rules = z.infer<typeof Rules>

  /** distcc's host list: `host:port/slots` each; no `localhost`, so every compile is sent out or falls back. */
  export function distccHosts(rules: Rules): string {
    return rules.hosts.map((h) => `${h.host}:${h.port}/${h.slots}`).join(" ")
  }

  /** The compile jobs the farm takes at once: what the job budget adds for a build's compiles. */
  export function slots(rules: Rules | undefined): number {
    return rules ? rules.hosts.reduce((sum, h) => sum + h.slots, 0) : 0
  }

  /** The slots of a DISTCC_HOSTS value (`host:port/N` each; a host without /N counts distcc's default, 2). */
  export function slotsInHosts(hosts: string | undefined): number {
    if (!hosts) return 0
    return hosts
      .split(/\s+/)
      .filter((h) => h && !h.startsWith("--") && h !== "localhost" && !h.startsWith("localhost/"))
      .reduce((sum, h) => sum + (Number(/\/(\d+)/.exec(h)?.[1]) || 2), 0)
  }

  /**
   * The environment a build uses the farm with. `stateDir` is where distcc keeps its locks and its backoff
   * notes about dead hosts: inside the cache directory, the place outside the worktree a sandboxed build may
   * write. `log` receives distcc's warnings (a host that failed, a compile run locally instead).
   */
  export function env(rules: Rules | undefined, where: { stateDir: string; log?: string; cache?: "ccache" | "sccache" }): Record<string, string> {
    if (!rules) return {}
    mkdirSync(where.stateDir, { recursive: true })
    const common: Record<string, string> = {
      DISTCC_HOSTS: distccHosts(rules),
      DISTCC_DIR: where.stateDir,
      // A dead host: compile locally and go on (distcc's default, said here because the run depends on it).
      DISTCC_FALLBACK: "1",
      ...(where.log ? { DISTCC_LOG: where.log, DISTCC_VERBOSE: "1" } : {}),
    }
    // Behind ccache the farm is its prefix command; with no ccache, distcc is the compiler launcher itself.
    if (where.cache === "ccache") return { ...common, CCACHE_PREFIX: "distcc" }
    return { ...common, CMAKE_C_COMPILER_LAUNCHER: "distcc", CMAKE_CXX_COMPILER_LAUNCHER: "distcc" }
  }

  /** What one build's distcc log says: compiles each host ran, and the hosts that failed (a compile ran locally instead). */
  export const Seen = z
    .object({ remote: z.record(z.string(), z.number().int().nonnegative()), failedHosts: z.array(z.string()), localFallbacks: z.number().int().nonnegative() })
    .strict()
  export type Seen = z.infer<typeof Seen>

  export function readLog(text: string): Seen {
    const remote: Record<string, number> = {}
    const failed = new Set<string>()
    let localFallbacks = 0
    // distcc says "exec on H" when it picks a host, before it connects: a compile counts for H only when no refused
    // connection, "running locally instead" or "retrying locally" of the same distcc process follows it.
    const picked = new Map<string, string>()
    const settle = (pid: string) => {
      const host = picked.get(pid)
      if (host) remote[host] = (remote[host] ?? 0) + 1
      picked.delete(pid)
    }
    for (const line of text.split(/\r?\n/)) {
      const pid = /^distcc\[(\d+)\]/.exec(line)?.[1] ?? ""
      const exec = /\bexec on ([^:\s]+:\d+)/.exec(line)
      if (exec) {
        settle(pid)
        picked.set(pid, exec[1]!)
      }
      const refused = /connect to ([^\s:]+):?\s*(?:port )?(\d+)? failed/.exec(line) ?? /connect to ([^\s:]+):(\d+) failed/.exec(line)
      if (refused && refused[2]) {
        failed.add(`${refused[1]}:${refused[2]}`)
        picked.delete(pid)
      }
      const lost = /failed to distribute .* to ([^\s,]+?)(?:\/\d+)?,/.exec(line)
      if (lost) failed.add(lost[1]!.replace(/\/\d+$/, ""))
      // distcc 3.4: "failed to distribute X to H, running locally instead" (no connection), "remote compilation of X failed, retrying locally" (lost mid-compile).
      if (/running locally instead|retrying locally/.test(line)) {
        localFallbacks++
        picked.delete(pid)
      }
    }
    for (const pid of [...picked.keys()]) settle(pid)
    return { remote, failedHosts: [...failed].sort(), localFallbacks }
  }

  /** The lines of distcc's verbose log a person needs: errors, warnings, and which host ran each compile. */
  export function noteworthy(text: string): string {
    return text
      .split(/\r?\n/)
      .filter((line) => /ERROR|Warning|locally|exec on /.test(line))
      .join("\n")
  }

  export function describe(seen: Seen): string {
    const sent = Object.values(seen.remote).reduce((a, b) => a + b, 0)
    const lost = seen.failedHosts.length ? `; ${seen.failedHosts.join(", ")} failed, ${seen.localFallbacks} compile(s) run locally` : ""
    return `farm: ${sent} compile(s) sent${lost}`
  }

  export async function readLogFile(file: string): Promise<Seen | undefined> {
    try {
      return readLog(await readFile(file, "utf8"))
    } catch {
      return undefined
    }
  }

  export type Probe = { host: string; ok: boolean; detail: string }

  /**
   * One host checked the way a build uses it: a tiny C file compiled through it alone, with no local fallback
   * and a fresh state directory (no backoff from an earlier failure). Refused, garbage or a wrong object: said.
   */
  export async function probe(host: Host, options: { compiler?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Probe> {
    const name = `${host.host}:${host.port}`
    const dir = await mkdtemp(path.join(os.tmpdir(), "aircoding-farm-"))
    try {
      await writeFile(path.join(dir, "probe.c"), "int aircoding_farm_probe(int x) { return x * 2; }\n")
      // distcc makes its lock and state folders inside DISTCC_DIR, never DISTCC_DIR itself: without it every host is "disliked".
      await mkdir(path.join(dir, "state"), { recursive: true })
      const result = await Proc.run("distcc", [options.compiler ?? "cc", "-c", "probe.c", "-o", "probe.o"], {
        cwd: dir,
        env: probeEnv(options.env ?? process.env, name, path.join(dir, "state")),
        timeoutMs: options.timeoutMs ?? 30_000,
      })
      if (result.spawnError || result.code === 127) return { host: name, ok: false, detail: "distcc is not installed (apt-get install distcc)" }
      if (result.ok) {
        const object = await readFile(path.join(dir, "probe.o")).catch(() => undefined)
        if (object && object.subarray(0, 4).toString("latin1") === "\x7fELF") return { host: name, ok: true, detail: `compiled a test file through ${name}` }
        return { host: name, ok: false, detail: `${name} answered, but the object it sent back is not a compiled file` }
      }
      return { host: name, ok: false, detail: `${name}: ${explain(result.output, result.timedOut)}` }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }

  /** The host alone, no local fallback, a fresh state directory; a build's log settings dropped. */
  function probeEnv(base: NodeJS.ProcessEnv, name: string, stateDir: string): NodeJS.ProcessEnv {
    const { DISTCC_LOG: _log, DISTCC_VERBOSE: _verbose, CCACHE_PREFIX: _prefix, ...rest } = base
    return { ...rest, DISTCC_HOSTS: `${name}/1`, DISTCC_FALLBACK: "0", DISTCC_DIR: stateDir }
  }

  /** distcc's error output in words a person acts on. */
  export function explain(output: string, timedOut = false): string {
    if (timedOut) return "no answer in time (the host or the network is down, or a firewall drops the port)"
    if (/Connection refused/i.test(output)) return "connection refused: no distccd listens on that port"
    if (/No route to host|Network is unreachable|Name or service not known|failed to look up/i.test(output)) return "cannot be reached (name or network)"
    if (/failed to write|Connection reset|bad protocol|mismatch|unexpected|failed to read|token|eof/i.test(output))
      return "answered with something that is not distcc's protocol (garbage, or another service on that port)"
    if (/access denied|not allowed|--allow/i.test(output)) return "distccd refused us (its --allow list)"
    const first = output.split(/\r?\n/).find((line) => line.trim()) ?? "failed"
    return `the test compile failed: ${first.trim()}`
  }
}
