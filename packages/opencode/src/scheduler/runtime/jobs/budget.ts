import os from "node:os"
import { Pressure } from "./pressure.ts"

/**
 * The run's one budget of jobs: every build and test command of every gate, merge build, baseline and final
 * check takes a share before it starts and gives it back when it ends, so four tasks gating at once on two
 * cores run three compile jobs (the cores + 1), not eight. A share is what is free (at least one job, at most what the command
 * asked for); requests are served in order, so a command waiting for the whole budget (a retry alone) is not
 * overtaken. A free slot still waits while memory is short or our own runnable threads are far above the
 * cores (a test starting a thread per core) and some of ours run (up to `maxPressureWaitMs`); with none of ours
 * running, the next command starts at once. The other users' load does not hold our commands back
 * (Pressure.reason): waiting would not lower it.
 *
 * The merge queue's commands go first (`first`): the queue lands one batch at a time, so every task behind it
 * waits while a merge build waits, and a task's gates, which run several at once, can wait instead. Queued
 * behind eight tasks' builds, a merge build waited for its jobs and ran with one (bench twenty_tasks).
 */
export class JobBudget {
  readonly size: number
  private inUse = 0
  private readonly queue: Waiter[] = []
  private readonly holders = new Map<number, Holder>()
  private nextId = 1
  private peakInUse = 0
  private peakLoad = 0
  private readonly limits: Pressure.Limits
  private readonly probe: Pressure.Probe
  private readonly maxPressureWaitMs: number
  private readonly pollMs: number
  private timer: ReturnType<typeof setTimeout> | undefined
  /** Called after every change (the run's snapshot on disk, the views). */
  onChange?: (snapshot: JobBudget.Snapshot) => void

  constructor(options: JobBudget.Options = {}) {
    this.size = Math.max(1, Math.floor(options.size ?? JobBudget.machineSize()))
    this.limits = { ...Pressure.DEFAULT_LIMITS, ...options.limits }
    this.probe = options.probe ?? Pressure.probe
    this.maxPressureWaitMs = options.maxPressureWaitMs ?? 120_000
    this.pollMs = options.pollMs ?? 250
  }

  /**
   * The machine's share: AIRCODING_JOBS, else the cores this process may use plus one. The one more keeps
   * the cores busy while a share is in a serial step (a configure, a link, ninja's start, a short test) —
   * with exactly the cores, those steps left a core idle that full -j would have filled — and stays within
   * what the machine carries (the load target is the cores + 1).
   */
  static machineSize(env: NodeJS.ProcessEnv = process.env): number {
    const fromEnv = Number(env.AIRCODING_JOBS)
    return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : os.availableParallelism() + 1
  }

  /**
   * Waits for a share of 1…`want` jobs (`"all"`: the whole budget, nothing else of ours running). Waiters are served
   * by `place`: `first` ones (the merge queue's) before the others, each waiting for `want` jobs free at once (at most
   * the budget) rather than a share of what is free; then by `order` (default: now, so first come first served). A
   * gate run gives every command the time it started, so its configure, build and tests keep the place its first
   * command took instead of going behind every other gate's commands each time (eight tasks gating at once: each of a
   * task's commands waited for all the others'). No waiter that is not `first` overtakes a request for all of it.
   */
  acquire(want: number | "all", label: string, signal?: AbortSignal, place: JobBudget.Place = {}): Promise<JobBudget.Lease> {
    return new Promise((resolve, reject) => {
      const now = Date.now()
      const waiter: Waiter = { want, label, since: now, first: place.first === true, order: place.order ?? now, resolve, reject }
      if (signal) {
        if (signal.aborted) return reject(signal.reason ?? new Error("aborted"))
        signal.addEventListener("abort", () => {
          const index = this.queue.indexOf(waiter)
          if (index < 0) return
          this.queue.splice(index, 1)
          reject(signal.reason ?? new Error("aborted"))
          this.pump()
        }, { once: true })
      }
      const barrier = waiter.first ? -1 : this.queue.findLastIndex((w) => w.want === "all")
      const ahead = (w: Waiter) => (waiter.first !== w.first ? waiter.first : waiter.order < w.order)
      const at = this.queue.findIndex((w, i) => i > barrier && ahead(w))
      if (at >= 0) this.queue.splice(at, 0, waiter)
      else this.queue.push(waiter)
      this.pump()
    })
  }

  /** Runs `work` with a share; the share goes back on every path. */
  async with<T>(want: number | "all", label: string, work: (jobs: number) => Promise<T>, signal?: AbortSignal, place: JobBudget.Place = {}): Promise<T> {
    const lease = await this.acquire(want, label, signal, place)
    try {
      return await work(lease.jobs)
    } finally {
      lease.release()
    }
  }

  snapshot(): JobBudget.Snapshot {
    return {
      size: this.size,
      inUse: this.inUse,
      waiting: this.queue.length,
      peakInUse: this.peakInUse,
      peakLoad: Math.round(this.peakLoad * 100) / 100,
      holders: [...this.holders.values()].map(({ label, jobs, since }) => ({ label, jobs, since: new Date(since).toISOString() })),
    }
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    let changed = false
    while (this.queue.length > 0) {
      const head = this.queue[0]!
      const free = this.size - this.inUse
      // A `first` waiter takes its whole share at once (up to the budget): the serial path is worth a job left idle a moment.
      const needs = head.want === "all" ? this.size : head.first ? Math.min(head.want, this.size) : 1
      if (head.want === "all" ? this.inUse > 0 : free < needs) break
      const reading = this.probe()
      this.peakLoad = Math.max(this.peakLoad, reading.load1)
      const pressed = Pressure.reason(reading, this.limits)
      // Under pressure, a job waits while ours run (one of them ending relieves it); with none of ours running,
      // waiting would not lower someone else's load or memory, so the next command starts at once.
      if (pressed && this.inUse > 0 && Date.now() - head.since < this.maxPressureWaitMs) {
        this.timer = setTimeout(() => this.pump(), this.pollMs)
        this.timer.unref?.()
        break
      }
      this.queue.shift()
      const jobs = head.want === "all" ? this.size : Math.max(1, Math.min(head.want, free))
      const id = this.nextId++
      this.inUse += jobs
      this.peakInUse = Math.max(this.peakInUse, this.inUse)
      this.holders.set(id, { label: head.label, jobs, since: Date.now() })
      changed = true
      let released = false
      head.resolve({
        jobs,
        release: () => {
          if (released) return
          released = true
          this.inUse -= jobs
          this.holders.delete(id)
          this.onChange?.(this.snapshot())
          this.pump()
        },
      })
    }
    if (changed) this.onChange?.(this.snapshot())
  }
}

interface Waiter {
  want: number | "all"
  label: string
  since: number
  first: boolean
  order: number
  resolve: (lease: JobBudget.Lease) => void
  reject: (error: unknown) => void
}

interface Holder {
  label: string
  jobs: number
  since: number
}

export namespace JobBudget {
  /** Where a request queues (`acquire`). */
  export interface Place {
    first?: boolean
    order?: number
  }
  export interface Options {
    size?: number
    limits?: Partial<Pressure.Limits>
    probe?: Pressure.Probe
    maxPressureWaitMs?: number
    pollMs?: number
  }
  export interface Lease {
    jobs: number
    release(): void
  }
  export interface Snapshot {
    size: number
    inUse: number
    waiting: number
    peakInUse: number
    peakLoad: number
    holders: { label: string; jobs: number; since: string }[]
  }
}
