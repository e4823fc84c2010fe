import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { BrowserContext } from "playwright-core"
import { RunData } from "../../src/scheduler/runtime/store/run-data"
import { copyFixture } from "../cli-view/helpers"

export { copyFixture }

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")
export const ARTIFACTS = join(REPO, "test-artifacts")
export const CHROMIUM = process.env.AIRCODING_CHROMIUM ?? "/usr/bin/chromium"

/** The recorded log's lines; a test keeps the first n and appends the rest while the page watches. */
export function logLines(root: string): string[] {
  return readFileSync(RunData.eventsFile(root), "utf8").trimEnd().split("\n")
}

export function keepFirst(root: string, n: number): string[] {
  const lines = logLines(root)
  writeFileSync(RunData.eventsFile(root), lines.slice(0, n).join("\n") + "\n")
  // The snapshot belongs to the whole run; a view of a shorter log must not lean on it.
  rmSync(RunData.snapshotFile(root), { force: true })
  return lines
}

export function append(root: string, lines: string[]): void {
  appendFileSync(RunData.eventsFile(root), lines.map((l) => l + "\n").join(""))
}

/** Debian's chromium through playwright-core: no browser download, a fresh profile per run. */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} not found: the dashboard tests need Debian's chromium (apt-get install -y chromium), or AIRCODING_CHROMIUM=/path/to/chromium`)
  const { chromium } = await import("playwright-core")
  const profile = mkdtempSync(join(tmpdir(), "air-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  })
  return {
    context,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
