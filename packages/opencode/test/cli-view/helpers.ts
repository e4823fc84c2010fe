import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"

export const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "recorded-run")
const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), "golden")

/** A private copy of the recorded run, so a test may append to its log or change its config. */
export function copyFixture(): { root: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), "air-view-"))
  cpSync(join(FIXTURE, ".air"), join(root, ".air"), { recursive: true })
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) }
}

/** Compares with a golden file; UPDATE_GOLDEN=1 rewrites it instead. */
export function golden(name: string, actual: string): void {
  const file = join(GOLDEN, name)
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(file)) {
    if (process.env.CI && !existsSync(file)) throw new Error(`golden file ${name} is missing; run the test with UPDATE_GOLDEN=1 and commit it`)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, actual)
    return
  }
  expect(actual, `output differs from golden/${name} (UPDATE_GOLDEN=1 rewrites it)`).toBe(readFileSync(file, "utf8"))
}

/** Runs a command with stdout and stderr captured. */
export async function capture(fn: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ""
  let stderr = ""
  const out = process.stdout.write
  const err = process.stderr.write
  process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write
  try {
    const code = await fn()
    return { code, stdout, stderr }
  } finally {
    process.stdout.write = out
    process.stderr.write = err
  }
}
