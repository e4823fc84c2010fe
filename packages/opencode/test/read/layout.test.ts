import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")
const importsOf = (file: string) => [...readFileSync(file, "utf8").matchAll(/^import[^"]*"([^"]+)"/gm)].map((m) => m[1]!)

describe("the read model sits below the views and the runtime", () => {
  test("src/read imports neither the CLI, the dashboard, the TUI nor the runtime's moving parts (only readers of its files)", () => {
    const bad = readdirSync(join(SRC, "read"))
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) => importsOf(join(SRC, "read", f)).filter((i) => /\/(cli|dashboard|tui)\//.test(i) || /scheduler\/runtime\/(orchestrator|interpreter|recovery|sessions\/(supervisor|clock|sessions)|gates\/|integration\/merge|git\/worktree)/.test(i)).map((i) => `${f}: ${i}`))
    expect(bad).toEqual([])
  })

  test("the runtime, the Scheduler, the agents and the tools import neither the CLI nor the dashboard", () => {
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : []))
    const dirs = ["scheduler", "agent", "tool", "read"].map((d) => join(SRC, d)).filter((d) => existsSync(d))
    const bad = dirs.flatMap(walk).flatMap((f) => importsOf(f).filter((i) => /\/(cli|dashboard)\//.test(i)).map((i) => `${f.slice(SRC.length + 1)}: ${i}`))
    expect(bad).toEqual([])
  })

  test("src/scheduler/core is pure: it imports only zod and its own files (no node:, no runtime, no views)", () => {
    const bad = readdirSync(join(SRC, "scheduler", "core"))
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) => importsOf(join(SRC, "scheduler", "core", f)).filter((i) => i !== "zod" && !i.startsWith("./")).map((i) => `${f}: ${i}`))
    expect(bad).toEqual([])
  })
})
