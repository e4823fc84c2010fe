import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

/**
 * No dead exports (issue 42 item 4): a name a module of packages/[pkg]/src exports must be named by another
 * file (src, test, bench, bin, scripts: exported for a test counts as used). Otherwise it is either dead code
 * or a name its own file keeps to itself: drop the code, or the `export`. Read as text, by whole words, so a
 * name another file merely mentions counts as used: this check never cries wolf, and misses the odd name too
 * common to tell. Members of an exported namespace are its own API and are not checked here.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")

/** The public API: files whose exports are for programs outside this repository. */
const PUBLIC: Record<string, string> = {
  "packages/opencode/src/plugin.ts": "the plugin entry OpenCode loads (package.json exports)",
  "packages/opencode/src/tui/plugin.tsx": "the TUI plugin entry OpenCode loads",
  "packages/opencode/bin/aircoding.ts": "the bin",
  "packages/scripted-model/src/index.ts": "the scripted model's index (its package's exports)",
  "packages/scripted-model/bin/scripted-model.ts": "the scripted model's bin",
}

/** Single names kept exported on purpose, each with its reason. */
const KEPT: Record<string, string> = {
  "packages/opencode/src/scheduler/runtime/ports.ts":
    "the interpreter's ports, each the contract an implementation or a test's double fills (issue 42 item 2 reworks them)",
}

const DECLARATION = /^export\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|abstract\s+class|interface|type|namespace|enum)\s+([A-Za-z_$][\w$]*)/gm

/** The names `text` exports at its top level, with their lines. */
function exportsOf(text: string): { name: string; line: number }[] {
  return [...text.matchAll(DECLARATION)].map((m) => ({ name: m[1]!, line: text.slice(0, m.index).split("\n").length }))
}

const mentions = (text: string, name: string) => new RegExp(`(?<![\\w$])${name.replace(/\$/g, "\\$")}(?![\\w$])`).test(text)

/** The exports of `files` (name → text) that no other file names, as `file:line name`. */
function deadExports(files: Map<string, string>, checked: (file: string) => boolean): string[] {
  const dead: string[] = []
  for (const [file, text] of files) {
    if (!checked(file)) continue
    for (const { name, line } of exportsOf(text))
      if (![...files].some(([other, body]) => other !== file && mentions(body, name))) dead.push(`${file}:${line} ${name}`)
  }
  return dead
}

function repositoryFiles(): Map<string, string> {
  const walk = (dir: string): string[] =>
    !existsSync(dir)
      ? []
      : readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.name === "node_modules" ? [] : d.isDirectory() ? walk(join(dir, d.name)) : /\.tsx?$/.test(d.name) ? [join(dir, d.name)] : []))
  const files = [
    ...readdirSync(join(ROOT, "packages")).flatMap((pkg) => ["src", "test", "bench", "bin", "scripts"].flatMap((dir) => walk(join(ROOT, "packages", pkg, dir)))),
    ...walk(join(ROOT, "test")),
  ]
  return new Map(files.map((file) => [relative(ROOT, file), readFileSync(file, "utf8")]))
}

describe("no export that nothing imports", () => {
  test("finds an export no other file names, and none another file uses (planted examples)", () => {
    const files = new Map([
      ["packages/x/src/a.ts", "export function used() {}\nexport const forgotten = 1\nexport type Kept = string\n"],
      ["packages/x/test/a.test.ts", 'import { used } from "../src/a"\nconst k: Kept = "x"\n'],
    ])
    expect(deadExports(files, (f) => f.includes("/src/"))).toEqual(["packages/x/src/a.ts:2 forgotten"])
  })

  test("every file of packages/*/src, but the public API and the kept ones", () => {
    const files = repositoryFiles()
    const dead = deadExports(files, (file) => /^packages\/[^/]+\/src\//.test(file) && !(file in PUBLIC) && !(file in KEPT))
    // Remove the dead code, or drop the `export` of a name only its own file uses; a name for programs
    // outside this repository belongs in a PUBLIC file.
    expect(dead).toEqual([])
  })

  test("the public API and the kept files exist", () => {
    for (const file of [...Object.keys(PUBLIC), ...Object.keys(KEPT)]) expect(existsSync(join(ROOT, file)), file).toBe(true)
  })
})
