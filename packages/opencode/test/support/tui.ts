import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { TerminalText } from "../../src/text/terminal-text"

/**
 * The one driver of a real TUI in a pseudo-terminal: a tmux server of its own (socket in the test's
 * sandbox, so tests never meet), a fixed size (200x50 unless told), the screen read back as text. The
 * server is started with the environment given, so the program sees exactly that environment (tmux hands
 * its server's environment to new panes). Each program runs in a window of its own (`open`, then
 * `reopen` for the next start); when it exits, its window stays and shows `EXITED <code>` below what it
 * printed. Waits poll the screen; there is no sleep a test could depend on.
 */
export class TuiDriver {
  private readonly windows: string[] = []

  private constructor(
    private readonly opts: TuiDriver.Options,
    private readonly socket: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Starts the tmux server and `opts.command` in its first window, named "first". */
  static start(opts: TuiDriver.Options): TuiDriver {
    const driver = new TuiDriver(opts, join(opts.root, "tmux.sock"), { ...opts.env, TERM: "xterm-256color" })
    driver.open("first")
    return driver
  }

  /** Runs the command again (or another one) in a new window, which becomes the one read and typed into. */
  reopen(name: string, command = this.opts.command): void {
    this.open(name, command)
  }

  private open(name: string, command = this.opts.command): void {
    const script = join(this.opts.root, `tui-${name}.sh`)
    // The window runs a script: no quoting of the command through tmux; the program's stderr goes to a
    // file (the engine logs there), its stdout (the exit hint) stays on screen with its exit code.
    const quoted = command.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ")
    const stderr = join(this.opts.root, `tui-${name}-stderr.txt`)
    writeFileSync(script, `#!/bin/sh\ncd '${this.opts.cwd}'\n${quoted} 2>'${stderr}'\necho "EXITED $?"\nexec sleep 3600\n`, { mode: 0o755 })
    if (!this.windows.length)
      this.tmux(["new-session", "-d", "-s", "air", "-n", name, "-x", String(this.opts.width ?? 200), "-y", String(this.opts.height ?? 50), script])
    else this.tmux(["new-window", "-a", "-t", this.target, "-n", name, script])
    this.windows.push(name)
  }

  private get target(): string {
    return `air:${this.windows[this.windows.length - 1]}`
  }

  private tmux(args: string[]): string {
    return execFileSync("tmux", ["-S", this.socket, ...args], { env: this.env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  }

  /** The visible screen of the current window, one string per row, trailing spaces removed. */
  screen(): string {
    try {
      return this.tmux(["capture-pane", "-p", "-t", this.target])
        .split("\n")
        .map((l) => l.trimEnd())
        .join("\n")
    } catch {
      return ""
    }
  }

  /** Columns [from, to) of every row: one panel of the screen (the sidebar, a dialog). */
  region(from: number, to = 10_000): string {
    return this.screen()
      .split("\n")
      .map((l) => columns(l, from, to).trimEnd())
      .filter((l) => l.trim() !== "")
      .join("\n")
  }

  /**
   * Waits until the screen shows `what` (text, pattern, or a check of the screen — a check may look
   * elsewhere, at the event log, and ignore it). The timeout is an inactivity bound, not a speed figure.
   */
  async waitFor(what: string | RegExp | ((screen: string) => boolean), timeoutMs = 240_000, label = String(what)): Promise<string> {
    const test = typeof what === "function" ? what : (s: string) => (typeof what === "string" ? s.includes(what) : what.test(s))
    const deadline = Date.now() + timeoutMs
    let last = ""
    while (Date.now() < deadline) {
      last = this.screen()
      if (test(last)) return last
      await new Promise((r) => setTimeout(r, 250))
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${label}; the screen was:\n${last}`)
  }

  /** Resizes the current window (the program sees SIGWINCH and redraws at the new size). */
  resize(width: number, height: number): void {
    this.tmux(["resize-window", "-t", this.target, "-x", String(width), "-y", String(height)])
  }

  /** Types literal text (no key names interpreted), without Enter. */
  type(text: string): void {
    this.tmux(["send-keys", "-t", this.target, "-l", text])
  }

  /** Types text as a person would, then Enter. */
  submit(text: string): void {
    this.type(text)
    this.press("Enter")
  }

  /** Presses keys by tmux name: Enter, Escape, C-c, C-u … */
  press(...keys: string[]): void {
    this.tmux(["send-keys", "-t", this.target, ...keys])
  }

  /**
   * SIGKILLs the current window's program and everything it started (the engine, its gates' commands), all at
   * once, as a crash or `kill -9` would: nothing gets to clean up. The window's shell stays and prints "EXITED 137".
   */
  async kill(): Promise<number[]> {
    const shell = Number(this.tmux(["display-message", "-p", "-t", this.target, "#{pane_pid}"]).trim())
    const pids = TuiDriver.descendants([shell]).filter((pid) => pid !== shell)
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {}
    }
    await gone(pids, "after SIGKILL")
    return pids
  }

  /** Every window's process and its descendants, by pid (the programs and the engines they started). */
  private processes(): number[] {
    try {
      return TuiDriver.descendants(this.tmux(["list-panes", "-s", "-t", "air", "-F", "#{pane_pid}"]).split("\n").map(Number).filter((n) => n > 0))
    } catch {
      return []
    }
  }

  /** `roots` and every process below them, by pid. */
  private static descendants(roots: number[]): number[] {
    const all = [...roots]
    for (let i = 0; i < all.length; i++) {
      try {
        const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(all[i])], { encoding: "utf8" })
        all.push(...children.split("\n").map((l) => Number(l.trim())).filter((n) => n > 0))
      } catch {
        // no children
      }
    }
    return all
  }

  /** Ends every program (SIGTERM, then SIGKILL after 20 s) and waits until they and their engines are gone, then the tmux server. */
  async stop(): Promise<void> {
    const pids = this.processes()
    const living = () => pids.filter(alive)
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGTERM")
      } catch {}
    }
    const deadline = Date.now() + 20_000
    while (living().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    for (const pid of living()) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {}
    }
    await gone(pids, "after SIGKILL, on stop")
    try {
      this.tmux(["kill-server"])
    } catch {
      // already gone
    }
  }
}

/** Waits until `pids` are gone; a process SIGKILL did not end in 30 s (never reaped, or in the kernel) is an error, not a hang. */
async function gone(pids: number[], when: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (pids.some(alive)) {
    if (Date.now() > deadline) throw new Error(`processes ${pids.filter(alive).join(", ")} still there 30 s ${when}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

export namespace TuiDriver {
  export type Options = { root: string; cwd: string; env: NodeJS.ProcessEnv; command: string[]; width?: number; height?: number }
}

/** The terminal column where a string index falls: CJK characters take two columns, one string position. */
export function columnOf(line: string, index: number): number {
  return TerminalText.displayWidth(line.slice(0, index))
}

/** The characters of a screen row in terminal columns [from, to). */
export function columns(line: string, from: number, to = 10_000): string {
  let col = 0
  let out = ""
  for (const ch of line) {
    if (col >= from && col < to) out += ch
    col += TerminalText.displayWidth(ch)
  }
  return out
}

/** Screen text without what changes from run to run: run and session ids, clocks, token counts, costs and
 * the count of unpriced requests. */
export function normaliseScreen(text: string): string {
  return text
    .replace(/run-[a-z0-9]+/g, "run-<id>")
    .replace(/ses_[A-Za-z0-9]+/g, "ses_<id>")
    .replace(/\b\d{1,2}:\d{2}(:\d{2})?\b/g, "<time>")
    .replace(/[\d,]+ tokens/g, "<n> tokens")
    .replace(/\$\d+\.\d+/g, "$<cost>")
    // How many requests have been made when the screen is read depends on timing; that there are some does not.
    .replace(/\+ \d+ unpriced/g, "+ <n> unpriced")
    .replace(/\+ \d+ 个未计价请求/g, "+ <n> 个未计价请求")
}

/**
 * The lines of a dialog, from the row holding its title (`first`) to the row holding `last`, in the
 * dialog's own columns (from the title's column, 90 wide), normalised.
 */
export function dialog(screen: string, first: string, last: string): string {
  const lines = screen.split("\n")
  const from = lines.findIndex((l) => l.includes(first))
  const to = lines.findIndex((l, i) => i >= from && l.includes(last))
  const left = columnOf(lines[from]!, lines[from]!.indexOf(first))
  return normaliseScreen(lines.slice(from, to + 1).map((l) => columns(l, left, left + 90).trimEnd()).join("\n")) + "\n"
}

/** Our part of the sidebar: from the status line down to the blank line that ends it, in its own columns, normalised. */
export function sidebar(screen: string): string {
  const lines = screen.split("\n")
  const from = lines.findIndex((l) => l.includes("AirCoding · "))
  const col = columnOf(lines[from]!, lines[from]!.indexOf("AirCoding · "))
  const part = lines.slice(from).map((l) => columns(l, col).trimEnd())
  const end = part.findIndex((l) => l === "")
  // The cost line comes once the engine has priced a request, which a screen may be read before or after; what it
  // says is the view's (test/read/money-lines.test.ts), so the screens leave it out.
  const shown = part.slice(0, end < 0 ? undefined : end).filter((l) => !/^(Cost: |费用：)/.test(l))
  return normaliseScreen(shown.join("\n")) + "\n"
}

/**
 * The screen of a finished run once its final check is recorded and shown: the sidebar says the run is done
 * when the last task merges, and the final check's line (when it reused a recorded result) comes a poll
 * after `finalCheck.done`. `done` is the sidebar's status text, `reusedLine` the start of the check's line.
 */
export async function finishedScreen(tui: TuiDriver, project: string, done: string, reusedLine: string, timeoutMs: number): Promise<string> {
  const log = join(project, ".air", "local", "state", "events.jsonl")
  const recorded = () => existsSync(log) && readFileSync(log, "utf8").includes('"type":"finalCheck.done"')
  await tui.waitFor((s) => s.includes(done) && recorded(), timeoutMs, "the run to finish and its final check to be recorded")
  let reused = false
  try {
    reused = JSON.parse(readFileSync(join(project, ".air", "local", "evidence", "_final", "result.json"), "utf8")).reused !== undefined
  } catch {
    reused = false
  }
  return tui.waitFor((s) => s.includes(done) && (!reused || s.includes(reusedLine)), 30_000, "the final check's line in the sidebar")
}
