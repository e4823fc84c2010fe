import { spawn, spawnSync } from "node:child_process"

/**
 * The one way AirCoding runs a program (gates, the final check, git, the engine launcher, the TUI, the
 * demo). test/read/one-runner.test.ts fails on a file of the product that spawns a process any other way,
 * unless it is listed here as an exception, one line each: "- `<path from the repository root>`: <why>".
 * A program that needs the person's terminal (the TUI) uses `terminal: true`.
 *
 * - `packages/opencode/src/tui/plugin.tsx`: runs inside the engine's TUI process, which must load nothing of
 *   the runtime (test/tui/plugin-imports.test.ts); it hands the terminal to the person's $EDITOR and waits, as
 *   OpenCode's own prompt editor does, and the person ends it: there is no tree to time out or kill.
 *
 * - The child gets its own process group (`detached`), so a timeout or an abort kills the whole tree it
 *   started — a shell's ctest, a make's compilers — with SIGTERM to `-pgid`, then SIGKILL after a grace.
 *   Killing only the shell (the old final check) left a hung ctest alive, holding the pipes open.
 * - When the leader exits but something it left behind still holds stdout/stderr open, the group is
 *   killed after `exitGraceMs`: the command is over, and its strays must not keep the caller waiting.
 * - Output is captured with a cap that keeps the head and the tail (the first error and the summary).
 * - The environment is always given explicitly: nothing ambient is inherited by accident.
 * - A result, never a rejection: exit code, signal, `timedOut`, `aborted`, `spawnError` are all fields.
 */
export namespace Proc {
  export const DEFAULT_OUTPUT_CAP = 8 * 1024 * 1024
  export const DEFAULT_KILL_GRACE_MS = 2_000
  export const DEFAULT_EXIT_GRACE_MS = 1_000

  export interface Options {
    cwd: string
    /** The child's whole environment (use `process.env` explicitly to inherit). */
    env: NodeJS.ProcessEnv
    /** Run `command` through `/bin/sh -c` (args must then be empty). */
    shell?: boolean
    /** Kill the tree after this long; none by default. */
    timeoutMs?: number
    /** Kill the tree when this aborts. */
    signal?: AbortSignal
    /** Written to stdin, which is then closed; stdin is /dev/null otherwise. */
    input?: string
    /** Bytes kept per stream and for the interleaved output (head half + tail half); `Infinity` keeps all. */
    outputCap?: number
    /** SIGTERM → SIGKILL delay. */
    killGraceMs?: number
    /** After the leader exits, how long its strays may hold the pipes before the group is killed. */
    exitGraceMs?: number
    /**
     * Default true: the child leads its own process group (the tree can be killed whole). False keeps it in
     * ours, for a child that must die with us even by SIGKILL, which no handler can forward (the engine
     * launched by `aircoding run`: a kill of our group must not leave an engine working on alone); a
     * timeout or abort then stops the child itself.
     */
    ownGroup?: boolean
    /** Sees every chunk of stdout and stderr as it arrives (a running gate's progress file); the capture is unchanged. */
    onOutput?: (chunk: Buffer) => void
    /**
     * The child takes over the person's terminal (the OpenCode TUI, an editor): stdin, stdout and stderr are
     * ours, nothing is captured, and it stays in our process group, since a process of a background group that
     * reads the terminal is stopped (SIGTTIN). The person ends it; a timeout or abort still stops it.
     */
    terminal?: boolean
  }

  export interface Result {
    /** Exit 0, not timed out, not aborted, started. */
    ok: boolean
    code: number | null
    signal: NodeJS.Signals | null
    timedOut: boolean
    aborted: boolean
    /** Set when the program could not start (`ENOENT: …`). */
    spawnError?: string
    ms: number
    /** stdout and stderr interleaved as they arrived. */
    output: string
    stdout: string
    stderr: string
    /** True when any capture dropped bytes in the middle. */
    truncated: boolean
  }

  const windows = process.platform === "win32"
  /** Groups still running, killed if this process exits first (a detached group would outlive us). */
  const live = new Set<number>()
  let exitHookInstalled = false

  /**
   * Our children live in their own groups, so a Ctrl-C or a SIGTERM to AirCoding does not reach them: they
   * are killed when this process exits, or is told to stop. On a signal nobody else listens to, the signal
   * is raised again after the kill so the process still ends as it would have.
   */
  function installExitHook(): void {
    if (exitHookInstalled) return
    exitHookInstalled = true
    process.on("exit", killAll)
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      const onSignal = () => {
        killAll()
        if (process.listenerCount(signal) === 1) {
          process.removeListener(signal, onSignal)
          process.kill(process.pid, signal)
        }
      }
      process.on(signal, onSignal)
    }
  }

  /** Kills every process group this process started and is still running (shutdown). */
  export function killAll(): void {
    for (const pid of live) killGroup(pid, "SIGKILL")
  }

  function killGroup(pid: number, signal: NodeJS.Signals): void {
    try {
      if (windows) spawn("taskkill", ["/pid", String(pid), "/T", "/F"], { windowsHide: true })
      else process.kill(-pid, signal)
    } catch {
      // the group is already gone
    }
  }

  /** Whether any process of the group `pgid` is still alive (for tests and diagnostics). */
  export function groupAlive(pgid: number): boolean {
    try {
      process.kill(-pgid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM"
    }
  }

  export function run(command: string, args: readonly string[], options: Options): Promise<Result & { pid?: number }> {
    installExitHook()
    const started = Date.now()
    const cap = options.outputCap ?? DEFAULT_OUTPUT_CAP
    const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS
    const group = options.ownGroup !== false && !windows && !options.terminal
    return new Promise((resolve) => {
      const all = new Capture(cap)
      const out = new Capture(cap)
      const err = new Capture(cap)
      let timedOut = false
      let aborted = false
      let spawnError: string | undefined
      let settled = false
      let hardKill: NodeJS.Timeout | undefined
      let strayKill: NodeJS.Timeout | undefined

      const child = spawn(command, [...args], {
        cwd: options.cwd,
        env: options.env,
        shell: options.shell ?? false,
        detached: group,
        stdio: options.terminal ? "inherit" : [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
        windowsHide: true,
      })
      const pid = child.pid
      if (pid !== undefined && group) live.add(pid)
      const signalTree = (signal: NodeJS.Signals) => {
        if (pid === undefined) return
        if (group || windows) killGroup(pid, signal)
        else child.kill(signal)
      }

      child.stdout?.on("data", (chunk: Buffer) => {
        out.push(chunk)
        all.push(chunk)
        options.onOutput?.(chunk)
      })
      child.stderr?.on("data", (chunk: Buffer) => {
        err.push(chunk)
        all.push(chunk)
        options.onOutput?.(chunk)
      })
      if (options.input !== undefined && child.stdin) {
        child.stdin.on("error", () => {}) // a child that exits without reading stdin: EPIPE is not our failure
        child.stdin.end(options.input)
      }

      const stop = () => {
        if (pid === undefined || hardKill) return
        signalTree("SIGTERM")
        hardKill = setTimeout(() => signalTree("SIGKILL"), grace)
        hardKill.unref?.()
      }
      const timer =
        options.timeoutMs !== undefined
          ? setTimeout(() => {
              timedOut = true
              stop()
            }, options.timeoutMs)
          : undefined
      const onAbort = () => {
        aborted = true
        stop()
      }
      if (options.signal?.aborted) onAbort()
      else options.signal?.addEventListener("abort", onAbort, { once: true })

      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        clearTimeout(hardKill)
        clearTimeout(strayKill)
        options.signal?.removeEventListener("abort", onAbort)
        if (pid !== undefined && group) {
          // Strays of a finished command (a backgrounded child) are part of it: they go with it.
          if (!windows && groupAlive(pid)) killGroup(pid, "SIGKILL")
          live.delete(pid)
        }
        resolve({
          ok: code === 0 && !timedOut && !aborted && !spawnError,
          code,
          signal,
          timedOut,
          aborted,
          ...(spawnError ? { spawnError } : {}),
          ms: Date.now() - started,
          output: all.text(),
          stdout: out.text(),
          stderr: err.text(),
          truncated: all.dropped > 0 || out.dropped > 0 || err.dropped > 0,
          ...(pid !== undefined ? { pid } : {}),
        })
      }
      child.on("error", (error: NodeJS.ErrnoException) => {
        spawnError = `${error.code ?? "error"}: ${error.message}`
        done(null, null)
      })
      child.on("exit", (code, signal) => {
        // 'close' waits for every holder of the pipes; a stray holding them must not hang the caller: its
        // group is killed, and if the pipes still do not close (a stray outside the group), we stop reading.
        strayKill = setTimeout(() => {
          if (pid !== undefined && group) killGroup(pid, "SIGKILL")
          const abandon = setTimeout(() => {
            child.stdout?.destroy()
            child.stderr?.destroy()
            done(code, signal)
          }, 500)
          abandon.unref?.()
        }, options.exitGraceMs ?? DEFAULT_EXIT_GRACE_MS)
        strayKill.unref?.()
      })
      child.on("close", (code, signal) => done(code, signal))
    })
  }

  export interface SyncOptions {
    cwd?: string
    env: NodeJS.ProcessEnv
    /** Killed (SIGKILL) after this long; required: a synchronous call blocks the whole process meanwhile. */
    timeoutMs: number
    /** Where the child's stderr goes: captured (default) or shown to the person (an install's progress). */
    stderr?: "capture" | "inherit"
    /** Run through `/bin/sh -c` (args must then be empty): a command line the person wrote ($EDITOR). */
    shell?: boolean
    /**
     * The child takes over the terminal until it exits (an editor the TUI hands the screen to): nothing is
     * captured. The caller blocks on purpose; `timeoutMs` may then be 0, no timeout, for the person ends it.
     */
    terminal?: boolean
  }

  /**
   * For the few short probes that answer before anything else can go on (is bwrap usable, the git identity,
   * the engine's config template at start-up): the same result shape as `run`, with a hard timeout. Never for
   * a build, a test or a model's command — those go through `run`, which kills whole process trees.
   */
  export function runSync(command: string, args: readonly string[], options: SyncOptions): Result {
    const started = Date.now()
    const r = spawnSync(command, [...args], {
      cwd: options.cwd,
      env: options.env,
      encoding: "utf8",
      timeout: options.timeoutMs || undefined,
      killSignal: "SIGKILL",
      shell: options.shell ?? false,
      stdio: options.terminal ? "inherit" : ["ignore", "pipe", options.stderr === "inherit" ? "inherit" : "pipe"],
      maxBuffer: DEFAULT_OUTPUT_CAP,
      windowsHide: true,
    })
    const error = r.error as NodeJS.ErrnoException | undefined
    const timedOut = error?.code === "ETIMEDOUT"
    const spawnError = error && !timedOut ? `${error.code ?? "error"}: ${error.message}` : undefined
    const stdout = r.stdout ?? ""
    const stderr = r.stderr ?? ""
    return {
      ok: r.status === 0 && !timedOut && !spawnError,
      code: r.status,
      signal: r.signal,
      timedOut,
      aborted: false,
      spawnError,
      ms: Date.now() - started,
      output: stdout + stderr,
      stdout,
      stderr,
      truncated: false,
    }
  }

  /** A one-line account of how a run ended, for logs and messages. */
  export function describe(result: Result, timeoutMs?: number): string {
    if (result.timedOut) return `did not finish within ${seconds(timeoutMs ?? result.ms)} and was stopped`
    if (result.aborted) return "was stopped (the run was aborted)"
    if (result.spawnError) return `could not start (${result.spawnError})`
    if (result.code !== null) return `exited with ${result.code}`
    return `was killed by ${result.signal}`
  }

  export function seconds(ms: number): string {
    return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`
  }

  /** Keeps the first half and the last half of the cap; what falls between is counted, not kept. */
  class Capture {
    private head: Buffer[] = []
    private headSize = 0
    private tail: Buffer[] = []
    private tailSize = 0
    dropped = 0
    constructor(private readonly cap: number) {}

    push(chunk: Buffer): void {
      const half = this.cap / 2
      if (this.headSize < half) {
        const take = Math.min(chunk.length, Number.isFinite(half) ? half - this.headSize : chunk.length)
        this.head.push(chunk.subarray(0, take))
        this.headSize += take
        chunk = chunk.subarray(take)
        if (chunk.length === 0) return
      }
      this.tail.push(chunk)
      this.tailSize += chunk.length
      // Trim the tail back to half the cap, dropping whole old chunks first, then part of the oldest.
      while (this.tailSize > half && this.tail.length > 0) {
        const first = this.tail[0]!
        const excess = this.tailSize - half
        if (first.length <= excess) {
          this.tail.shift()
          this.tailSize -= first.length
          this.dropped += first.length
        } else {
          this.tail[0] = first.subarray(excess)
          this.tailSize -= excess
          this.dropped += excess
        }
      }
    }

    text(): string {
      const head = Buffer.concat(this.head).toString("utf8")
      const tail = Buffer.concat(this.tail).toString("utf8")
      if (this.dropped === 0) return head + tail
      return `${head}\n[… ${this.dropped} bytes of output dropped …]\n${tail}`
    }
  }
}
