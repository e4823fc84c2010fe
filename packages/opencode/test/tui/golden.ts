import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), "golden")

/** Compares with test/tui/golden/<name>; UPDATE_GOLDEN=1 (or a missing file outside CI) writes it instead. */
export function golden(name: string, actual: string): void {
  const file = join(GOLDEN, name)
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(file)) {
    if (process.env.CI && !existsSync(file)) throw new Error(`golden file ${name} is missing; run the test with UPDATE_GOLDEN=1 and commit it`)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, actual)
    return
  }
  expect(actual, `screen differs from test/tui/golden/${name} (UPDATE_GOLDEN=1 rewrites it)`).toBe(readFileSync(file, "utf8"))
}
