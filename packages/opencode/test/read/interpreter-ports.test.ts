import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

/**
 * The interpreter reaches the world only through its ports (issue 42 item 2): git, the files, the knowledge
 * folder, the sessions, the clock are fields of `Ports` (src/scheduler/runtime/ports.ts), wired in `realPorts`
 * and faked in test/runtime/fake-ports.ts. So every effect of a command can be replaced in a test, and a walk
 * from `Interpreter.run` meets the world only at `this.ports`. Here the interpreter's value imports are followed
 * through every file they import: none may reach a module that does I/O (node:fs, node:child_process, the
 * process runner, a network client, …); type-only imports are free. Its own text calls no timer and reads no time.
 */
const SRC = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "src")
const INTERPRETER = "scheduler/runtime/interpreter.ts"

/** Packages and node modules that touch nothing: paths, URLs, hashes, schemas. Any other one is an effect. */
const PURE_MODULES = /^(node:)?(path|url|crypto|util)$|^zod$/

/**
 * Files the walk stops at although their imports reach effects, each with why it does none itself. Kept
 * short: a pure helper in an effectful file belongs in a pure file, or behind a port.
 */
const PURE_BY_REASON: Record<string, string> = {
  "scheduler/runtime/fault.ts":
    "names a failure's kind by `instanceof` on the error classes of git, the merge queue, the toolchain and the lock; it calls none of them",
  "scheduler/runtime/gates/outcome-event.ts":
    "reads each gate's route from the registry (`routeOf`, data) to word gates.passed or gates.failed; it runs no gate",
}

/** Timers and clocks beyond the ports' `clock`, and the process's own effects. */
const GLOBAL_EFFECTS = /\b(setTimeout|setInterval|setImmediate|queueMicrotask)\(|\bDate\.now\(|\bnew Date\(|\bperformance\.now\(|\bBun\.|\bfetch\(|\bprocess\.(env|exit|kill|cwd|chdir|stdout|stderr)\b/

function resolveLocal(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec)
  return [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((c) => /\.tsx?$/.test(c) && existsSync(c))
}

/** The modules `text` imports for their values: `import type` and clauses of type names only are left out. */
function valueImports(text: string): string[] {
  const specs: string[] = []
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\s)([^"'`;]*?)\s*from\s+["']([^"']+)["']/gm)) {
    const clause = m[1]!
    const braces = clause.match(/^\{([^{}]*)\}$/)?.[1]
    const typesOnly = braces !== undefined && braces.split(",").map((n) => n.trim()).filter(Boolean).every((n) => n.startsWith("type "))
    if (!typesOnly) specs.push(m[2]!)
  }
  for (const m of text.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) specs.push(m[1]!)
  for (const m of text.matchAll(/\bimport\(\s*["'`]([^"'`]+)["'`]\s*\)/g)) specs.push(m[1]!)
  return specs
}

/**
 * Each way `file`'s value imports reach an effect, as "a.ts → b.ts → node:fs" (paths relative to `root`): the first
 * path found per import of `file` itself, so the message says which import to put behind a port.
 */
function effectPaths(root: string, file: string, pureByReason: Record<string, string>): string[] {
  const memo = new Map<string, string[] | null>()
  const reach = (f: string, seen: Set<string>): string[] | null => {
    if (memo.has(f)) return memo.get(f)!
    if (seen.has(f) || relative(root, f) in pureByReason) return null
    seen.add(f)
    let found: string[] | null = null
    for (const spec of valueImports(readFileSync(f, "utf8"))) {
      if (!spec.startsWith(".")) {
        if (!PURE_MODULES.test(spec)) found = [spec]
      } else {
        const target = resolveLocal(f, spec)
        const rest = target ? reach(target, seen) : null
        if (rest) found = [relative(root, target!), ...rest]
      }
      if (found) break
    }
    memo.set(f, found)
    return found
  }
  return valueImports(readFileSync(file, "utf8")).flatMap((spec) => {
    if (!spec.startsWith(".")) return PURE_MODULES.test(spec) ? [] : [`${relative(root, file)} → ${spec}`]
    const target = resolveLocal(file, spec)
    const rest = target ? reach(target, new Set([file])) : null
    return rest ? [[relative(root, file), relative(root, target!), ...rest].join(" → ")] : []
  })
}

/** The lines of `text` that start a timer, read the time or touch the process, but comments. */
function globalEffects(text: string): string[] {
  return text.split("\n").flatMap((line, i) => (GLOBAL_EFFECTS.test(line) && !/^\s*(\/\/|\*|\/\*)/.test(line) ? [`line ${i + 1}: ${line.trim()}`] : []))
}

describe("the interpreter reaches the world only through its ports", () => {
  test("the finder sees an effect imported directly or through a helper, and not a type (planted examples)", () => {
    const dir = mkdtempSync(join(tmpdir(), "air-ports-"))
    try {
      writeFileSync(join(dir, "runner.ts"), 'import { spawn } from "node:child_process"\nexport const run = spawn\n')
      writeFileSync(join(dir, "helper.ts"), 'import { run } from "./runner"\nexport const help = run\n')
      writeFileSync(join(dir, "names.ts"), 'import { join } from "node:path"\nexport const name = (id: string) => join("air", id)\n')
      writeFileSync(join(dir, "fault.ts"), 'import { run } from "./runner"\nexport const isRun = (e: unknown) => e === run\n')
      writeFileSync(
        join(dir, "interpreter.ts"),
        [
          'import { readFileSync } from "node:fs"',
          'import { help } from "./helper"',
          'import type { run } from "./runner"',
          'import { type help as Help } from "./helper"',
          'import { name } from "./names"',
          'import { isRun } from "./fault"',
          "export const x = () => setTimeout(help, 10)",
          "// a comment that says setTimeout( is not a call",
        ].join("\n"),
      )
      const file = join(dir, "interpreter.ts")
      expect(effectPaths(dir, file, {})).toEqual(["interpreter.ts → node:fs", "interpreter.ts → helper.ts → runner.ts → node:child_process", "interpreter.ts → fault.ts → runner.ts → node:child_process"])
      // A file kept pure by its written reason stops the walk.
      expect(effectPaths(dir, file, { "fault.ts": "compares errors" })).toEqual(["interpreter.ts → node:fs", "interpreter.ts → helper.ts → runner.ts → node:child_process"])
      expect(globalEffects(readFileSync(file, "utf8"))).toEqual(["line 7: export const x = () => setTimeout(help, 10)"])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test("interpreter.ts imports nothing that does I/O, directly or through what it imports: it goes through `Ports`", () => {
    // Put the effect behind a field of Ports (ports.ts: the type, and the real one in realPorts; a fake in
    // test/runtime/fake-ports.ts), or move a pure helper out of its effectful file.
    expect(effectPaths(SRC, join(SRC, INTERPRETER), PURE_BY_REASON)).toEqual([])
  })

  test("interpreter.ts starts no timer and reads no time of its own (the ports' clock does)", () => {
    expect(globalEffects(readFileSync(join(SRC, INTERPRETER), "utf8"))).toEqual([])
  })

  test("every file kept pure by its reason is still one the walk would otherwise flag (a stale entry hides nothing)", () => {
    for (const [file, why] of Object.entries(PURE_BY_REASON)) {
      expect(existsSync(join(SRC, file)), file).toBe(true)
      const others = Object.fromEntries(Object.entries(PURE_BY_REASON).filter(([f]) => f !== file))
      expect(effectPaths(SRC, join(SRC, INTERPRETER), others).some((p) => p.includes(` → ${file} → `)), `${file}: ${why}`).toBe(true)
    }
  })
})
