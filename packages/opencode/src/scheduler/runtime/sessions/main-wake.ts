/**
 * In the TUI, Main does not sit in air_listen (slash commands and the user's messages would queue behind
 * it): its turn ends, and what needs the user — a plan, a question, a milestone, the end of the run — is
 * written into Main's session as a message once that session is idle, so Main wakes with the news in
 * hand and relays it. Headless runs keep the blocking air_listen (an idle root session ends `opencode run`).
 */
export class MainWake {
  private busy = new Set<string>()
  private pending = false

  constructor(
    /** The Main session to write to (the last one that used a coordinator tool), if any. */
    private target: () => string | undefined,
    /** Takes what is queued for the user (empty: nothing to say). */
    private take: () => string[],
    private deliver: (sessionID: string, text: string) => Promise<void>,
  ) {}

  /** Something that needs the user was queued. */
  poke(): void {
    this.pending = true
    this.flush()
  }

  /** From the engine's session.status events: a Main session started or ended a turn. */
  status(sessionID: string, busy: boolean): void {
    if (busy) this.busy.add(sessionID)
    else {
      this.busy.delete(sessionID)
      if (sessionID === this.target()) this.flush()
    }
  }

  private flush(): void {
    const id = this.target()
    if (!this.pending || !id || this.busy.has(id)) return
    const items = this.take()
    this.pending = false
    if (items.length === 0) return
    const text = ["AirCoding — news for the user. Tell them, in their language, as it is; then end your turn.", "", ...items].join("\n\n")
    void this.deliver(id, text).catch(() => {
      // The session is gone: keep nothing back, the status and the TUI still show the run.
    })
  }
}
