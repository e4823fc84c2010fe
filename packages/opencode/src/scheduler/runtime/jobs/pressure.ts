import { readFileSync } from "node:fs"
import os from "node:os"

/** What the machine is doing besides us: the memory a new compile could use and the 1-minute load. */
export namespace Pressure {
  export interface Reading {
    /** MiB the kernel says a new process can have (MemAvailable; free memory where there is no /proc). */
    availableMb: number
    load1: number
    cores: number
  }
  export type Probe = () => Reading

  export const probe: Probe = () => ({ availableMb: availableMb(), load1: os.loadavg()[0] ?? 0, cores: os.availableParallelism() })

  function availableMb(): number {
    try {
      const match = /^MemAvailable:\s+(\d+)\s+kB/m.exec(readFileSync("/proc/meminfo", "utf8"))
      if (match) return Math.floor(Number(match[1]) / 1024)
    } catch {}
    return Math.floor(os.freemem() / (1024 * 1024))
  }

  export interface Limits {
    /** Admission waits while less than this many MiB are available. */
    minFreeMb: number
    /** Admission waits while the 1-minute load is above this many times the cores. */
    loadFactor: number
  }
  export const DEFAULT_LIMITS: Limits = { minFreeMb: 512, loadFactor: 2 }

  /** Why a new job should wait now, in words for the log; undefined when it may start. */
  export function reason(reading: Reading, limits: Limits): string | undefined {
    if (reading.availableMb < limits.minFreeMb) return `${reading.availableMb} MiB of memory available, below ${limits.minFreeMb} MiB`
    if (reading.load1 > reading.cores * limits.loadFactor) return `load ${reading.load1.toFixed(2)} on ${reading.cores} cores`
    return undefined
  }
}
