import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")
const importsOf = (file: string) => [...readFileSync(file, "utf8").matchAll(/^import[^"]*"([^"]+)"/gm)].map((m) => m[1]!)

describe("the read model sits below the views and the runtime", () => {
  test("src/read imports neither the CLI, the dashboard, the TUI nor the runtime", () => {
    const bad = readdirSync(join(SRC, "read"))
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) => importsOf(join(SRC, "read", f)).filter((i) => /\/(cli|dashboard|tui|runtime)\//.test(i) || /scheduler\/runtime$/.test(i)).map((i) => `${f}: ${i}`))
    expect(bad).toEqual([])
  })

  test("the runtime, the Scheduler, the agents and the tools import neither the CLI nor the dashboard", () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : []))
    const dirs = ["scheduler", "runtime", "core", "agent", "tool", "read"].map((d) => join(SRC, d)).filter((d) => existsSync(d))
    const bad = dirs.flatMap(walk).flatMap((f) => importsOf(f).filter((i) => /\/(cli|dashboard)\//.test(i)).map((i) => `${f.slice(SRC.length + 1)}: ${i}`))
    expect(bad).toEqual([])
  })
})
