import { readdirSync, readFileSync } from "node:fs"
import os from "node:os"

/**
 * What the machine is doing besides us: the memory a new compile could use, the 1-minute load, and how many
 * of our own processes (this process's descendants: gates, builds, tests, the workers' commands) are
 * runnable now.
 */
export namespace Pressure {
  export interface Reading {
    /** MiB the kernel says a new process can have (MemAvailable; free memory where there is no /proc). */
    availableMb: number
    /** The machine's 1-minute load: everyone's, ours and the other users'. */
    load1: number
    cores: number
    /** Threads of this process's descendants that are runnable now (Linux); absent where /proc cannot say. */
    ours?: number
  }
  export type Probe = () => Reading

  export const probe: Probe = () => {
    const ours = runnableDescendants(process.pid)
    return { availableMb: availableMb(), load1: os.loadavg()[0] ?? 0, cores: os.availableParallelism(), ...(ours !== undefined ? { ours } : {}) }
  }

  function availableMb(): number {
    try {
      const match = /^MemAvailable:\s+(\d+)\s+kB/m.exec(readFileSync("/proc/meminfo", "utf8"))
      if (match) return Math.floor(Number(match[1]) / 1024)
    } catch {}
    return Math.floor(os.freemem() / (1024 * 1024))
  }

  /** `/proc/<pid>/stat` → state, parent, threads (the name in parentheses may hold spaces and parentheses). */
  function stat(text: string): { state: string; ppid: number; threads: number } | undefined {
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
    const ppid = Number(fields[1])
    if (!fields[0] || !Number.isInteger(ppid)) return undefined
    return { state: fields[0], ppid, threads: Number(fields[17]) || 1 }
  }

  /**
   * The runnable threads (state R) of every descendant of `root`: the load that is ours. Undefined where
   * there is no /proc (the 1-minute load then stands in).
   */
  export function runnableDescendants(root: number): number | undefined {
    let pids: string[]
    try {
      pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name))
    } catch {
      return undefined
    }
    const procs = new Map<number, { state: string; ppid: number; threads: number }>()
    for (const pid of pids) {
      try {
        const s = stat(readFileSync(`/proc/${pid}/stat`, "utf8"))
        if (s) procs.set(Number(pid), s)
      } catch {
        // gone between the listing and the read
      }
    }
    if (procs.size === 0) return undefined
    const children = new Map<number, number[]>()
    for (const [pid, s] of procs) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid])
    let runnable = 0
    const todo = [...(children.get(root) ?? [])]
    while (todo.length > 0) {
      const pid = todo.pop()!
      const s = procs.get(pid)!
      todo.push(...(children.get(pid) ?? []))
      // A multi-threaded test or linker: each runnable thread is a core's worth of load.
      runnable += s.threads > 1 ? runnableThreads(pid, s.state) : s.state === "R" ? 1 : 0
    }
    return runnable
  }

  function runnableThreads(pid: number, state: string): number {
    try {
      let n = 0
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          if (stat(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8"))?.state === "R") n++
        } catch {}
      }
      return n
    } catch {
      return state === "R" ? 1 : 0
    }
  }

  export interface Limits {
    /** Admission waits while less than this many MiB are available. */
    minFreeMb: number
    /** Admission waits while our runnable threads (else the 1-minute load) are above this many times the cores. */
    loadFactor: number
  }
  export const DEFAULT_LIMITS: Limits = { minFreeMb: 512, loadFactor: 2 }

  /**
   * Why a new job should wait now, in words for the log; undefined when it may start. The load that counts
   * is ours (what our own commands run beyond their shares: a test that starts a thread per core, a linker's
   * threads): the other users' load is theirs, and holding our commands back would not lower it — on a
   * shared machine it only made the run go one command at a time (2.4× the wall of full -j at a load of 30
   * on two cores). Without /proc the machine's 1-minute load stands in.
   */
  export function reason(reading: Reading, limits: Limits): string | undefined {
    if (reading.availableMb < limits.minFreeMb) return `${reading.availableMb} MiB of memory available, below ${limits.minFreeMb} MiB`
    if (reading.ours !== undefined) {
      if (reading.ours > reading.cores * limits.loadFactor) return `${reading.ours} of our threads runnable on ${reading.cores} cores`
      return undefined
    }
    if (reading.load1 > reading.cores * limits.loadFactor) return `load ${reading.load1.toFixed(2)} on ${reading.cores} cores`
    return undefined
  }
}
