import { existsSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * Longest file first, so the two cores stay busy to the end instead of waiting on one long end-to-end file
 * started last. Vitest does this by itself from its cache of the last run's durations, but a fresh clone
 * (CI) has no cache and falls back to "largest file first", which starts the short, heavy end-to-end files
 * late. `test/durations.json` is a committed copy of those durations (`bun run test:durations` refreshes it);
 * the local cache, when present, is newer and wins. A file known to neither (a new one) goes first.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const committed = LongestFirst.committed(root)
    const cost = (spec: TestSpecification): number => {
      const file = relative(root, spec.moduleId)
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)
      if (cached?.failed) return Number.POSITIVE_INFINITY // what failed last is seen first
      return cached?.duration ?? committed[file] ?? Number.POSITIVE_INFINITY
    }
    const costs = new Map(files.map((spec) => [spec, cost(spec)]))
    return [...files].sort((a, b) => costs.get(b)! - costs.get(a)!)
  }

  static file(root: string): string {
    return join(root, "test", "durations.json")
  }

  static committed(root: string): Record<string, number> {
    const file = LongestFirst.file(root)
    if (!existsSync(file)) return {}
    try {
      return JSON.parse(readFileSync(file, "utf8")) as Record<string, number>
    } catch {
      return {} // a broken copy only costs the order, never the run
    }
  }
}
