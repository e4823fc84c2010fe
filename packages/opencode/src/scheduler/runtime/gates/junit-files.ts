import { lstat, readFile, realpath, rm } from "node:fs/promises"
import path from "node:path"
import { glob } from "tinyglobby"
import { JUnit } from "../results/junit.ts"

/**
 * The JUnit XML files a project's own test runner writes (toolchain.json `junit`: paths or globs relative
 * to the worktree), for per-test results where there is no CTest. They are removed before the tests run,
 * so a report an earlier build left is never read as this one's, and read after.
 *
 * Only regular files inside the worktree are read, never through a symlink: the test command is the
 * task's code and runs sandboxed, but the reading happens outside the sandbox and the XML is copied into
 * the evidence the Debugger reads, so a link to ~/.ssh must not be followed.
 */
export namespace JUnitFiles {
  /** A report larger than this is not read (it is not a test report). */
  export const MAX_BYTES = 32 * 1024 * 1024
  /** Directories deeper than this are not searched. */
  const MAX_DEPTH = 16

  export interface Report {
    /** Relative to the worktree, `/`-separated. */
    file: string
    xml: string
    /** Undefined when the file is not JUnit XML (no testsuite element). */
    cases: JUnit.TestCase[] | undefined
  }

  /** The files the patterns match now: relative paths, sorted, each once; regular files inside the worktree only. */
  export async function find(worktree: string, patterns: readonly string[]): Promise<string[]> {
    if (patterns.length === 0) return []
    const root = await realpath(worktree)
    const matched = await glob([...patterns], { cwd: root, onlyFiles: true, followSymbolicLinks: false, dot: true, deep: MAX_DEPTH, expandDirectories: false, ignore: ["**/.git/**"] })
    const found: string[] = []
    for (const file of new Set(matched)) if (await isRegularFileInside(root, file)) found.push(file)
    return found.sort()
  }

  /** Removes what the patterns match (before the test commands run). */
  export async function clear(worktree: string, patterns: readonly string[]): Promise<void> {
    for (const file of await find(worktree, patterns)) await rm(path.join(worktree, file), { force: true })
  }

  /** The reports the patterns match, read and parsed. */
  export async function read(worktree: string, patterns: readonly string[]): Promise<Report[]> {
    const out: Report[] = []
    for (const file of await find(worktree, patterns)) {
      const full = path.join(worktree, file)
      const st = await lstat(full).catch(() => undefined)
      if (!st?.isFile() || st.size > MAX_BYTES) continue
      const xml = await readFile(full, "utf8").catch(() => undefined)
      if (xml !== undefined) out.push({ file, xml, cases: JUnit.parse(xml) })
    }
    return out
  }

  /** Per-test results of the reports that are JUnit; undefined when none is. */
  export function results(reports: readonly Report[]): JUnit.Results | undefined {
    const cases = reports.flatMap((r) => r.cases ?? [])
    return reports.some((r) => r.cases) ? JUnit.results(cases) : undefined
  }

  /** The name a report is kept under in the evidence directory (one flat file per report). */
  export function evidenceName(file: string): string {
    return `junit-${file.replace(/[^\w.+-]/g, "_")}`
  }

  async function isRegularFileInside(root: string, rel: string): Promise<boolean> {
    const st = await lstat(path.join(root, rel)).catch(() => undefined)
    return st?.isFile() === true && (await isDirectoryInside(root, path.dirname(rel)))
  }

  /** `rel` is a directory whose real path is inside `root` (no symlinked parent leads out of it). */
  async function isDirectoryInside(root: string, rel: string): Promise<boolean> {
    if (rel === "" || rel === ".") return true
    const real = await realpath(path.join(root, rel)).catch(() => undefined)
    if (!real || (real !== root && !real.startsWith(root + path.sep))) return false
    return (await lstat(real).catch(() => undefined))?.isDirectory() === true
  }
}
