import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { z } from "zod"
import { ConfigDirs } from "./config-dirs"
import { Paths } from "./paths"
import { acquireLock, type HeldLock } from "../scheduler/runtime/store/lock"

/**
 * The engine's answer to "is AirCoding loaded?" costs two engine start-ups (about 12 s of CPU on two cores,
 * measured: `opencode debug config` 6.1 s, `debug agent main` 5.8 s) on every launch. The answer can only
 * change with what the engine reads to reach it, so a passing answer is kept under a key of exactly that:
 * the engine binary, the config AirCoding hands it (ports of a local model aside), every OPENCODE_* variable,
 * the config files it finds (global, the project's `.opencode/`, any opencode.json from the project up to /),
 * and the plugin's own sources, prompts and lock. Anything else — a new file, an edit, an upgrade — misses and
 * asks the engine again. Only passing answers are kept: a failure is always re-checked.
 */
export namespace VerifyCache {
  /** Beside the engine AirCoding pins (node_modules/.cache, as other tools keep theirs): one answer per checkout, not per HOME. */
  export const DEFAULT_DIR = join(Paths.packageRoot, "node_modules", ".cache", "aircoding")
  const FILE = "verified.json"
  const KEEP = 16

  const Entry = z.object({ key: z.string(), at: z.string(), agents: z.array(z.string()), model: z.string().optional(), mainModel: z.string().optional() })
  export type Entry = z.infer<typeof Entry>
  const Store = z.object({ entries: z.array(Entry) })

  /** A file as the engine would read it: its content's hash (its path is the caller's to name), "-" when absent. */
  function content(path: string): string {
    try {
      const s = statSync(path)
      if (s.size > 1 << 20) return `${s.size}:${s.mtimeMs}`
      return createHash("sha256").update(readFileSync(path)).digest("hex")
    } catch {
      return "-"
    }
  }

  /** Every file under dir down to `depth` levels (node_modules and .git skipped), sorted, each as `describe` tells. */
  function walk(dir: string, depth: number, describe: (full: string, rel: string) => string, at = ""): string[] {
    if (depth < 0) return []
    let names: string[]
    try {
      names = readdirSync(join(dir, at)).sort()
    } catch {
      return []
    }
    const out: string[] = []
    for (const name of names) {
      if (name === "node_modules" || name === ".git") continue
      const rel = join(at, name)
      const full = join(dir, rel)
      try {
        if (statSync(full).isDirectory()) out.push(...walk(dir, depth - 1, describe, rel))
        else out.push(describe(full, rel))
      } catch {
        // Gone between the listing and the stat: not part of what the engine reads.
      }
    }
    return out
  }

  /** Config files by content, named relative to their dir: a temporary HOME reads the same. */
  const byContent = (full: string, rel: string) => `${rel}:${content(full)}`

  /**
   * What the engine's global config dir holds that is not config the check reads: the files the engine writes
   * there for itself on its first start (its own .gitignore lists them) and AirCoding's TUI file. Counting
   * them made the second launch on a new machine miss and ask the engine again.
   */
  const NOT_CONFIG = new Set([".gitignore", "package.json", "package-lock.json", "bun.lock", ConfigDirs.TUI_CONFIG_FILE])

  /** The config file the engine creates on its first start says nothing but its schema: the same as no file. */
  const EMPTY_CONFIG = JSON.stringify({ $schema: "https://opencode.ai/config.json" })

  function saysNothing(full: string): boolean {
    try {
      return readFileSync(full, "utf8").replace(/\s+/g, "") === EMPTY_CONFIG
    } catch {
      return false
    }
  }

  /** The global config dir by content, without what is not config (above). */
  function globalConfig(env: NodeJS.ProcessEnv): string[] {
    return walk(ConfigDirs.globalConfigDir(env), 3, (full, rel) => (NOT_CONFIG.has(rel) || (/^opencode\.jsonc?$/.test(rel) && saysNothing(full)) ? "" : byContent(full, rel))).filter(Boolean)
  }

  /** AirCoding's own files by size and modification time: they stay where they are, and there are hundreds. */
  function stamp(full: string): string {
    try {
      const s = statSync(full)
      return `${full}:${s.size}:${s.mtimeMs}`
    } catch {
      return `${full}:-`
    }
  }

  /** The opencode.json(c) files that exist from dir up to the root (the engine looks for them on that path), by content. */
  function ancestors(dir: string): string[] {
    const out: string[] = []
    for (let at = dir; ; at = dirname(at)) {
      for (const name of ["opencode.json", "opencode.jsonc"]) if (existsSync(join(at, name))) out.push(`${name}:${content(join(at, name))}`)
      if (dirname(at) === at) return out
    }
  }

  /**
   * Paths of the machine (HOME, the project) stay out of the key, so one answer serves every project and
   * every test's throw-away HOME with the same config; what the files say is in it.
   */
  export function key(cwd: string, env: NodeJS.ProcessEnv, agents: readonly string[], mainTools: readonly string[]): string {
    const hash = createHash("sha256")
    const add = (part: string) => hash.update(part).update("\0")
    add(stamp(Paths.opencodeBinary()))
    // The scripted model listens on a new port each run: the port does not change what loads.
    add((env.OPENCODE_CONFIG_CONTENT ?? "").replace(/(127\.0\.0\.1|localhost):\d+/g, "$1:PORT"))
    // The TUI's own config file (a path in HOME) is not read by the server the check asks.
    const skip = new Set(["OPENCODE_CONFIG_CONTENT", "OPENCODE_TUI_CONFIG"])
    for (const name of Object.keys(env).filter((n) => n.startsWith("OPENCODE_") && !skip.has(n)).sort()) add(`${name}=${env[name]}`)
    for (const part of [...globalConfig(env), "--", ...walk(join(cwd, ".opencode"), 4, byContent), "--", ...ancestors(cwd)]) add(part)
    for (const part of [...walk(join(Paths.packageRoot, "src"), 8, stamp), ...walk(Paths.prompts, 2, stamp), ...walk(dirname(Paths.pluginEntry), 0, stamp)]) add(part)
    for (const path of [join(Paths.packageRoot, "package.json"), join(Paths.repoRoot, "bun.lock"), Paths.distributionConfig]) add(`${path}:${content(path)}`)
    add(`${agents.join(",")}|${mainTools.join(",")}`)
    return hash.digest("hex")
  }

  function read(dir: string): Entry[] {
    try {
      return Store.parse(JSON.parse(readFileSync(join(dir, FILE), "utf8"))).entries
    } catch {
      // Missing, torn or from another version: nothing cached, the engine is asked.
      return []
    }
  }

  /**
   * Holds the check of one key across processes while it runs (released by the caller). A checkout that
   * cannot be written, or a holder that takes longer than a check can, only costs the sharing: undefined.
   */
  export async function claim(key: string, dir = DEFAULT_DIR): Promise<HeldLock | undefined> {
    try {
      mkdirSync(dir, { recursive: true })
      return await acquireLock(join(dir, `${key.slice(0, 24)}.lock`), { timeoutMs: 150_000, maxRetryMs: 500, what: "a check of the engine's config" })
    } catch {
      return undefined
    }
  }

  export function lookup(key: string, dir = DEFAULT_DIR): Entry | undefined {
    return read(dir).find((e) => e.key === key)
  }

  /** Kept atomically (a rename), newest first, the last KEEP answers; a checkout that cannot be written keeps none. */
  export function remember(entry: Entry, dir = DEFAULT_DIR): void {
    const entries = [entry, ...read(dir).filter((e) => e.key !== entry.key)].slice(0, KEEP)
    const path = join(dir, FILE)
    const tmp = `${path}.${process.pid}.tmp`
    try {
      mkdirSync(dir, { recursive: true })
      writeFileSync(tmp, JSON.stringify({ entries }) + "\n")
      renameSync(tmp, path)
    } catch {
      // Read-only install: every launch asks the engine, as before.
    }
  }
}
