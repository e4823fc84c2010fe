/**
 * Before a run begins, Main's own model request is all that keeps a headless `aircoding run` going, and no
 * Scheduler timer covers it yet. A request the provider never answers is waited on for 300 s by the pinned
 * engine (`ProviderHeaderTimeoutError`), then sent again, and again, in silence (src/scheduler/runtime/README.md,
 * "Main's request that is never answered"): half an hour and more with no word to CI. So, headless and only
 * until a run begins, Main silent past the run's `inactivityMs` is stopped as a stalled worker would be, and
 * its turn counts as a request that timed out; `mainAgain` decides whether it is asked again. Once a run
 * begins, Main may rightly be silent while it listens: the Scheduler's timers and RunWatch keep time then.
 *
 * The engine prints its first line only when the first answer begins to stream, so before any output its
 * start-up is part of the silence: it gets `BOOT_MS` more. Generous on purpose: six engines starting at once
 * on two busy cores took over 50 s before their first line, and a Main stopped for a slow start costs a
 * start of its own.
 */
export namespace MainSilence {
  export const BOOT_MS = 120_000
  const POLL_MS = 250

  /** When Main's engine started and when it last printed anything. */
  export type Clock = { startedAt: number; lastOutputAt?: number }

  /** Whether Main has been silent for longer than it may be. */
  export function overdue(clock: Clock, now: number, silenceMs: number, bootMs = BOOT_MS): boolean {
    if (clock.lastOutputAt === undefined) return now - clock.startedAt > silenceMs + bootMs
    return now - clock.lastOutputAt > silenceMs
  }

  export type Watch = {
    /** Main's engine printed something. */
    touch(): void
    /** Set once Main was stopped for its silence. */
    readonly silent: boolean
    stop(): void
  }

  /** Watches one start of Main; `onSilent` stops its engine, once, if it is overdue while no run has begun. */
  export function start(opts: { silenceMs: number; begun: () => boolean; onSilent: () => void; bootMs?: number; pollMs?: number; now?: () => number }): Watch {
    const now = opts.now ?? Date.now
    const clock: Clock = { startedAt: now() }
    let silent = false
    const timer = setInterval(() => {
      if (opts.begun() || !overdue(clock, now(), opts.silenceMs, opts.bootMs)) return
      silent = true
      clearInterval(timer)
      opts.onSilent()
    }, opts.pollMs ?? POLL_MS)
    return {
      touch: () => {
        clock.lastOutputAt = now()
      },
      get silent() {
        return silent
      },
      stop: () => clearInterval(timer),
    }
  }
}
