import { JsonLines } from "../store/jsonl"
import { isRefused, transition } from "../../core/machine"
import { initialState, type SchedulerState } from "../../core/state"
import { RunData } from "../store/run-data"
import { NotifyRecord } from "../store/notify-record"
import { resolveLang } from "../../../text/words"
import { Settings } from "../settings"
import type { NotifyConfig } from "./config"
import { News } from "./news"
import { Sender } from "./sender"

/**
 * Tells the configured channels what needs people, from outside the Scheduler's step: it follows events.jsonl
 * like the dashboard does (a timer polls what was appended and folds it with the machine), so a slow or dead
 * webhook never holds an event back. Every notification ends in one line of the record (.air/local/notify/
 * sent.jsonl), sent or dropped: a resumed run sends nothing twice, and the metrics count the dropped ones.
 */
export class Notifier {
  private state: SchedulerState = initialState()
  private tail: JsonLines.Tail
  private timer?: ReturnType<typeof setInterval>
  /** `key|channel` of every notification finished with, as the record says and as sent since. */
  private readonly done = new Set<string>()
  private readonly inFlight = new Set<Promise<void>>()

  constructor(
    readonly root: string,
    private readonly config: NotifyConfig.Config,
    private readonly ctx: News.Context,
  ) {
    for (const line of NotifyRecord.read(root)) this.done.add(`${line.key}|${line.channel}`)
    this.tail = RunData.eventTail(root)
    // What the log held before this process came is caught up on in silence: only what still waits is told.
    this.read(() => {})
    for (const notice of News.waiting(this.state, ctx)) this.dispatch(notice)
  }

  /**
   * Starts one for the run in `root` when its config's `notify` names a channel (the launcher calls it: it lives
   * as long as the run, headless or in the TUI, and waits for `settled` before it exits). Polls every `pollMs`.
   */
  static start(root: string, how: { interactive: boolean; resumeCommand: string }, pollMs = 250): Notifier | undefined {
    const config = Settings.load(root).notify
    if (!config || config.channels.length === 0) return undefined
    const notifier = new Notifier(root, config, { root, lang: resolveLang(root), ...how })
    notifier.timer = setInterval(() => notifier.tick(), pollMs)
    notifier.timer.unref?.()
    return notifier
  }

  /** Reads what was appended and sends what it says; called by the timer, and by tests that do not wait. */
  tick(): void {
    this.read((notice) => this.dispatch(notice))
  }

  private read(tell: (notice: News.Notice) => void): void {
    let lines = this.tail.read()
    if (lines === "reset") {
      // A new run replaced the log: start again from its first line.
      this.state = initialState()
      this.tail = RunData.eventTail(this.root)
      lines = this.tail.read()
      if (lines === "reset") return
    }
    for (const { text, lineNo } of lines) {
      const event = RunData.parseLine(text, lineNo, RunData.eventsFile(this.root))
      if (typeof event === "string") continue
      const result = transition(this.state, event)
      if (isRefused(result)) continue
      const before = this.state
      this.state = result.state
      for (const notice of News.of(before, this.state, event, this.ctx)) tell(notice)
    }
  }

  private dispatch(notice: News.Notice): void {
    this.config.channels.forEach((channel, index) => {
      if (channel.events && !channel.events.includes(notice.event)) return
      const name = `${index}:${channel.kind}`
      const id = `${notice.key}|${name}`
      if (this.done.has(id)) return
      this.done.add(id)
      const sending = Sender.send(channel, notice, this.config).then((outcome) => {
        JsonLines.append(
          NotifyRecord.file(this.root),
          { at: new Date().toISOString(), key: notice.key, channel: name, outcome: outcome.sent ? "sent" : "dropped", attempts: outcome.attempts, ...(outcome.sent ? {} : { reason: outcome.reason }) },
          { fsync: false },
        )
      })
      const tracked = sending.catch(() => {}).finally(() => this.inFlight.delete(tracked))
      this.inFlight.add(tracked)
    })
  }

  /** Every notification started so far has ended (sent or dropped, and recorded). */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.all([...this.inFlight])
  }

  /** Stops following the log, tells what was appended last, and waits for what is being sent (each send is bounded). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    this.tick()
    await this.settled()
  }
}
