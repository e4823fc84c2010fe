import { existsSync } from "node:fs"
import { delimiter, join } from "node:path"
import { Proc } from "../process"
import { NotifyConfig } from "./config"
import { Formats } from "./formats"
import type { News } from "./news"

/**
 * One notice to one channel, tried `attempts` times with a doubling pause between tries, each try bounded by
 * `timeoutMs`: at most attempts × timeoutMs plus the pauses, then it is given up on. What goes wrong is said
 * without the URL (its secret), only its origin.
 */
export namespace Sender {
  export type Outcome = { sent: true; attempts: number } | { sent: false; attempts: number; reason: string }

  const FIRST_PAUSE_MS = 250

  export async function send(channel: NotifyConfig.Channel, notice: News.Notice, opts: { timeoutMs: number; attempts: number }): Promise<Outcome> {
    let reason = ""
    for (let attempt = 1; attempt <= opts.attempts; attempt++) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, FIRST_PAUSE_MS * 2 ** (attempt - 2)))
      const problem = await once(channel, notice, opts.timeoutMs)
      if (problem === undefined) return { sent: true, attempts: attempt }
      reason = problem
      if (problem.startsWith("notify-send")) break
    }
    return { sent: false, attempts: opts.attempts, reason }
  }

  /** One try: undefined when it went, else why not (without the URL). */
  async function once(channel: NotifyConfig.Channel, notice: News.Notice, timeoutMs: number): Promise<string | undefined> {
    if (channel.kind === "desktop") return desktop(notice, timeoutMs)
    const url = channel.url!
    const where = NotifyConfig.shown(url)
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify(Formats.body(channel.kind, notice)),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: "error",
      })
      const text = await res.text()
      if (!res.ok) return `${where} answered HTTP ${res.status}`
      const refused = Formats.refusal(channel.kind, text)
      return refused ? `${where}: ${refused}` : undefined
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } }
      if (e.name === "TimeoutError" || e.name === "AbortError") return `${where} did not answer within ${timeoutMs} ms`
      return `${where} could not be reached (${e.cause?.code ?? e.name})`
    }
  }

  async function desktop(notice: News.Notice, timeoutMs: number): Promise<string | undefined> {
    if (!onPath("notify-send")) return "notify-send is not installed (Debian: apt-get install libnotify-bin); desktop notices are dropped"
    const r = await Proc.run("notify-send", ["--app-name=AirCoding", notice.title, notice.text], { cwd: process.cwd(), env: process.env, timeoutMs })
    if (r.code === 0) return undefined
    return `notify-send failed (exit ${r.code ?? "none"}): ${r.stderr.trim().split("\n")[0] ?? ""}`
  }

  function onPath(command: string): boolean {
    return (process.env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, command)))
  }
}
