import * as fs from "node:fs"
import { dirname, basename, join } from "node:path"

let counter = 0

/**
 * Replaces a file so that a reader — or a crash at any instant — sees either the old content or the new,
 * never a mix: write a temp file beside it, fsync, keep the current version as `<file>.bak`, rename the
 * temp file over the original, fsync the directory.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array, options: { backup?: boolean } = {}): void {
  const dir = dirname(path)
  fs.mkdirSync(dir, { recursive: true })
  const tmp = join(dir, `.${basename(path)}.tmp-${process.pid}-${++counter}`)
  const fd = fs.openSync(tmp, "w", 0o644)
  try {
    fs.writeFileSync(fd, data)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  try {
    if (options.backup !== false && fs.existsSync(path)) keepBackup(path)
    fs.renameSync(tmp, path)
  } catch (error) {
    fs.rmSync(tmp, { force: true })
    throw error
  }
  fsyncDir(dir)
}

/** The same, for callers that prefer a promise; the work is synchronous so that it cannot interleave. */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: { backup?: boolean } = {}): Promise<void> {
  writeFileAtomicSync(path, data, options)
}

/**
 * The current file becomes the backup without a moment in which the file is missing: a copy of it is
 * renamed over the old backup. A copy, not a hard link: damage to one file must not reach the other.
 */
function keepBackup(path: string): void {
  const bak = `${path}.bak`
  const tmp = `${bak}.tmp-${process.pid}-${++counter}`
  fs.copyFileSync(path, tmp)
  fs.renameSync(tmp, bak)
}

function fsyncDir(dir: string): void {
  let fd: number | undefined
  try {
    fd = fs.openSync(dir, "r")
    fs.fsyncSync(fd)
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** Removes temp files a crash left behind next to `path`. */
export function removeStaleTemps(path: string): string[] {
  const dir = dirname(path)
  const prefixes = [`.${basename(path)}.tmp-`, `${basename(path)}.bak.tmp-`]
  const removed: string[] = []
  let entries: string[] = []
  try {
    entries = fs.readdirSync(dir)
  } catch {
    return removed
  }
  for (const entry of entries) {
    if (!prefixes.some((prefix) => entry.startsWith(prefix))) continue
    fs.rmSync(join(dir, entry), { force: true })
    removed.push(entry)
  }
  return removed
}

/**
 * Reads a file written by writeFileAtomic, falling back to its backup when the file is missing or does not
 * parse. Whatever happened is said in `warnings`; nothing is dropped silently.
 */
export function readWithBackup<T>(
  path: string,
  parse: (text: string) => T,
): { value: T; from: "file" | "backup"; warnings: string[] } | { value: null; warnings: string[] } {
  const warnings: string[] = []
  for (const [candidate, from] of [
    [path, "file"],
    [`${path}.bak`, "backup"],
  ] as const) {
    let text: string
    try {
      text = fs.readFileSync(candidate, "utf8")
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") warnings.push(`${candidate}: cannot be read (${String(error)})`)
      continue
    }
    try {
      const value = parse(text)
      if (from === "backup") warnings.push(`${path} is missing or damaged; using its backup ${candidate}`)
      return { value, from, warnings }
    } catch (error) {
      warnings.push(`${candidate} is damaged and was ignored: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return { value: null, warnings }
}
