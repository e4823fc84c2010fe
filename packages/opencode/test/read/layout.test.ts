import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")
/** What `file` imports, static imports and `import("…")` alike (a dynamic import crosses a layer as much as a static one). */
const importsOf = (file: string) => {
  const text = readFileSync(file, "utf8")
  return [...text.matchAll(/^import[^"]*"([^"]+)"/gm), ...text.matchAll(/\bimport\(\s*["'`]([^"'`]+)["'`]\s*\)/g)].map((m) => m[1]!)
}

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

/** An import of a file of src/: the file it names, the names it takes (when they are written out), and whether it is an `import()`. */
type LocalImport = { file: string; names: string[]; dynamic: boolean }

function resolveLocal(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec)
  return [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((c) => /\.tsx?$/.test(c) && existsSync(c))
}

/** The names inside `{ … }` (`type A`, `B as C` count as A and B), or the namespace of `* as N`. */
const namesIn = (clause: string | undefined): string[] =>
  [...(clause?.match(/\{([^{}]*)\}/)?.[1]?.split(",") ?? []), ...(clause?.match(/\*\s+as\s+(\w+)/)?.slice(1) ?? [])]
    .map((n) => n.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!.trim())
    .filter(Boolean)

/**
 * Every import of `file` that names a file of src/: static imports and re-exports (type-only ones included),
 * side-effect imports, and `import("./…")` with a literal path, which a static reader misses and which can
 * hide a circle (toolchain/detect.ts ↔ toolchain/index.ts did).
 */
function localImports(file: string): LocalImport[] {
  const text = readFileSync(file, "utf8")
  const found: LocalImport[] = []
  const add = (spec: string, names: string[], dynamic: boolean) => {
    const target = resolveLocal(file, spec)
    if (target) found.push({ file: target, names, dynamic })
  }
  for (const m of text.matchAll(/^(?:import|export)\s([^"';]*?)from\s+["'](\.[^"']+)["']/gm)) add(m[2]!, namesIn(m[1]), false)
  for (const m of text.matchAll(/^import\s+["'](\.[^"']+)["']/gm)) add(m[1]!, [], false)
  // `const { A, B } = await import("./x")` names what it takes; `(await import("./x")).A` names A.
  for (const m of text.matchAll(/(?:(\{[^{}]*\})\s*=\s*)?(?:await\s+)?import\(\s*["'`](\.[^"'`]+)["'`]\s*\)(\)?\.(\w+))?/g))
    add(m[2]!, m[1] ? namesIn(m[1]) : m[4] ? [m[4]] : [], true)
  return found
}

/** How `from` imports `to`: "(A, B)", "(import(): A)", "(side effect)". */
function tie(from: string, to: string): string {
  return localImports(from)
    .filter((i) => i.file === to)
    .map((i) => `(${i.dynamic ? "import(): " : ""}${i.names.join(", ") || (i.dynamic ? "…" : "side effect")})`)
    .join(" ")
}

/** The imports between the files of a circle (paths relative to src/), as "a.ts → b.ts (Names)". */
function cycleTies(group: string[]): string[] {
  const files = group.map((f) => join(SRC, f))
  return files.flatMap((from) =>
    [...new Set(localImports(from).map((i) => i.file))].filter((to) => files.includes(to)).map((to) => `${relative(SRC, from)} → ${relative(SRC, to)} ${tie(from, to)}`),
  )
}

const sameFiles = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().every((f, i) => f === [...b].sort()[i])

/**
 * Circles allowed for a while, each with why and how it is to be cut. None: issue 42 item 1 cut the last
 * (toolchain/detect.ts ↔ toolchain/index.ts, closed by an `await import`: the schemas both read moved into
 * toolchain/rules-schema.ts), and a new circle fails at once.
 */
const ALLOWED_CYCLES: { files: string[]; why: string }[] = []

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
    for (const { file: w } of localImports(v)) {
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

  test("no file of src/ reaches itself through its imports, static or dynamic, type-only imports included", () => {
    const cycles = importCycles(walk(SRC)).filter((group) => !ALLOWED_CYCLES.some((a) => sameFiles(a.files, group)))
    // Each circle with the imports that close it, so the message says where to cut.
    expect(cycles.map((group) => ({ files: group, ties: cycleTies(group) }))).toEqual([])
  })

  test("every allowed circle still is one (a stale entry would let a new circle through the same files)", () => {
    const cycles = importCycles(walk(SRC))
    for (const a of ALLOWED_CYCLES) expect(cycles.some((group) => sameFiles(a.files, group)), `${a.files.join(" ↔ ")}: ${a.why}`).toBe(true)
  })

  test("the finder sees a cycle (two files of a temporary folder importing each other)", async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import("node:fs")
    const { tmpdir } = await import("node:os")
    const dir = mkdtempSync(join(tmpdir(), "air-cycle-"))
    try {
      writeFileSync(join(dir, "a.ts"), 'import type { B } from "./b"\nexport type A = 1\n')
      writeFileSync(join(dir, "b.ts"), 'import type { A } from "./a"\nexport type B = 2\n')
      writeFileSync(join(dir, "c.ts"), 'import type { A } from "./a"\n')
      // A circle closed by an `import()` only, as toolchain/index.ts closed one with toolchain/detect.ts.
      writeFileSync(join(dir, "d.ts"), 'import { E } from "./e"\nexport const D = E\n')
      writeFileSync(join(dir, "e.ts"), 'export const E = 1\nexport async function f() {\n  const { D } = await import("./d")\n  return D\n}\n')
      const cycles = importCycles(walk(dir)).sort((x, y) => x[0]!.localeCompare(y[0]!))
      expect(cycles.map((c) => c.map((f) => f.slice(f.lastIndexOf("/") + 1)))).toEqual([["a.ts", "b.ts"], ["d.ts", "e.ts"]])
      expect(cycleTies(cycles[1]!)).toEqual([expect.stringMatching(/d\.ts → .*e\.ts \(E\)$/), expect.stringMatching(/e\.ts → .*d\.ts \(import\(\): D\)$/)])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/**
 * The folders of `root` that import each other (either way, static or dynamic, type-only included), each pair
 * with the imports that tie it: "gates ↔ results" and "gates/x.ts → results/y.ts (Names)". Files directly in
 * `root` compose the folders and belong to none.
 */
function folderPairs(root: string, files: string[]): { pair: string; ties: string[] }[] {
  const folderOf = (file: string) => {
    const parts = relative(root, file).split("/")
    return parts.length > 1 && parts[0] !== ".." ? parts[0]! : null
  }
  const edges = new Map<string, string[]>()
  for (const from of files) {
    const a = folderOf(from)
    if (!a) continue
    for (const to of new Set(localImports(from).map((i) => i.file))) {
      const b = folderOf(to)
      if (!b || b === a) continue
      edges.set(`${a}→${b}`, [...(edges.get(`${a}→${b}`) ?? []), `${relative(root, from)} → ${relative(root, to)} ${tie(from, to)}`])
    }
  }
  return [...edges.keys()]
    .map((k) => k.split("→") as [string, string])
    .filter(([a, b]) => a < b && edges.has(`${b}→${a}`))
    .map(([a, b]) => ({ pair: `${a} ↔ ${b}`, ties: [...edges.get(`${a}→${b}`)!, ...edges.get(`${b}→${a}`)!] }))
    .sort((x, y) => x.pair.localeCompare(y.pair))
}

/**
 * Pairs of runtime folders allowed to import each other for a while, each with why and how it is to be cut.
 * None: issue 42 item 1 cut the nine (what two folders share moved down into one both use, or up into the one
 * that composes them; the runtime README draws the tree), and a new pair fails at once.
 */
const ALLOWED_PAIRS: { pair: string; why: string }[] = []

/** Each folder of `root` and the other folders its files import (static, `import()`, type-only alike). */
function folderImports(root: string, files: string[]): Map<string, Set<string>> {
  const folderOf = (file: string) => {
    const parts = relative(root, file).split("/")
    return parts.length > 1 && parts[0] !== ".." ? parts[0]! : null
  }
  const found = new Map<string, Set<string>>()
  for (const from of files) {
    const a = folderOf(from)
    if (!a) continue
    const into = found.get(a) ?? new Set<string>()
    found.set(a, into)
    for (const { file } of localImports(from)) {
      const b = folderOf(file)
      if (b && b !== a) into.add(b)
    }
  }
  return found
}

/**
 * Where the README's table of levels ("| 3 | `a/` · `b/`, `c/` | x, y · z |": folders sharing a cell's group import
 * that group's folders) differs from `imports`: a folder imported but not listed, listed but not imported, not on a
 * level above, or a folder left out of the table.
 */
function levelTableErrors(readme: string, imports: Map<string, Set<string>>): string[] {
  const names = (cell: string) => (/no other folder/.test(cell) ? [] : cell.split(",").map((n) => n.replace(/[`/\s]/g, "")).filter(Boolean))
  const levelOf = new Map<string, number>()
  const listed = new Map<string, string[]>()
  for (const m of readme.matchAll(/^\| (\d+) \| ([^|]+) \| ([^|]+) \|$/gm)) {
    const groups = m[2]!.split("·")
    const uses = m[3]!.split("·")
    groups.forEach((group, i) => {
      for (const folder of names(group)) {
        levelOf.set(folder, Number(m[1]))
        listed.set(folder, names(uses[i] ?? ""))
      }
    })
  }
  const errors: string[] = []
  for (const [folder, into] of [...imports].sort(([a], [b]) => a.localeCompare(b))) {
    const table = listed.get(folder)
    if (!table) {
      errors.push(`${folder}/ is in no level`)
      continue
    }
    for (const b of into) if (!table.includes(b)) errors.push(`${folder}/ imports ${b}/, which its row does not list`)
    for (const b of table) if (!into.has(b)) errors.push(`${folder}/'s row lists ${b}/, which it does not import`)
    for (const b of into) if ((levelOf.get(b) ?? Infinity) >= levelOf.get(folder)!) errors.push(`${folder}/ (level ${levelOf.get(folder)}) imports ${b}/ (level ${levelOf.get(b) ?? "none"}), not below it`)
  }
  return errors
}

describe("the runtime's folders form a tree", () => {
  const RUNTIME = join(SRC, "scheduler", "runtime")
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : /\.tsx?$/.test(d.name) ? [join(dir, d.name)] : []))

  test("no two folders of src/scheduler/runtime import each other, but the allowed pairs", () => {
    const pairs = folderPairs(RUNTIME, walk(RUNTIME)).filter((p) => !ALLOWED_PAIRS.some((a) => a.pair === p.pair))
    expect(pairs).toEqual([])
  })

  test("every allowed pair still imports each other (a stale entry would let the pair come back unseen)", () => {
    const pairs = folderPairs(RUNTIME, walk(RUNTIME)).map((p) => p.pair)
    for (const a of ALLOWED_PAIRS) expect(pairs, `${a.pair}: ${a.why}`).toContain(a.pair)
  })

  test("the README's table of levels is the folders' imports, each folder above what it imports", () => {
    const readme = readFileSync(join(RUNTIME, "README.md"), "utf8")
    expect(levelTableErrors(readme, folderImports(RUNTIME, walk(RUNTIME)))).toEqual([])
  })

  test("a table that lies is refused (planted: a folder's import missing from its row, one listed in vain, one up a level, one left out)", () => {
    const table = ["| 1 | `store/`, `exec/` | no other folder |", "| 2 | `git/` · `sandbox/` | store · exec, git |", "| 3 | `gates/` | git |"].join("\n")
    const imports = new Map([
      ["store", new Set<string>()],
      ["exec", new Set(["gates"])],
      ["git", new Set(["store"])],
      ["sandbox", new Set(["exec"])],
      ["gates", new Set(["git"])],
      ["looks", new Set(["gates"])],
    ])
    expect(levelTableErrors(table, imports)).toEqual([
      "exec/ imports gates/, which its row does not list",
      "exec/ (level 1) imports gates/ (level 3), not below it",
      "looks/ is in no level",
      "sandbox/'s row lists git/, which it does not import",
    ])
  })

  test("the finder sees a pair and names its ties (planted: two folders of a temporary runtime, one tied by import())", async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import("node:fs")
    const { tmpdir } = await import("node:os")
    const dir = mkdtempSync(join(tmpdir(), "air-pairs-"))
    try {
      for (const f of ["git", "sandbox", "store"]) mkdirSync(join(dir, f))
      writeFileSync(join(dir, "git", "worktree.ts"), 'import { fence } from "../sandbox/fence"\nimport type { Row } from "../store/rows"\nexport const worktree = fence\n')
      writeFileSync(join(dir, "sandbox", "fence.ts"), 'export const fence = 1\nexport async function back() {\n  return (await import("../git/worktree")).worktree\n}\n')
      writeFileSync(join(dir, "store", "rows.ts"), "export type Row = 1\n")
      writeFileSync(join(dir, "compose.ts"), 'import { worktree } from "./git/worktree"\nimport type { Row } from "./store/rows"\n')
      expect(folderPairs(dir, walk(dir))).toEqual([
        { pair: "git ↔ sandbox", ties: ["git/worktree.ts → sandbox/fence.ts (fence)", "sandbox/fence.ts → git/worktree.ts (import(): worktree)"] },
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
