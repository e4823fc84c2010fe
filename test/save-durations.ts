/**
 * Copies the durations of the last full run from Vitest's cache into test/durations.json (see
 * test/sequencer.ts): `bun run test:durations` after `./start.sh test`.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { LongestFirst } from "./sequencer.ts"

const root = join(import.meta.dir, "..")
const cacheRoot = join(root, "node_modules", ".vite", "vitest")
const caches = existsSync(cacheRoot) ? readdirSync(cacheRoot).map((d) => join(cacheRoot, d, "results.json")).filter(existsSync) : []
if (!caches.length) {
  console.error(`no Vitest results under ${cacheRoot}: run the suite first (./start.sh test)`)
  process.exit(1)
}
const durations: Record<string, number> = {}
for (const file of caches) {
  const { results } = JSON.parse(readFileSync(file, "utf8")) as { results: [string, { duration?: number }][] }
  for (const [key, result] of results) {
    const file = key.slice(key.indexOf(":") + 1)
    // The cache keeps files since deleted or renamed (and experiments never committed): only files here now.
    if (typeof result.duration === "number" && existsSync(join(root, file))) durations[file] = Math.round(result.duration)
  }
}
const sorted = Object.fromEntries(Object.entries(durations).sort((a, b) => b[1] - a[1]))
writeFileSync(LongestFirst.file(root), JSON.stringify(sorted, null, 1) + "\n")
console.log(`${Object.keys(sorted).length} files → ${LongestFirst.file(root)}`)
