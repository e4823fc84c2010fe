import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Sandbox } from "../sandbox/sandbox"

/**
 * The sandboxes of one capture: the one that holds Xvfb and the program (the project's fence), and the small
 * ones the probes (xwininfo, xwd) run in to reach its display.
 *
 * Its own /tmp and network namespace make the display its own whatever its number (`-displayfd` picks it, in
 * there usually :0): no race with the user's display or another capture, nothing to lock. The X socket
 * directory (/tmp/.X11-unix inside) is a host directory of this capture, which the probes bind too. The probes
 * need a network namespace of their own as well: an X client tries the abstract socket first, and the
 * machine's own display on the same number would answer it (tested).
 *
 * A shell inside (the driver) speaks to the capture on its stdout ("air-capture: display 0", "… exit 139");
 * the program's stdout and stderr go to files, so the program cannot forge the protocol.
 */
export namespace DisplaySandbox {
  export const SOCKETS_INSIDE = "/tmp/.X11-unix"
  export const OUTPUT_INSIDE = "/tmp/.air-capture"
  export const PROBE_INSIDE = "/tmp/.air-probe"
  const PROTOCOL = "air-capture: "
  /** Bytes of each of the program's streams kept on disk: the rest is read and dropped (the program never blocks on it). */
  export const STREAM_DISK_CAP = 1024 * 1024

  /** Host directories of one capture: the display's sockets, the program's output, the probes' files. */
  export type Dirs = { work: string; sockets: string; output: string; probe: string }

  const WORK_PREFIX = "air-x-"
  /** In each work dir: the pid of the process whose capture it is. */
  const OWNER_FILE = "owner"

  /** Short, private; the caller removes `work` at the end. Dirs of captures whose process died are swept first. */
  export function makeDirs(root = tmpdir()): Dirs {
    sweep(root)
    const work = mkdtempSync(join(root, WORK_PREFIX))
    writeFileSync(join(work, OWNER_FILE), String(process.pid))
    const dirs = { work, sockets: join(work, "x11"), output: join(work, "out"), probe: join(work, "probe") }
    for (const dir of [dirs.sockets, dirs.output, dirs.probe]) mkdirSync(dir)
    // Xvfb expects the sticky, world-writable /tmp/.X11-unix it would make itself.
    chmodSync(dirs.sockets, 0o1777)
    return dirs
  }

  /**
   * Removes the work dirs of captures whose process is gone: a SIGKILL runs no `finally`, and bwrap's
   * --die-with-parent ends the processes but not the files. A dir without its owner file is being made: kept.
   */
  export function sweep(root = tmpdir()): string[] {
    const removed: string[] = []
    let names: string[]
    try {
      names = readdirSync(root).filter((n) => n.startsWith(WORK_PREFIX))
    } catch {
      return removed
    }
    for (const name of names) {
      const dir = join(root, name)
      let pid: number
      try {
        pid = Number(readFileSync(join(dir, OWNER_FILE), "utf8"))
      } catch {
        continue
      }
      if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue
      rmSync(dir, { recursive: true, force: true })
      removed.push(dir)
    }
    return removed
  }

  function alive(pid: number): boolean {
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM"
    }
  }

  /** What the driver said so far. */
  export type State = { display?: number; started?: number; exit?: number; displayFailed?: string; ended?: boolean }

  /** Reads the driver's lines from the sandbox's output chunks into `state` (other lines, bwrap's own, are skipped). */
  export function protocolReader(state: State): (chunk: Buffer) => void {
    let pending = ""
    return (chunk) => {
      pending += chunk.toString("utf8")
      let nl: number
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl)
        pending = pending.slice(nl + 1)
        if (!line.startsWith(PROTOCOL)) continue
        const [word, value = ""] = line.slice(PROTOCOL.length).split(" ")
        if (word === "display") state.display = Number(value)
        else if (word === "started") state.started = performance.now()
        else if (word === "exit") state.exit = Number(value)
        else if (word === "display-failed") state.displayFailed = value
      }
    }
  }

  export type ProgramInput = {
    policy: Sandbox.Policy
    /** Added to the policy's environment (the spec's, and the marker). */
    env: Record<string, string>
    dirs: Dirs
    width: number
    height: number
    /** Absolute, inside the worktree. */
    cwd: string
    command: string
    args: readonly string[]
  }

  /** bwrap's arguments for the sandbox of Xvfb and the program. */
  export function programArgs(p: ProgramInput): string[] {
    return [
      ...Sandbox.options({ ...p.policy, env: { ...p.policy.env, ...p.env } }),
      "--bind", p.dirs.sockets, SOCKETS_INSIDE,
      "--bind", p.dirs.output, OUTPUT_INSIDE,
      "--", "/bin/sh", "-c", DRIVER, "air-capture", String(p.width), String(p.height), p.cwd, p.command, ...p.args,
    ]
  }

  /** bwrap's arguments for one probe: `script` run by sh with DISPLAY set, the probe directory writable. */
  export function probeArgs(p: { dirs: Dirs; path: string; display: number; marker: string; script: string }): string[] {
    return [
      "--unshare-all", "--die-with-parent", "--new-session",
      "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/tmp",
      "--bind", p.dirs.sockets, SOCKETS_INSIDE,
      "--bind", p.dirs.probe, PROBE_INSIDE,
      "--clearenv", "--setenv", "PATH", p.path, "--setenv", "DISPLAY", `:${p.display}`, "--setenv", "AIR_UI_CAPTURE", p.marker,
      "--", "/bin/sh", "-c", p.script,
    ]
  }

  /**
   * Runs inside the sandbox: $1 $2 the screen size, $3 the program's directory, then the program and its
   * arguments. Xvfb reports its display number on a FIFO (`-displayfd`) once it listens; the program starts
   * only then. The shell stays to report the program's exit status and keeps the display up until stopped.
   */
  const DRIVER = [
    `W=$1 H=$2 DIR=$3; shift 3`,
    `say() { echo "${PROTOCOL}$*"; }`,
    `mkfifo /tmp/.air-displayfd || { say display-failed mkfifo; exit 0; }`,
    `Xvfb -displayfd 9 -screen 0 "\${W}x\${H}x24" -nolisten tcp -noreset -nocursor 9>/tmp/.air-displayfd >${OUTPUT_INSIDE}/xvfb.log 2>&1 &`,
    `xvfb=$!`,
    `n=`,
    `read n </tmp/.air-displayfd`,
    `if [ -z "$n" ]; then wait $xvfb; say display-failed $?; exit 0; fi`,
    `say display $n`,
    // Each stream through a FIFO: its first STREAM_DISK_CAP bytes to a file, the rest drained to /dev/null, so a
    // program that prints without end neither fills the disk nor blocks on a full pipe. head unbuffered
    // (stdbuf -o0): a buffered head held a running program's last lines, lost when the capture stopped it; dd
    // counts a pipe's short reads as blocks and stopped at a third of the cap.
    `mkfifo /tmp/.air-stdout /tmp/.air-stderr || { say display-failed mkfifo; exit 0; }`,
    `{ stdbuf -o0 head -c ${STREAM_DISK_CAP} >${OUTPUT_INSIDE}/stdout; cat >/dev/null; } </tmp/.air-stdout &`,
    `out=$!`,
    `{ stdbuf -o0 head -c ${STREAM_DISK_CAP} >${OUTPUT_INSIDE}/stderr; cat >/dev/null; } </tmp/.air-stderr &`,
    `err=$!`,
    // No core file lands in the worktree from a crash; stdin is empty.
    `( cd "$DIR" && ulimit -c 0 && DISPLAY=":$n" && export DISPLAY && exec "$@" ) </dev/null >/tmp/.air-stdout 2>/tmp/.air-stderr &`,
    `prog=$!`,
    `say started`,
    `wait $prog`,
    `code=$?`,
    // The streams' last bytes reach their files before the exit is told; bounded, a child of the program may
    // still hold them open.
    `( sleep 2; kill $out $err 2>/dev/null ) &`,
    `guard=$!`,
    `wait $out $err`,
    `kill $guard 2>/dev/null`,
    `say exit $code`,
    `wait $xvfb`,
    `say display-ended $?`,
  ].join("\n")
}
