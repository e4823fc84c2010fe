import { createHash } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { existsSync } from "node:fs"
import path from "node:path"
import { z } from "zod"
import { writeFileAtomic } from "../store/atomic.ts"
import { git, gitTry } from "../git/git.ts"
import { Worktrees } from "../git/worktree.ts"
import { Fingerprint } from "./fingerprint.ts"
import type { GateContext } from "./gate.ts"
import { Finding } from "./schema.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * Findings judged against the task's base: the same analyser on the same files at the commit the task
 * branched from (its merge-base with the integration branch), so a finding already there is recorded as
 * inherited and only what the task introduced can fail a gate.
 *
 * The base files live in one detached worktree per project (`.air/local/base-tree`), moved to the commit
 * needed; base results are cached per commit, tool and file under
 * `.air/local/evidence/_baseline/<commit>/analysis/`, so each base file is analysed once per commit.
 */
export namespace BaseFindings {
  export const TREE_DIR = AirPaths.BASE_TREE

  /** Runs the analyser in `dir` (the base tree) on `files`: its findings and log; undefined when it could not run. */
  export type Analyse = (dir: string, files: string[]) => Promise<{ findings: Finding[]; log: string } | undefined>

  export interface Judged {
    /** The task's findings, `inherited` set on those the base already had. */
    findings: Finding[]
    /** The base commit compared with, or undefined when there was none to compare (then nothing is inherited). */
    commit?: string
    /** Why the base could not be compared, for the evidence. */
    note?: string
  }

  const CacheFile = z.object({ tool: z.string(), file: z.string(), config: z.string(), findings: z.array(Finding) }).strict()

  /**
   * Marks the task's `findings` (from `tool`, over `files`) inherited where the base commit has the same
   * finding (Fingerprint). `config` names what else changes the tool's verdict (its arguments), for the cache.
   */
  export async function judge(
    ctx: GateContext,
    tool: string,
    config: string,
    files: readonly string[],
    findings: readonly Finding[],
    analyse: Analyse,
  ): Promise<Judged> {
    const own = findings.map((f) => ({ ...f, tool }))
    if (own.length === 0) return { findings: own }
    const commit = await baseCommit(ctx)
    if (!commit) return { findings: own, note: `no merge-base with ${ctx.base}: every finding counts as new` }
    // A file the task renamed is compared with the file it was at the base (git's rename detection).
    const renamed = await renamesSince(ctx.worktree, commit)
    const baseOf = (file: string) => renamed.get(file) ?? file
    // Only files the base has can hold an inherited finding (an added file's findings are all new).
    const existing = (await Promise.all(files.map(async (f) => ((await inCommit(ctx.root, commit, baseOf(f))) ? f : undefined)))).filter(
      (f): f is string => f !== undefined,
    )
    const flagged = existing.filter((f) => own.some((finding) => finding.file === f))
    if (flagged.length === 0) return { findings: own, commit }
    const taskPathOf = new Map(flagged.map((f) => [baseOf(f), f]))
    const basePaths = [...taskPathOf.keys()]

    let base: Finding[] | undefined
    try {
      base = await baseFindingsOf(ctx, commit, tool, config, basePaths, analyse)
    } catch (error) {
      // No comparison is no excuse: the task is judged on all its findings, and the evidence says why.
      return { findings: own, commit, note: `the base ${commit.slice(0, 12)} could not be analysed (${(error as Error).message.split("\n")[0]}): every finding counts as new` }
    }
    if (!base) return { findings: own, commit, note: `${tool} could not analyse the base ${commit.slice(0, 12)}: every finding counts as new` }

    const taskLines = await worktreeLines(ctx.worktree, own.map((f) => f.file))
    const baseLines = await commitLines(ctx.root, commit, basePaths)
    const keys = (list: readonly Finding[], lines: Map<string, string[]>, pathOf: (file: string) => string) =>
      list.map((f) => Fingerprint.keysOf({ ...f, tool, file: pathOf(f.file) }, lines.get(f.file) ?? []))
    const verdict = Fingerprint.inherited(
      keys(own, taskLines, (file) => file),
      keys(base, baseLines, (file) => taskPathOf.get(file) ?? file),
    )
    return { findings: own.map((f, i) => (verdict[i] ? { ...f, inherited: true } : f)), commit }
  }

  /** The commit the task branched from: the merge-base of its branch's head and the integration branch. */
  export async function baseCommit(ctx: Pick<GateContext, "worktree" | "base">): Promise<string | undefined> {
    const result = await gitTry(ctx.worktree, ["merge-base", ctx.base, "HEAD"])
    return result.code === 0 ? result.stdout.trim() || undefined : undefined
  }

  /** Files renamed between `commit` and the worktree's HEAD: new path → path at `commit`. */
  async function renamesSince(worktree: string, commit: string): Promise<Map<string, string>> {
    const renamed = new Map<string, string>()
    const out = await gitTry(worktree, ["diff", "--name-status", "-M", "-z", "--diff-filter=R", commit, "HEAD"])
    if (out.code !== 0) return renamed
    const fields = out.stdout.split("\0")
    // Each rename is three fields: R<score>, the old path, the new path.
    for (let i = 0; i + 2 < fields.length; i += 3) if (fields[i]!.startsWith("R")) renamed.set(fields[i + 2]!, fields[i + 1]!)
    return renamed
  }

  async function inCommit(root: string, commit: string, file: string): Promise<boolean> {
    return (await gitTry(root, ["cat-file", "-e", `${commit}:${file}`])).code === 0
  }

  /** Base findings per file: from the cache, else one run of the analyser on the files not cached yet. */
  async function baseFindingsOf(
    ctx: GateContext,
    commit: string,
    tool: string,
    config: string,
    files: readonly string[],
    analyse: Analyse,
  ): Promise<Finding[] | undefined> {
    const dir = AirPaths.evidence(ctx.root, "_baseline", commit, "analysis")
    const cacheFile = (file: string) => path.join(dir, `${tool}-${hash(`${file}\u0000${config}`)}.json`)
    const found: Finding[] = []
    const missing: string[] = []
    for (const file of files) {
      const cached = await readCache(cacheFile(file), tool, file, config)
      if (cached) found.push(...cached)
      else missing.push(file)
    }
    if (missing.length === 0) return found
    const fresh = await withTree(ctx.root, commit, (tree) => analyse(tree, missing))
    if (!fresh) return undefined
    await mkdir(dir, { recursive: true })
    // The base run's log is evidence too: what the inherited findings were judged against.
    await writeFile(path.join(dir, `${tool}-${hash(missing.join("\u0000") + config)}.log`), fresh.log)
    for (const file of missing) {
      const findings = fresh.findings.filter((f) => f.file === file)
      await writeFileAtomic(cacheFile(file), JSON.stringify({ tool, file, config, findings }, null, 2) + "\n", { backup: false })
      found.push(...findings)
    }
    return found
  }

  async function readCache(file: string, tool: string, source: string, config: string): Promise<Finding[] | undefined> {
    try {
      const parsed = CacheFile.safeParse(JSON.parse(await readFile(file, "utf8")))
      if (!parsed.success) return undefined
      const c = parsed.data
      return c.tool === tool && c.file === source && c.config === config ? c.findings : undefined
    } catch {
      return undefined
    }
  }

  function hash(text: string): string {
    return createHash("sha256").update(text).digest("hex").slice(0, 20)
  }

  async function worktreeLines(worktree: string, files: readonly string[]): Promise<Map<string, string[]>> {
    return linesOf(files, (file) => readFile(path.join(worktree, file), "utf8"))
  }

  /** The base lines of each file, read from git (the shared tree may have moved to another commit since). */
  async function commitLines(root: string, commit: string, files: readonly string[]): Promise<Map<string, string[]>> {
    return linesOf(files, (file) => git(root, ["show", `${commit}:${file}`]))
  }

  async function linesOf(files: readonly string[], read: (file: string) => Promise<string>): Promise<Map<string, string[]>> {
    const lines = new Map<string, string[]>()
    for (const file of new Set(files)) lines.set(file, await read(file).then((text) => text.split(/\r?\n/), () => []))
    return lines
  }

  /** One base analysis at a time per project: they share the tree and move it between commits. */
  const queues = new Map<string, Promise<unknown>>()

  /** Runs `work` with the base tree checked out at `commit` (created on first use, then moved). */
  export async function withTree<T>(root: string, commit: string, work: (tree: string) => Promise<T>): Promise<T> {
    const key = path.resolve(root)
    const previous = queues.get(key) ?? Promise.resolve()
    const run = previous.catch(() => undefined).then(async () => work(await checkout(root, commit)))
    queues.set(
      key,
      run.catch(() => undefined),
    )
    return run
  }

  /** Removes the base tree (the end of a run): after any analysis still using it. */
  export async function dropTree(root: string): Promise<void> {
    const key = path.resolve(root)
    await (queues.get(key) ?? Promise.resolve())
    await Worktrees.dropDetached(root, path.join(root, TREE_DIR))
  }

  async function checkout(root: string, commit: string): Promise<string> {
    const tree = path.join(root, TREE_DIR)
    const head = existsSync(tree) ? await gitTry(tree, ["rev-parse", "HEAD"]) : undefined
    if (head?.code === 0 && (await gitTry(tree, ["rev-parse", "--show-toplevel"])).stdout.trim() === path.resolve(tree)) {
      if (head.stdout.trim() !== commit) await git(tree, ["checkout", "--quiet", "--force", "--detach", commit])
    } else {
      await Worktrees.dropDetached(root, tree)
      await Worktrees.ensureExcluded(root)
      await mkdir(path.dirname(tree), { recursive: true })
      await git(root, ["worktree", "add", "--quiet", "--detach", tree, commit])
    }
    // Headers from submodules, offline from the user's checkout (as task worktrees get them).
    await Worktrees.checkoutSubmodules(root, tree).catch(() => [])
    return tree
  }

  /**
   * The task's compile_commands.json made to describe the base tree: the worktree's paths rewritten to the
   * tree's, keeping only the units the base has. Written beside the tree, per task (tasks share the tree).
   * Returns the new database's path, or undefined when the task has none.
   */
  export async function databaseFor(tree: string, worktree: string, database: string | undefined, taskId: string): Promise<string | undefined> {
    if (!database) return undefined
    let text: string
    try {
      text = await readFile(path.resolve(worktree, database), "utf8")
    } catch {
      return undefined
    }
    const rewritten = text.split(path.resolve(worktree)).join(path.resolve(tree))
    let entries: unknown
    try {
      entries = JSON.parse(rewritten)
    } catch {
      return undefined
    }
    if (!Array.isArray(entries)) return undefined
    const kept = entries.filter((e) => {
      const item = e as { directory?: unknown; file?: unknown }
      return typeof item?.file === "string" && existsSync(path.resolve(typeof item.directory === "string" ? item.directory : tree, item.file))
    })
    // Tools change into each entry's directory (clang-tidy aborts when it is missing): the build dirs inside the tree.
    const inside = path.resolve(tree) + path.sep
    for (const e of kept) {
      const dir = (e as { directory?: unknown }).directory
      if (typeof dir === "string" && dir.startsWith(inside)) await mkdir(dir, { recursive: true })
    }
    const out = path.join(path.dirname(tree), "base-databases", taskId, "compile_commands.json")
    await mkdir(path.dirname(out), { recursive: true })
    await writeFile(out, JSON.stringify(kept, null, 2))
    return out
  }
}
