import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { RunView } from "../../src/read/view"

/**
 * Drives a real TUI in tmux: its own tmux server (socket in the test's sandbox), a fixed window size, the
 * screen read back as text. The server is started with the environment given, so the program sees exactly
 * that environment (tmux hands its server's environment to new panes). Waits poll the screen; there is no
 * sleep a test could depend on.
 */
export class TuiDriver {
  private constructor(
    private readonly socket: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static start(opts: { root: string; cwd: string; env: NodeJS.ProcessEnv; command: string[]; width?: number; height?: number }): TuiDriver {
    const socket = join(opts.root, "tmux.sock")
    const script = join(opts.root, "tui-command.sh")
    // The pane runs a script: no quoting of the command through tmux, and the program's stderr is kept.
    const quoted = opts.command.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ")
    writeFileSync(script, `#!/bin/sh\ncd '${opts.cwd}'\nexec ${quoted} 2>'${join(opts.root, "tui-stderr.txt")}'\n`, { mode: 0o755 })
    const driver = new TuiDriver(socket, { ...opts.env, TERM: "xterm-256color" })
    driver.tmux(["new-session", "-d", "-s", "air", "-x", String(opts.width ?? 200), "-y", String(opts.height ?? 50), script])
    driver.tmux(["set-option", "-t", "air", "remain-on-exit", "on"])
    return driver
  }

  private tmux(args: string[]): string {
    return execFileSync("tmux", ["-S", this.socket, ...args], { env: this.env, encoding: "utf8" })
  }

  /** The visible screen, one string per row, trailing spaces removed. */
  screen(): string {
    try {
      return this.tmux(["capture-pane", "-p", "-t", "air"])
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

  async waitFor(what: string | RegExp | ((screen: string) => boolean), timeoutMs: number, label = String(what)): Promise<string> {
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

  /** Types literal text (no key names interpreted). */
  type(text: string): void {
    this.tmux(["send-keys", "-t", "air", "-l", text])
  }

  /** Presses keys by tmux name: Enter, Escape, C-c, C-u … */
  press(...keys: string[]): void {
    this.tmux(["send-keys", "-t", "air", ...keys])
  }

  /** The pane's process and its descendants, by pid (the program and the engine it started). */
  private processes(): number[] {
    let root: number
    try {
      root = Number(this.tmux(["display-message", "-p", "-t", "air", "#{pane_pid}"]).trim())
    } catch {
      return []
    }
    const all = [root]
    for (let i = 0; i < all.length; i++) {
      try {
        const children = execFileSync("ps", ["-o", "pid=", "--ppid", String(all[i])], { encoding: "utf8" })
        all.push(...children.split("\n").map((l) => Number(l.trim())).filter((n) => n > 0))
      } catch {
        // no children
      }
    }
    return all.filter((n) => n > 0)
  }

  /** Ends the program (SIGTERM, then SIGKILL after 20 s) and waits until it and the engine are gone, then the tmux server. */
  async stop(): Promise<void> {
    const pids = this.processes()
    const alive = () => pids.filter((pid) => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    })
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGTERM")
      } catch {}
    }
    const deadline = Date.now() + 20_000
    while (alive().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    for (const pid of alive()) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {}
    }
    while (alive().length) await new Promise((r) => setTimeout(r, 100))
    try {
      this.tmux(["kill-server"])
    } catch {
      // already gone
    }
  }
}

/** The terminal column where a string index falls: CJK characters take two columns, one string position. */
export function columnOf(line: string, index: number): number {
  return RunView.displayWidth(line.slice(0, index))
}

/** The characters of a screen row in terminal columns [from, to). */
export function columns(line: string, from: number, to = 10_000): string {
  let col = 0
  let out = ""
  for (const ch of line) {
    if (col >= from && col < to) out += ch
    col += RunView.displayWidth(ch)
  }
  return out
}

/** Screen text without what changes from run to run: run and session ids, clocks, token counts, costs. */
export function normaliseScreen(text: string): string {
  return text
    .replace(/run-[a-z0-9]+/g, "run-<id>")
    .replace(/ses_[A-Za-z0-9]+/g, "ses_<id>")
    .replace(/\b\d{1,2}:\d{2}(:\d{2})?\b/g, "<time>")
    .replace(/[\d,]+ tokens/g, "<n> tokens")
    .replace(/\$\d+\.\d+/g, "$<cost>")
}
