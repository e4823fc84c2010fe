import { existsSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

/**
 * A usage error or `--help` answers before the heavy modules load: the CLI's entry imports them only inside the
 * command that needs them (`import()`), so `aircoding stauts` is bun's start plus a few small files (measured: 0.8–1.1 s
 * against 3.6–5.3 s when main.ts reached the launcher statically, at a load of 25). This walks main.ts's static
 * imports and refuses one that reaches the engine, the roles, the runtime, the dashboard or the scripted model.
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")
const HEAVY = /^(engine|agent|scheduler\/runtime|dashboard|tui|knowledge)\//

type Import = { target: string; local: boolean }

/** The static imports of a file (not `import()`, not `import type`): relative ones as paths under src, packages by name. */
function staticImports(file: string, text: string): Import[] {
  const specs = [...text.matchAll(/^\s*(?:import|export)\s(?!type\b)[^"'`;]*?from\s+["']([^"']+)["']/gm), ...text.matchAll(/^\s*import\s+["']([^"']+)["']/gm)]
  return specs
    .map((m) => m[1]!)
    .map((s) => (s.startsWith(".") ? { target: moduleFile(resolve(dirname(file), s)), local: true } : { target: s, local: false }))
}

/** The file a relative import names, under src without its extension: `x.ts`, `x.tsx` or a folder's `index.ts`. */
function moduleFile(abs: string): string {
  const bare = abs.replace(/\.tsx?$/, "")
  const file = existsSync(`${bare}.ts`) || existsSync(`${bare}.tsx`) ? bare : join(bare, "index")
  return relative(SRC, file)
}

/** Every file and package main.ts loads before a command runs, each with the chain that brings it in. */
function closure(entry: string, read: (file: string) => string): Map<string, string> {
  const seen = new Map<string, string>([[entry, entry]])
  const queue = [entry]
  while (queue.length) {
    const at = queue.shift()!
    for (const { target, local } of staticImports(join(SRC, at + ".ts"), read(at))) {
      if (seen.has(target)) continue
      seen.set(target, `${seen.get(at)} → ${target}`)
      if (local) queue.push(target)
    }
  }
  return seen
}

const fromDisk = (file: string) => readFileSync(join(SRC, existsSync(join(SRC, `${file}.ts`)) ? `${file}.ts` : `${file}.tsx`), "utf8")

function heavy(read: (file: string) => string): string[] {
  return [...closure("cli/main", read).entries()].filter(([file]) => HEAVY.test(file) || file === "@aircoding/scripted-model").map(([, chain]) => chain)
}

describe("the CLI answers usage errors without loading the product", () => {
  test("main.ts's static imports reach none of the engine, the roles, the runtime or the scripted model", () => {
    expect(heavy(fromDisk)).toEqual([])
  })

  test("a planted static import of the launcher is refused, with the chain that brings the engine in", () => {
    const planted = (file: string) => (file === "cli/help" ? `import { Launch } from "./launch"\n` + fromDisk(file) : fromDisk(file))
    const chains = heavy(planted)
    expect(chains).toContain("cli/main → cli/help → cli/launch → engine/index")
  })
})
