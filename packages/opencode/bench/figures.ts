/**
 * The benchmark's figures. Each module named `*.figures.ts` in this folder registers its own; run.ts loads
 * them all, so adding a figure never means editing the runner.
 */
export interface Figure {
  /** snake_case, with its unit at the end: validate_schedule_10k_ms, parallel_speedup_8x4 */
  name: string
  /** One line: what is measured, on what. */
  description: string
  unit: "ms" | "s" | "x" | "count" | "ratio"
  /** The figure passes when `value op target`. */
  target?: { op: "<" | "<=" | ">" | ">="; value: number }
  /** Measures and returns the figure; may be slow, is never run in parallel with another. */
  run(): Promise<number> | number
}

const registry: Figure[] = []

export function registerFigure(figure: Figure): void {
  if (registry.some((f) => f.name === figure.name)) throw new Error(`figure ${figure.name} is registered twice`)
  registry.push(figure)
}

export function registeredFigures(): readonly Figure[] {
  return registry
}

export function meetsTarget(figure: Figure, value: number): boolean | null {
  const target = figure.target
  if (!target) return null
  switch (target.op) {
    case "<":
      return value < target.value
    case "<=":
      return value <= target.value
    case ">":
      return value > target.value
    case ">=":
      return value >= target.value
  }
}

/** Median of `runs` timings of fn, after `warmup` untimed runs (the JIT must be warm before it is judged). */
export async function medianMs(fn: () => unknown, runs = 7, warmup = 2): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn()
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await fn()
    times.push(performance.now() - started)
  }
  return median(times)
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
