import { existsSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

/**
 * What a module loads when it is imported: its value imports (not `import type`, which cost nothing at run time),
 * followed through the relative ones, with the packages named on the way. The TUI plugin's and the CLI's light
 * start-up are held to it (test/tui/plugin-imports.test.ts, test/cli-view/cli-start.test.ts).
 */
export namespace ImportGraph {
  export type Options = {
    /** Follow `import("…")` too (what the module may load later), not only what loads with it. */
    dynamic?: boolean
    /** A file's text (default: read from disk), so a test can plant an import. */
    read?: (file: string) => string
  }
  /** Files relative to `root` with the chain of imports that brings each in (`a.ts → b.ts`), and the packages named. */
  export type Graph = { files: Map<string, string>; packages: Set<string> }

  export function specifiers(text: string, dynamic: boolean): string[] {
    const specs: string[] = []
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?(?:[^"';]*?\sfrom\s+)?["']([^"']+)["']/gm)) if (!m[1]) specs.push(m[2]!)
    if (dynamic) for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) specs.push(m[1]!)
    return specs
  }

  /** Walks from `entry` (a file under `root`), breadth first, so each file's chain is a shortest one. */
  export function walk(root: string, entry: string, opts: Options = {}): Graph {
    const read = opts.read ?? ((file: string) => readFileSync(file, "utf8"))
    const name = (file: string) => relative(root, file)
    const files = new Map<string, string>([[name(entry), name(entry)]])
    const packages = new Set<string>()
    const queue = [entry]
    while (queue.length) {
      const file = queue.shift()!
      for (const spec of specifiers(read(file), opts.dynamic === true)) {
        if (!spec.startsWith(".")) {
          packages.add(spec)
          continue
        }
        const base = resolve(dirname(file), spec)
        const found = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((c) => /\.tsx?$/.test(c) && existsSync(c))
        if (!found) throw new Error(`${name(file)} imports ${spec}, which was not found`)
        if (files.has(name(found))) continue
        files.set(name(found), `${files.get(name(file))} → ${name(found)}`)
        queue.push(found)
      }
    }
    return { files, packages }
  }
}
