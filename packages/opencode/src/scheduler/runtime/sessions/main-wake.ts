/**
 * In the TUI, Main does not sit in air_listen (slash commands and the user's messages would queue behind
 * it): its turn ends, and what needs the user — a plan, a question, a milestone, the end of the run — is
 * written into Main's session as a message once that session is idle, so Main wakes with the news in
 * hand and relays it. Headless runs keep the blocking air_listen (an idle root session ends `opencode run`).
 */
export class MainWake {
  private busy = new Set<string>()
  private pending = false
  /** News whose delivery failed: sent again, first, with the next wake; never dropped. */
  private held: string[] = []
  private retries = 0
  private retryTimer?: ReturnType<typeof setTimeout>

  constructor(
    /** The Main session to write to (the last one that used a coordinator tool), if any. */
    private target: () => string | undefined,
    /** Takes what is queued for the user (empty: nothing to say). */
    private take: () => string[],
    /** Writes the message into the session; rejects when the engine did not take it. */
    private deliver: (sessionID: string, text: string) => Promise<void>,
    /** First wait before a failed delivery is tried again; doubles each time, at most `MAX_RETRIES` times in a row. */
    private retryMs = 1_000,
  ) {}

  static readonly MAX_RETRIES = 6

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

  /** The news not yet delivered (held for the next wake). */
  undelivered(): readonly string[] {
    return this.held
  }

  private flush(): void {
    const id = this.target()
    if ((!this.pending && this.held.length === 0) || !id || this.busy.has(id)) return
    const items = [...this.held, ...this.take()]
    this.held = []
    this.pending = false
    if (items.length === 0) return
    const text = ["AirCoding — news for the user. Tell them, in their language, as it is; then end your turn.", "", ...items].join("\n\n")
    this.deliver(id, text).then(
      () => {
        this.retries = 0
      },
      () => {
        // Not taken (the engine refused the prompt, or the session was busy after all): a plan or a question
        // dropped here would leave the person and the run waiting on each other. Kept, and sent again with the
        // next wake (Main's turn ending, new news) or after a pause, whichever comes first.
        this.held = [...items, ...this.held]
        if (this.retries >= MainWake.MAX_RETRIES || this.retryTimer) return
        const wait = this.retryMs * 2 ** this.retries++
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined
          this.flush()
        }, wait)
        this.retryTimer.unref?.()
      },
    )
  }
}
