/**
 * What Main should tell the user next. Progress (notify) accumulates quietly; things that need the
 * user — a plan to confirm, a question, a milestone, the end of the run — wake air_listen. So Main
 * costs one model request per thing worth saying, not one per scheduling step. Not persisted: after
 * a restart the state itself is the source, and listen reports it.
 */
export class Inbox {
  private items: string[] = []
  private waiters = new Set<() => void>()
  private attention = false
  /** Called when something needs attention and nobody waits in drain (the TUI wakes Main instead). */
  onAttention?: () => void

  push(text: string, attention = false): void {
    this.items.push(text)
    if (!attention) return
    this.attention = true
    if (this.waiters.size === 0) this.onAttention?.()
    for (const wake of this.waiters) wake()
    this.waiters.clear()
  }

  /** Drops queued items a newer state made stale (a proposal the user already confirmed in the TUI); returns how many. */
  drop(stale: (text: string) => boolean): number {
    const before = this.items.length
    this.items = this.items.filter((text) => !stale(text))
    return before - this.items.length
  }

  /** Everything queued, now, without waiting. */
  take(): string[] {
    const out = this.items
    this.items = []
    this.attention = false
    return out
  }

  /** Everything queued, once something needs attention or `timeoutMs` passed (or the call was aborted). */
  async drain(timeoutMs: number, abort?: AbortSignal): Promise<string[]> {
    if (!this.attention && !abort?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          abort?.removeEventListener("abort", done)
          this.waiters.delete(done)
          resolve()
        }
        const timer = setTimeout(done, timeoutMs)
        abort?.addEventListener("abort", done)
        this.waiters.add(done)
      })
    }
    const out = this.items
    this.items = []
    this.attention = false
    return out
  }
}
