import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

/**
 * One process runner (issue 42 item 3): src/scheduler/runtime/process.ts, which puts a child in its own process
 * group, kills the whole tree at a timeout or an abort, and hands the terminal over when asked (`terminal`).
 * A file that spawns a process another way escapes all of that. This check reads the product's code (src/ and
 * bin/ of every package); the exceptions are written, with their reasons, at the top of the runner's file.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..")
const THE_RUNNER = "packages/opencode/src/scheduler/runtime/process.ts"

/** The ways to start a process without the runner. */
const SPAWNS = /["']node:child_process["']|["']child_process["']|\bBun\.spawn(?:Sync)?\(|\bBun\.\$`|\bexeca\b|\bcross-spawn\b/

/** The files the runner's own comment lists as exceptions ("- `path`: reason"). */
function writtenExceptions(): string[] {
  const text = readFileSync(join(ROOT, THE_RUNNER), "utf8")
  const head = text.slice(0, text.indexOf("export namespace Proc"))
  return [...head.matchAll(/^ \* - `([^`]+)`:/gm)].map((m) => m[1]!)
}

/** The lines of `text` that start a process without the runner, as `line N: <line>`. */
function spawnsIn(text: string): string[] {
  return text.split("\n").flatMap((line, i) => (SPAWNS.test(line) && !/^\s*(\/\/|\*)/.test(line) ? [`line ${i + 1}: ${line.trim()}`] : []))
}

function productFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : /\.(ts|tsx|js|mjs)$/.test(d.name) ? [join(dir, d.name)] : []))
  return readdirSync(join(ROOT, "packages")).flatMap((pkg) =>
    ["src", "bin"].flatMap((dir) => {
      try {
        return walk(join(ROOT, "packages", pkg, dir))
      } catch {
        return []
      }
    }),
  )
}

describe("one process runner: src/scheduler/runtime/process.ts", () => {
  test("finds a spawner of its own (planted examples), and not a word in a comment", () => {
    expect(spawnsIn('import { spawnSync } from "node:child_process"')).toHaveLength(1)
    expect(spawnsIn('const { execFile } = await import("child_process")')).toHaveLength(1)
    expect(spawnsIn('const child = Bun.spawn(["git", "status"])')).toHaveLength(1)
    expect(spawnsIn("await Bun.$`git status`")).toHaveLength(1)
    expect(spawnsIn('// not through "node:child_process": the runner')).toEqual([])
    expect(spawnsIn('const r = await Proc.run("git", ["status"], { cwd, env })')).toEqual([])
  })

  test("no file of the product but the runner and its written exceptions spawns a process", () => {
    const exceptions = writtenExceptions()
    const found = productFiles()
      .map((file) => relative(ROOT, file))
      .filter((name) => name !== THE_RUNNER && !exceptions.includes(name))
      .flatMap((name) => spawnsIn(readFileSync(join(ROOT, name), "utf8")).map((hit) => `${name} ${hit}`))
    // Run it through Proc.run / Proc.runSync (git through git/git.ts; `terminal: true` for a program that needs
    // the terminal), or add the file with its reason to the list at the top of process.ts.
    expect(found).toEqual([])
  })

  test("every written exception still spawns (a stale one would let a new spawner in)", () => {
    for (const name of writtenExceptions()) expect(spawnsIn(readFileSync(join(ROOT, name), "utf8")), name).not.toEqual([])
  })
})
