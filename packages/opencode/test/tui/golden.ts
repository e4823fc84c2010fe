import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), "golden")

/**
 * The time a reused check saved is the recorded run's, which differs from run to run: "(4s saved)", "（节省 1m5s）"
 * are compared as "(Ns saved)", "（节省 Ns）".
 */
function steady(screen: string): string {
  return screen.replace(/\d+(?:\.\d+)?(?:ms|[smh])(?:\d+(?:ms|s|m))*(?= saved\))/g, "Ns").replace(/(?<=节省 )\d+(?:\.\d+)?(?:ms|[smh])(?:\d+(?:ms|s|m))*/g, "Ns")
}

/** Compares with test/tui/golden/<name>; UPDATE_GOLDEN=1 (or a missing file outside CI) writes it instead. */
export function golden(name: string, screen: string): void {
  const actual = steady(screen)
  const file = join(GOLDEN, name)
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(file)) {
    if (process.env.CI && !existsSync(file)) throw new Error(`golden file ${name} is missing; run the test with UPDATE_GOLDEN=1 and commit it`)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, actual)
    return
  }
  expect(actual, `screen differs from test/tui/golden/${name} (UPDATE_GOLDEN=1 rewrites it)`).toBe(readFileSync(file, "utf8"))
}

/**
 * `golden` for a live screen: what `read` shows is compared once it matches, or when `windowMs` has passed. A
 * screen is drawn by a program that goes on working: a toast laid over a dialog for a few seconds, a redraw half
 * done, are not what the screen shows; a real difference stays for the whole window and fails as `golden` does.
 */
export async function goldenSoon(name: string, read: () => string, windowMs = 15_000): Promise<void> {
  const file = join(GOLDEN, name)
  const safely = () => {
    try {
      return read()
    } catch {
      return "" // the screen moved on between the check and the read: the rows asked for are not there
    }
  }
  let actual = safely()
  if (process.env.UPDATE_GOLDEN !== "1" && existsSync(file)) {
    const want = readFileSync(file, "utf8")
    const deadline = Date.now() + windowMs
    while (steady(actual) !== want && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500))
      actual = safely()
    }
  }
  golden(name, actual)
}
