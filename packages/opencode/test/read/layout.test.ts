import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
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

/** Every static import and re-export of `file` that names a file of src/ (type-only ones included). */
function localImports(file: string): string[] {
  const text = readFileSync(file, "utf8")
  return [...text.matchAll(/^(?:import|export)\s[^"';]*?from\s+"(\.[^"]+)"/gm)].flatMap((m) => {
    const base = resolve(dirname(file), m[1]!)
    const found = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((c) => /\.tsx?$/.test(c) && existsSync(c))
    return found ? [found] : []
  })
}

/** The strongly connected groups of more than one file (Tarjan), each a cycle of imports. */
function importCycles(files: string[]): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (v: string) => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    onStack.add(v)
    for (const w of localImports(v)) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const group: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      group.push(w)
    } while (w !== v)
    if (group.length > 1) cycles.push(group.map((f) => relative(SRC, f)).sort())
  }
  for (const f of files) if (!index.has(f)) visit(f)
  return cycles
}

describe("no import cycles", () => {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : /\.tsx?$/.test(d.name) ? [join(dir, d.name)] : []))

  test("no file of src/ reaches itself through its imports, type-only imports included", () => {
    expect(importCycles(walk(SRC))).toEqual([])
  })

  test("the finder sees a cycle (two files of a temporary folder importing each other)", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs")
    const { tmpdir } = await import("node:os")
    const dir = mkdtempSync(join(tmpdir(), "air-cycle-"))
    try {
      writeFileSync(join(dir, "a.ts"), 'import type { B } from "./b"\nexport type A = 1\n')
      writeFileSync(join(dir, "b.ts"), 'import type { A } from "./a"\nexport type B = 2\n')
      writeFileSync(join(dir, "c.ts"), 'import type { A } from "./a"\n')
      expect(importCycles(walk(dir)).map((c) => c.length)).toEqual([2])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
