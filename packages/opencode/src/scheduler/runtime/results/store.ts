import { readdir, readFile, rm, stat, utimes } from "node:fs/promises"
import { hostname } from "node:os"
import path from "node:path"
import { writeFileAtomic } from "../store/atomic.ts"
import { JsonLines } from "../store/jsonl.ts"
import { Toolchain } from "../toolchain/index.ts"
import { ResultEntry } from "./entry.ts"
import { RemoteStore } from "./remote.ts"

/**
 * Where results live: a local directory per project (`.air/local/results/ac/<2>/<key>.json`, shared by its
 * worktrees) and, when the toolchain names one, a remote store the team shares (remote.ts). A lookup reads
 * local first, then the remote (a remote hit is kept locally); a record writes both, the remote only when
 * this machine may write (`remoteMode`, or AIRCODING_RESULTS_REMOTE_MODE). Every lookup is logged in
 * `lookups.jsonl` (hit rate, time saved: `aircoding doctor`); past `maxSize` the oldest entries go.
 */
export namespace ResultStore {
  export const LOOKUPS = "lookups.jsonl"
  export const MODE_ENV = "AIRCODING_RESULTS_REMOTE_MODE"

  export interface Hit {
    entry: ResultEntry.Entry
    /** "local", or the remote's place. */
    source: string
  }

  /** Reads an entry's text for `key`: the entry when it checks out, else why not (each kind of entry has its own). */
  export type Opener<E> = (text: string, key: string) => { entry?: E; problem?: string }

  export interface Store {
    readonly dir: string
    readonly remote?: { where: string; writable: boolean }
    get(key: string, what: string): Promise<Hit | undefined>
    /** `get` for another kind of entry (an analysis result: analysis.ts), checked by its own `open`. */
    read<E>(key: string, what: string, open: Opener<E>): Promise<{ entry: E; source: string } | undefined>
    put(body: ResultEntry.Body): Promise<void>
    /** `put` for an entry already sealed by its own kind (its `key` names the file). */
    write(entry: { key: string }): Promise<void>
    /** Logs a lookup that found a result and saved `savedMs` (callers know what the reuse saved). */
    saved(key: string, what: string, savedMs: number): Promise<void>
  }

  export function open(root: string, rules: Toolchain.Rules, env: NodeJS.ProcessEnv = process.env): Store {
    const settings = Toolchain.resultsRules(rules)
    const dir = path.resolve(root, settings.dir)
    const backend = settings.remote ? RemoteStore.open(settings.remote) : undefined
    const mode = env[MODE_ENV] === "read-only" || env[MODE_ENV] === "read-write" ? env[MODE_ENV] : settings.remoteMode
    const writable = mode === "read-write"
    const limit = parseSize(settings.maxSize)
    const fileOf = (key: string) => path.join(dir, "ac", key.slice(0, 2), `${key}.json`)
    // A lookup is logged for doctor's figures only: a log that cannot be written never fails the lookup.
    const log = async (line: Record<string, unknown>) => {
      try {
        JsonLines.append(path.join(dir, LOOKUPS), { at: new Date().toISOString(), ...line }, { fsync: false })
      } catch {
        // no figures for this lookup
      }
    }
    const read = async <E>(key: string, what: string, open: Opener<E>): Promise<{ entry: E; source: string } | undefined> => {
      const file = fileOf(key)
      const local = await readFile(file, "utf8").catch(() => undefined)
      if (local !== undefined) {
        const opened = open(local, key)
        if (opened.entry) {
          const now = new Date()
          await utimes(file, now, now).catch(() => undefined)
          await log({ key, what, hit: "local" })
          return { entry: opened.entry, source: "local" }
        }
        await rm(file, { force: true })
        await log({ key, what, problem: opened.problem, source: "local" })
      }
      if (backend) {
        const text = await backend.get(key)
        const opened = text === undefined ? {} : open(text, key)
        if (opened.entry) {
          await keep(fileOf(key), opened.entry)
          await log({ key, what, hit: backend.where })
          return { entry: opened.entry, source: backend.where }
        }
        if ("problem" in opened) await log({ key, what, problem: opened.problem, source: backend.where })
      }
      await log({ key, what, miss: true })
      return undefined
    }
    const write = async (entry: { key: string }): Promise<void> => {
      await keep(fileOf(entry.key), entry)
      await evict(dir, limit)
      if (backend && writable) await backend.put(entry.key, JSON.stringify(entry))
    }
    return {
      dir,
      ...(backend ? { remote: { where: backend.where, writable } } : {}),
      get: (key, what) => read(key, what, ResultEntry.open),
      read,
      put: (body) => write(ResultEntry.seal(body)),
      write,
      async saved(key, what, savedMs) {
        await log({ key, what, savedMs })
      },
    }
  }

  async function keep(file: string, entry: unknown): Promise<void> {
    await writeFileAtomic(file, JSON.stringify(entry, null, 2) + "\n", { backup: false })
  }

  export function host(): string {
    return hostname()
  }

  /** "1G", "500M", "64KiB" → bytes. */
  export function parseSize(text: string): number {
    const match = /^(\d+(?:\.\d+)?)([KMGT]?)i?B?$/i.exec(text.trim())
    if (!match) return Number.POSITIVE_INFINITY
    const power = ["", "K", "M", "G", "T"].indexOf(match[2]!.toUpperCase())
    return Math.floor(Number(match[1]) * 1024 ** power)
  }

  /** Every entry file with its size and last use (a hit touches it). */
  export async function entries(dir: string): Promise<{ file: string; size: number; used: number }[]> {
    const ac = path.join(dir, "ac")
    const found: { file: string; size: number; used: number }[] = []
    for (const shard of await readdir(ac).catch(() => [] as string[])) {
      for (const name of await readdir(path.join(ac, shard)).catch(() => [] as string[])) {
        if (!name.endsWith(".json")) continue
        const file = path.join(ac, shard, name)
        const info = await stat(file).catch(() => undefined)
        if (info) found.push({ file, size: info.size, used: info.mtimeMs })
      }
    }
    return found
  }

  /** Removes the least recently used entries until the store is within `limit` bytes. */
  export async function evict(dir: string, limit: number): Promise<number> {
    const all = await entries(dir)
    let total = all.reduce((sum, e) => sum + e.size, 0)
    if (total <= limit) return 0
    let removed = 0
    for (const e of all.sort((a, b) => a.used - b.used)) {
      if (total <= limit) break
      await rm(e.file, { force: true })
      total -= e.size
      removed++
    }
    return removed
  }

  type Lookup = { hit?: string; miss?: boolean; savedMs?: number }

  /** The logged lookups; a log that cannot be read counts none (doctor reports, it does not fail on it). */
  function lookups(file: string): Lookup[] {
    try {
      return JsonLines.read<Lookup>(file)
    } catch {
      return []
    }
  }

  export interface Summary {
    dir: string
    entries: number
    bytes: number
    lookups: number
    hits: number
    savedMs: number
    remote?: { where: string; writable: boolean }
  }

  /** What doctor shows: size, entries, hit rate over the logged lookups, time saved. */
  export async function summary(root: string, rules: Toolchain.Rules, env: NodeJS.ProcessEnv = process.env): Promise<Summary> {
    const store = open(root, rules, env)
    const all = await entries(store.dir)
    const lines = lookups(path.join(store.dir, LOOKUPS))
    return {
      dir: store.dir,
      entries: all.length,
      bytes: all.reduce((sum, e) => sum + e.size, 0),
      lookups: lines.filter((l) => l.hit || l.miss).length,
      hits: lines.filter((l) => l.hit).length,
      savedMs: lines.reduce((sum, l) => sum + (l.savedMs ?? 0), 0),
      ...(store.remote ? { remote: store.remote } : {}),
    }
  }
}
