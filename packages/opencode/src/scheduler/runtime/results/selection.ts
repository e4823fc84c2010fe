import { createHash } from "node:crypto"
import { readdir, readFile, stat } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { git, gitTry } from "../git/git.ts"
import type { Exec } from "../exec/exec.ts"
import { Glob } from "../glob/glob.ts"
import { Toolchain } from "../toolchain/index.ts"
import type { ResultEntry } from "./entry.ts"
import { Results } from "./index.ts"
import { ResultStore } from "./store.ts"

/**
 * Test selection by changed binaries, failing safe. After the build, each CTest test gets a print: the
 * hash of its executable and the shared libraries it loads (the loader's list, `ldd`), its command line,
 * its properties (working directory, environment, REQUIRED_FILES, RESOURCE_*…), the content of every file
 * its arguments or REQUIRED_FILES name, and the tracked files under a working directory in the sources.
 * The worktree's own path is taken out of every string and binary first (RPATHs, __FILE__), so the same
 * build in two worktrees prints the same.
 *
 * A test whose print equals the one recorded for the task's base, where it passed, is reused. Any doubt
 * runs it: no print (an executable outside the worktree, a script's interpreter, no command), a test the
 * base did not have or did not pass, a test command that is not one plain `ctest --test-dir <dir>`, a
 * changed test-data file (toolchain `testData`), a base recorded under other rules or tools (its key
 * differs, so it is not found: a toolchain switch turns selection off).
 */
export namespace Selection {
  /** The one test command selection understands: `ctest --test-dir <dir> [options]`, no shell syntax. */
  export function ctestDir(rules: Toolchain.Rules): string | undefined {
    if (rules.test.length !== 1) return undefined
    const command = rules.test[0]!
    if (/[;&|<>`$(){}\\'"*?]/.test(command)) return undefined
    const words = command.trim().split(/\s+/)
    if (words[0] !== "ctest") return undefined
    if (words.some((w) => /^(-R|-E|-L|-LE|--tests-regex|--exclude-regex|-I|--tests-information|-U|--union|--rerun-failed)$/.test(w))) return undefined
    const at = words.indexOf("--test-dir")
    return at >= 0 ? words[at + 1] : undefined
  }

  const ShowOnly = z.object({
    tests: z.array(
      z.object({
        name: z.string(),
        command: z.array(z.string()).optional(),
        properties: z.array(z.object({ name: z.string(), value: z.unknown() })).optional(),
      }),
    ),
  })

  const contentCache = new Map<string, Promise<string | undefined>>()

  /** The file's content hash with `strip` (the worktree's path) taken out; cached by path, size and mtime. */
  async function fileHash(file: string, strip: string): Promise<string | undefined> {
    const info = await stat(file).catch(() => undefined)
    if (!info?.isFile()) return undefined
    const id = `${strip}\0${file}\0${info.size}\0${info.mtimeMs}`
    let known = contentCache.get(id)
    if (!known) {
      known = readFile(file)
        .then((bytes) => createHash("sha256").update(bytes.toString("latin1").split(strip).join("<wt>"), "latin1").digest("hex"))
        .catch(() => undefined)
      contentCache.set(id, known)
    }
    return known
  }

  function hash(value: unknown): string {
    return createHash("sha256").update(JSON.stringify(value)).digest("hex")
  }

  /**
   * Every CTest test's print in `worktree` (built), by running ctest's listing and ldd through `exec` (the
   * sandbox: both read the task's own build). Undefined when the listing cannot be had: selection is off.
   */
  export async function prints(exec: Exec, worktree: string, rules: Toolchain.Rules, env: NodeJS.ProcessEnv): Promise<ResultEntry.Body["prints"]> {
    const dir = ctestDir(rules)
    if (!dir) return undefined
    const listed = await exec(`ctest --test-dir ${dir} --show-only=json-v1`, [], { cwd: worktree, env, shell: true, timeoutMs: 60_000, probe: true })
    if (!listed.ok) return undefined
    let tests: z.infer<typeof ShowOnly>["tests"]
    try {
      tests = ShowOnly.parse(JSON.parse(listed.stdout)).tests
    } catch {
      return undefined
    }
    const normal = (text: string) => text.split(worktree).join("<wt>")
    const built = tests.map((t) => t.command?.[0]).filter((p): p is string => !!p && p.startsWith(worktree + path.sep))
    const linked = await linkedLibraries(exec, worktree, env, [...new Set(built)])
    const out: { name: string; print: string }[] = []
    for (const test of tests) {
      const print = await printOf(worktree, test, normal, linked)
      if (print) out.push({ name: test.name, print })
    }
    return out
  }

  /** How many programs one `ldd` call reads: one sandboxed call per test binary cost the test gate seconds per task. */
  const LDD_BATCH = 100

  /**
   * What ldd said of a program, by what decides it: the program's bytes (the worktree's path taken out), the loader's
   * search path, and the shared objects the build directory holds (a new one may be found first). The libraries are
   * kept with the worktree as `<wt>`, so another slot's identical binary is answered too. ldd reads every program
   * of every test gate, a run's slowest listing (seconds per task with a hundred test binaries) while most binaries
   * are relinked byte for byte; what the libraries hold is hashed again for every print all the same.
   */
  const lddCache = new Map<string, string[]>()

  /** The shared objects under the build directory, by path relative to the worktree, sorted. */
  async function sharedObjects(worktree: string): Promise<string> {
    const found: string[] = []
    const walk = async (dir: string): Promise<void> => {
      for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const full = path.join(dir, entry.name)
        if (entry.isDirectory()) await walk(full)
        else if (/\.so(\.|$)/.test(entry.name)) found.push(path.relative(worktree, full))
      }
    }
    await walk(path.join(worktree, Toolchain.BUILD_DIR))
    return found.sort().join("\0")
  }

  /**
   * The shared libraries each program loads (absolute paths; `[]` for a static one), from `ldd` over the programs not
   * answered before (lddCache); a program ldd could not read is absent (no print: its tests always run).
   */
  async function linkedLibraries(exec: Exec, worktree: string, env: NodeJS.ProcessEnv, programs: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>()
    const objects = await sharedObjects(worktree)
    const keys = new Map<string, string>()
    for (const program of programs) {
      const content = await fileHash(program, worktree)
      if (!content) continue
      const key = hash({ content, program: program.split(worktree).join("<wt>"), loaderPath: env.LD_LIBRARY_PATH ?? null, objects })
      keys.set(program, key)
      const known = lddCache.get(key)
      if (known) out.set(program, known.map((lib) => lib.split("<wt>").join(worktree)))
    }
    const asked = await ldd(exec, worktree, env, programs.filter((p) => !out.has(p)))
    for (const [program, libs] of asked) {
      out.set(program, libs)
      const key = keys.get(program)
      if (key) lddCache.set(key, libs.map((lib) => lib.split(worktree).join("<wt>")))
    }
    return out
  }

  async function ldd(exec: Exec, worktree: string, env: NodeJS.ProcessEnv, programs: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>()
    for (let i = 0; i < programs.length; i += LDD_BATCH) {
      const batch = programs.slice(i, i + LDD_BATCH)
      const loaded = await exec("ldd", batch, { cwd: worktree, env, shell: false, timeoutMs: 30_000, probe: true })
      // One program: ldd prints its libraries alone; several: each under a "<program>:" line.
      const sections = new Map<string, string>()
      if (batch.length === 1) sections.set(batch[0]!, loaded.stdout)
      else {
        let current: string | undefined
        for (const line of loaded.stdout.split("\n")) {
          const header = /^(\S.*):$/.exec(line)
          if (header && batch.includes(header[1]!)) {
            current = header[1]!
            sections.set(current, "")
          } else if (current) sections.set(current, sections.get(current)! + line + "\n")
        }
      }
      for (const program of batch) {
        const text = sections.get(program)
        if (text === undefined) continue
        const libs = [...text.matchAll(/=>\s*(\/\S+)/g)].map((m) => m[1]!)
        // Alone, a program ldd could not read fails the call; a static one says so. Among several, ldd says either on
        // stderr, unattributed, and leaves the program's section empty: the program's own hash then decides.
        if (batch.length === 1) {
          if (loaded.ok) out.set(program, libs)
          else if (/not a dynamic executable/.test(loaded.output)) out.set(program, [])
        } else out.set(program, libs)
      }
    }
    return out
  }

  async function printOf(
    worktree: string,
    test: z.infer<typeof ShowOnly>["tests"][number],
    normal: (text: string) => string,
    linked: ReadonlyMap<string, readonly string[]>,
  ): Promise<string | undefined> {
    const [program, ...args] = test.command ?? []
    // Only a program the project built is known whole; an interpreter's script imports what nobody lists.
    if (!program || !program.startsWith(worktree + path.sep)) return undefined
    const exe = await fileHash(program, worktree)
    if (!exe) return undefined
    const loads = linked.get(program)
    if (!loads) return undefined
    const libs: Record<string, string> = {}
    for (const lib of loads) {
      const h = await fileHash(lib, worktree)
      if (!h) return undefined
      libs[normal(lib)] = h
    }
    const properties = Object.fromEntries((test.properties ?? []).map((p) => [p.name, p.value]))
    const files: Record<string, string | null> = {}
    const required = properties.REQUIRED_FILES
    const named = [...args, ...(Array.isArray(required) ? required.map(String) : typeof required === "string" ? required.split(";") : [])]
    for (const arg of named) {
      if (!path.isAbsolute(arg)) continue
      const info = await stat(arg).catch(() => undefined)
      if (info?.isDirectory()) return undefined
      files[normal(arg)] = info ? ((await fileHash(arg, worktree)) ?? null) : null
    }
    // A working directory in the sources: its tracked files are the test's inputs too.
    const cwd = typeof properties.WORKING_DIRECTORY === "string" ? properties.WORKING_DIRECTORY : undefined
    let tree = ""
    if (cwd) {
      const relative = path.relative(worktree, cwd)
      if (relative.startsWith("..") || path.isAbsolute(relative)) return undefined
      if (!relative.startsWith(Toolchain.BUILD_DIR) && relative !== "") tree = (await gitTry(worktree, ["ls-tree", "-r", "HEAD", "--", relative])).stdout
      if (relative === "") tree = (await gitTry(worktree, ["ls-tree", "-r", "HEAD"])).stdout
    }
    return hash({ command: [program, ...args].map(normal), exe, libs, properties: JSON.parse(normal(JSON.stringify(properties))), files, tree })
  }

  /** The tracked files the toolchain lists as test data, hashed (a change re-runs every test). */
  export async function dataHash(worktree: string, commit: string, globs: readonly string[]): Promise<string> {
    if (globs.length === 0) return ""
    const patterns = globs.map((g) => Glob.toRegExp(g))
    const listing = (await git(worktree, ["ls-tree", "-r", "-z", commit]))
      .split("\0")
      .filter((line) => patterns.some((p) => p.test(line.slice(line.indexOf("\t") + 1))))
    return hash(listing)
  }

  export interface Plan {
    /** Tests whose print equals the base's passing one: reused. */
    reuse: string[]
    /** Tests to run. */
    run: string[]
    prints: NonNullable<ResultEntry.Body["prints"]>
    /** The base entry the reused results come from. */
    base: ResultEntry.Entry
  }

  /** Which tests must run, against the base's recorded passing run; undefined: run them all. */
  export function plan(current: ResultEntry.Body["prints"], base: ResultEntry.Entry): Plan | undefined {
    if (!current || !base.prints) return undefined
    const before = new Map(base.prints.map((p) => [p.name, p.print]))
    const reuse: string[] = []
    const run: string[] = []
    for (const { name, print } of current) {
      if (before.get(name) === print && base.test.tests[name] === "passed") reuse.push(name)
      else run.push(name)
    }
    return { reuse, run, prints: current, base }
  }

  /** The test command restricted to `names` (CTest's -R, anchored and escaped); undefined when a name cannot be quoted. */
  export function restricted(command: string, names: readonly string[]): string | undefined {
    if (names.some((n) => n.includes("'"))) return undefined
    const regex = `^(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})$`
    return `${command} -R '${regex}'`
  }

  /** What the plan reads of the test gate's context (a GateContext is one), so selection does not import the gates. */
  export interface GateTree {
    readonly worktree: string
    readonly base: string
    readonly rules: Toolchain.Rules
    readonly env: NodeJS.ProcessEnv
    readonly label: string
    readonly exec: Exec
  }

  /**
   * The test gate's plan: the task's base (its merge-base with the integration branch) must have a passing
   * run recorded with prints under the same rules and tools, and the same test data; else undefined.
   */
  export async function forGate(ctx: GateTree, where: Results.Where): Promise<{ plan: Plan } | undefined> {
    try {
      if (!Toolchain.resultsRules(ctx.rules).selection || !ctestDir(ctx.rules)) return undefined
      const base = (await gitTry(ctx.worktree, ["merge-base", "HEAD", ctx.base])).stdout.trim()
      const head = (await git(ctx.worktree, ["rev-parse", "HEAD"])).trim()
      if (!base) return undefined
      const baseKey = await Results.keyOf({ ...where, commit: base })
      if (!baseKey.key) return undefined
      const found = await ResultStore.open(where.root, where.rules, where.env).get(baseKey.key.key, `selection base, ${ctx.label}`)
      if (!found?.entry.prints) return undefined
      const data = Toolchain.resultsRules(ctx.rules).testData
      if ((await dataHash(ctx.worktree, base, data)) !== (await dataHash(ctx.worktree, head, data))) return undefined
      const current = await prints(ctx.exec, ctx.worktree, ctx.rules, ctx.env)
      const made = plan(current, found.entry)
      return made ? { plan: made } : undefined
    } catch {
      return undefined
    }
  }
}
