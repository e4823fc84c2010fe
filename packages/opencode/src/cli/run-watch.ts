import { RunData } from "../scheduler/runtime/store/run-data"
import { headlessEnd } from "../text/run-status"

/**
 * A headless run ends on the Scheduler's state, not on the main agent's turn (issue 21 item 3): this
 * follows the event log while the engine runs and says when the process should stop the engine.
 * - Nothing can move until the user acts (a plan to confirm; questions, once every task they do not block
 *   has merged or stopped — or at the first question with `exitOnQuestion`): after `answerWindowMs` still
 *   waiting — Main, the person's stand-in, may answer from the requirement within it — stop, exit 2.
 * - The run finished and its final check is recorded: Main gets `doneGraceMs` to write its last message,
 *   then the engine is stopped (whatever that turn is doing, the work is done).
 * Read-only: the engine process owns the log.
 */
export namespace RunWatch {
  export const ANSWER_WINDOW_MS = 2_500
  export const DONE_GRACE_MS = 30_000
  const POLL_MS = 250

  export type Options = { answerWindowMs?: number; doneGraceMs?: number; pollMs?: number; exitOnQuestion?: boolean }

  /** The window Main has to answer for the user: AIRCODING_HEADLESS_ANSWER_MS, else ANSWER_WINDOW_MS. */
  export function answerWindow(env: NodeJS.ProcessEnv = process.env): number {
    const ms = Number(env.AIRCODING_HEADLESS_ANSWER_MS)
    return env.AIRCODING_HEADLESS_ANSWER_MS && Number.isFinite(ms) && ms >= 0 ? ms : ANSWER_WINDOW_MS
  }

  export type Watch = {
    /** Why the engine was stopped, if it was. */
    readonly stoppedFor: "waits" | "ended" | undefined
    /** A run has begun in the project (its log left the idle stage). */
    readonly begun: boolean
    stop(): void
  }

  export function start(root: string, onStop: () => void, opts: Options = {}): Watch {
    const window = opts.answerWindowMs ?? answerWindow()
    const grace = opts.doneGraceMs ?? DONE_GRACE_MS
    let follower = new RunData.Follower(root)
    let since: { end: "waits" | "ended"; at: number } | undefined
    let stoppedFor: "waits" | "ended" | undefined
    const tick = () => {
      if (follower.poll() === "reset") {
        follower = new RunData.Follower(root)
        follower.poll()
      }
      const end = headlessEnd(follower.state, { exitOnQuestion: opts.exitOnQuestion })
      if (!end) {
        since = undefined
        return
      }
      if (since?.end !== end) since = { end, at: Date.now() }
      if (Date.now() - since.at < (end === "waits" ? window : grace)) return
      stoppedFor = end
      clearInterval(timer)
      onStop()
    }
    const timer = setInterval(tick, opts.pollMs ?? POLL_MS)
    return {
      get stoppedFor() {
        return stoppedFor
      },
      get begun() {
        return follower.state.stage !== "idle"
      },
      stop: () => clearInterval(timer),
    }
  }
}
