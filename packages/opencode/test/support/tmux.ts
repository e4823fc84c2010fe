import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"

/**
 * The real TUI in a pseudo-terminal: a tmux server of its own (its own socket, so tests never meet),
 * started with the test's environment, read as plain text with capture-pane.
 */
export class TmuxSession {
  private readonly socket = `air-${randomBytes(4).toString("hex")}`
  private started = false

  constructor(private readonly env: NodeJS.ProcessEnv, private readonly size = { cols: 200, rows: 50 }) {}

  private tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, ...args], { env: this.env, encoding: "utf8" })
  }

  /** Runs `argv` in a new window; when it exits the pane stays, showing "EXITED <code>". */
  open(name: string, argv: string[]): void {
    const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ")
    const shell = `${quoted}; echo EXITED $?; sleep 3600`
    if (!this.started) this.tmux("new-session", "-d", "-s", name, "-n", name, "-x", String(this.size.cols), "-y", String(this.size.rows), shell)
    else this.tmux("new-window", "-a", "-t", this.target, "-n", name, shell)
    this.sessionName ??= name
    this.current = name
    this.started = true
  }

  private sessionName?: string
  private current?: string

  private get target(): string {
    return `${this.sessionName}:${this.current}`
  }

  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", this.target)
  }

  /** Types text as a person would, then Enter. */
  type(text: string): void {
    this.tmux("send-keys", "-t", this.target, "-l", text)
    this.tmux("send-keys", "-t", this.target, "Enter")
  }

  key(key: string): void {
    this.tmux("send-keys", "-t", this.target, key)
  }

  /** Waits until `check` holds for the screen (or anything else); the timeout is an inactivity bound, not a speed figure. */
  async waitFor(what: RegExp | (() => boolean), timeoutMs = 240_000): Promise<void> {
    const until = Date.now() + timeoutMs
    const ok = () => (what instanceof RegExp ? what.test(this.screen()) : what())
    while (!ok()) {
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}; the screen:\n${this.screen()}`)
      await new Promise((r) => setTimeout(r, 500))
    }
  }

  close(): void {
    if (this.started) {
      try {
        this.tmux("kill-server")
      } catch {
        // already gone
      }
    }
  }
}
