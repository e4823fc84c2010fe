import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Exports nothing imports: a top-level `export` of a file under src/ whose name no other file of the package (src,
 * test, bench, scripts, bin, scenarios) spells. Names are matched as words, so a name another file merely mentions
 * counts as used: the list errs towards keeping. What is loaded by name from outside (the plugin's entry points, the
 * CLI's bin) is in `PUBLIC`. `bun scripts/dead-exports.ts` prints the list (`--members`: also namespaces' members);
 * test/house/dead-exports.test.ts keeps the top-level list empty.
 */
export const PACKAGE = fileURLToPath(new URL("../", import.meta.url))

/** Exports the engine or a user reaches by name, not by an import in this package: `file:name`. */
export const PUBLIC: readonly string[] = [
  // The default exports the engine loads (src/plugin.ts by package.json `exports`, src/tui/plugin.tsx by the TUI
  // config) are never listed: a default export is skipped.
  // The interpreter's ports: the seams a test implements to replace an effect (issue 42, item 2), named by their type.
  ...["Sessions", "Gates", "Merge", "Worktrees", "FinalCheck", "Baseline", "Fs", "Clock", "Adrs", "Knowledge", "HelperTrees"].map((port) => `src/scheduler/runtime/ports.ts:${port}Port`),
]

const SEARCHED = ["src", "test", "bench", "scripts", "bin", "scenarios", "engine-config"]

function files(dir: string, out: string[] = []): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return out
  }
  for (const name of names) {
    if (name === "node_modules" || name.startsWith(".")) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) files(path, out)
    else if (/\.(ts|tsx|js|mjs|json|txt|md)$/.test(name)) out.push(path)
  }
  return out
}

/**
 * The names a file exports at its top level (declarations and `export { a, b as c }` lists, not re-exports `from`);
 * with `members`, also the members of its exported namespaces (reported by `--members`, not yet kept empty).
 */
export function exportedNames(text: string, members = false): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:const|let|var|function\*?|class|interface|type|namespace|enum)\s+([A-Za-z_$][\w$]*)/gm)) out.push(m[1]!)
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}(?!\s*from)/gm))
    for (const part of m[1]!.split(",")) {
      const name = part.trim().split(/\s+as\s+/).pop()?.replace(/^type\s+/, "").trim()
      if (name) out.push(name)
    }
  if (/^export\s+default\b/m.test(text)) out.push("default")
  // Members of a top-level `export namespace` (two spaces in): exported to be reached as `Ns.member` from elsewhere.
  if (members) for (const m of text.matchAll(/^ {2}export\s+(?:declare\s+)?(?:async\s+)?(?:const|let|function\*?|class|interface|type|namespace|enum)\s+([A-Za-z_$][\w$]*)/gm)) out.push(m[1]!)
  return out
}

/** `file:name` for each export under `src/` that no other file of the package spells. */
export function deadExports(root: string = PACKAGE, publicApi: readonly string[] = PUBLIC, opts: { members?: boolean } = {}): string[] {
  const all = SEARCHED.flatMap((dir) => files(join(root, dir)))
  const texts = new Map(all.map((file) => [file, readFileSync(file, "utf8")]))
  // In how many files each word occurs: a name is used when a file other than its own spells it.
  const filesOf = new Map<string, number>()
  for (const text of texts.values()) for (const word of new Set(text.match(/[\w$]+/g) ?? [])) filesOf.set(word, (filesOf.get(word) ?? 0) + 1)
  const dead: string[] = []
  for (const [file, text] of texts) {
    const rel = relative(root, file).replace(/\\/g, "/")
    if (!rel.startsWith("src/") || !/\.tsx?$/.test(rel)) continue
    for (const name of new Set(exportedNames(text, opts.members))) {
      const id = `${rel}:${name}`
      if (publicApi.includes(id) || name === "default") continue
      if ((filesOf.get(name) ?? 0) <= 1) dead.push(id)
    }
  }
  return dead.sort()
}

if (import.meta.main) {
  const dead = deadExports(PACKAGE, PUBLIC, { members: process.argv.includes("--members") })
  for (const id of dead) console.log(id)
  process.exit(dead.length ? 1 : 0)
}
