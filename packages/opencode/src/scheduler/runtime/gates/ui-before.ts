import { createHash } from "node:crypto"
import { copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { existsSync } from "node:fs"
import path from "node:path"
import { z } from "zod"
import { BudgetExec } from "../jobs/exec.ts"
import { RunJobs } from "../jobs/run-jobs.ts"
import { Proc } from "../process.ts"
import { SandboxExec } from "../sandbox/exec.ts"
import { CompilerCache } from "../toolchain/cache.ts"
import { Toolchain } from "../toolchain/index.ts"
import { UiCapture } from "../verify/ui-capture.ts"
import { BaseFindings } from "./base-findings.ts"
import type { Exec, GateContext } from "./gate.ts"
import { formatRun } from "./text.ts"
import { AirPaths } from "../../core/air-paths"

/**
 * The before picture of a ui task (issue 37, item 2): the same spec captured on a build of the commit the task
 * branched from, beside the task's own capture, and the share of pixels that changed between the two.
 *
 * The base is built in the project's one detached base tree (BaseFindings.withTree, shared with the analysers'
 * base runs and moved between commits): its build directory stays there, so moving to the next base is an
 * incremental build, and the compiler cache (CCACHE_BASEDIR is the project root) serves what the task worktrees
 * already compiled. A capture is kept per base commit and spec under `_baseline/<commit>/ui/`, so a task's second
 * attempt, or a second ui task on the same base, does not build or capture the base again.
 *
 * The before picture is context, never a verdict: a base that does not build or shows no window is recorded as
 * "no before picture: <why>", and the task is judged on its own capture only.
 */
export namespace UiBefore {
  export const DIR = "before"
  export const COMPARE_FILE = "compare.json"

  export const Comparison = z
    .object({
      /** The commit the before picture is of (the task's merge-base with the integration branch). */
      base: z.string().optional(),
      before: z.string().optional(),
      after: z.string().optional(),
      /** Share of the pixels that differ between before and after (0–1); absent without both pictures. */
      changedShare: z.number().min(0).max(1).optional(),
      /** Why there is no before picture (or no comparison). */
      note: z.string().optional(),
      /** The base build's compiler-cache hits ("ccache 3/3 hits (100%)"), when it was built for this capture. */
      baseBuild: z.string().optional(),
    })
    .strict()
  export type Comparison = z.infer<typeof Comparison>

  /** What a base capture left, kept per commit and spec: a screenshot, or why there is none. */
  const Kept = z.object({ screenshot: z.boolean(), note: z.string().optional(), cache: z.string().optional() }).strict()

  /**
   * Captures the base (or reuses its kept capture), copies its files to `<outDir>/before/`, compares it with
   * `after` (the task's screenshot, when it has one) and writes `<outDir>/compare.json`. Never throws for the
   * base's faults; an abort propagates as the gate's own check after it does.
   */
  export async function compare(ctx: GateContext, spec: UiCapture.Spec, after: string | undefined, outDir: string): Promise<Comparison> {
    const result = await before(ctx, spec, path.join(outDir, DIR))
    const comparison: Comparison = { ...result }
    if (after) comparison.after = after
    if (result.before && after) comparison.changedShare = UiCapture.compare(result.before, after).changedShare
    else if (result.before && !comparison.note) comparison.note = "no after picture to compare with"
    await writeFile(path.join(outDir, COMPARE_FILE), JSON.stringify(comparison, null, 2) + "\n")
    return comparison
  }

  /** The comparison in a few words, for the gate's summary and message. */
  export function describe(c: Comparison): string {
    if (c.note && !c.before) return c.note
    const base = c.base ? ` of the base ${c.base.slice(0, 12)}` : ""
    const built = c.baseBuild ? `; the base's build: ${c.baseBuild}` : ""
    return (c.changedShare === undefined ? `before picture${base}: ${c.before}` : `before picture${base}: ${(c.changedShare * 100).toFixed(1)}% of the pixels changed`) + built
  }

  async function before(ctx: GateContext, spec: UiCapture.Spec, dir: string): Promise<Pick<Comparison, "base" | "before" | "note" | "baseBuild">> {
    await rm(dir, { recursive: true, force: true })
    const commit = await BaseFindings.baseCommit(ctx)
    if (!commit) return { note: `no before picture: the task has no merge-base with ${ctx.base}` }
    const kept = AirPaths.evidence(ctx.root, "_baseline", commit, "ui", hash(JSON.stringify(spec)))
    let done = await readKept(kept)
    if (!done) {
      done = await BaseFindings.withTree(ctx.root, commit, (tree) => buildAndCapture(ctx, spec, tree, kept))
      // Kept only when it says something about the base itself (not an abort, a missing tool, a display that failed).
      if (done.keep) await writeFile(path.join(kept, "kept.json"), JSON.stringify({ screenshot: done.screenshot, ...(done.note ? { note: done.note } : {}), ...(done.cache ? { cache: done.cache } : {}) }) + "\n")
    }
    await mkdir(dir, { recursive: true })
    for (const name of ["screenshot.png", "screen.png", "windows.json", "program.log", "build.log"])
      if (existsSync(path.join(kept, name))) await copyFile(path.join(kept, name), path.join(dir, name))
    const screenshot = path.join(dir, "screenshot.png")
    const cache = done.cache ? { baseBuild: done.cache } : {}
    if (done.screenshot && existsSync(screenshot)) return { base: commit, before: screenshot, ...cache }
    return { base: commit, note: `no before picture: ${done.note ?? "the base's capture has no screenshot"}`, ...cache }
  }

  type Done = { screenshot: boolean; note?: string; cache?: string; keep: boolean }

  async function readKept(dir: string): Promise<Done | undefined> {
    try {
      const parsed = Kept.safeParse(JSON.parse(await readFile(path.join(dir, "kept.json"), "utf8")))
      return parsed.success ? { ...parsed.data, keep: false } : undefined
    } catch {
      return undefined
    }
  }

  /** The base built in its tree, then the spec captured there (its checks recorded, not judged). */
  async function buildAndCapture(ctx: GateContext, spec: UiCapture.Spec, tree: string, kept: string): Promise<Done> {
    await rm(kept, { recursive: true, force: true })
    await mkdir(kept, { recursive: true })
    const exec = baseExec(ctx, tree)
    // ccache's log of this build, in the cache dir (the one place outside the tree a sandboxed build may write).
    const statsLog = path.join(path.resolve(ctx.root, ctx.rules.cache.dir), "stats", `${ctx.taskId.replace(/[^\w.+-]/g, "_")}-base.log`)
    await mkdir(path.dirname(statsLog), { recursive: true })
    await rm(statsLog, { force: true })
    const env = await Toolchain.commandEnv(ctx.rules, { root: ctx.root, worktree: tree, statsLog }, ctx.env)
    const built = await build(ctx, exec, env, tree, kept)
    const stats = await CompilerCache.readStats(statsLog)
    await rm(statsLog, { force: true })
    const cache = stats ? { cache: CompilerCache.describe(stats) } : {}
    if (built) return { ...built, ...cache }
    const result = await UiCapture.capture(spec, { worktree: tree, outDir: kept, project: ctx.root, env: ctx.env, ...(ctx.signal ? { signal: ctx.signal } : {}) })
    if (result.evidence.screenshot) return { screenshot: true, keep: true, ...cache }
    const why = result.failures[0] ?? `the capture ended ${result.outcome}`
    return { screenshot: false, note: `the base shows no window: ${why}`, keep: result.outcome === "no-window" || result.outcome === "exited" || result.outcome === "shown", ...cache }
  }

  /** The toolchain's build commands in the base tree: undefined when they passed, else why there is no picture. */
  async function build(ctx: GateContext, exec: Exec, env: NodeJS.ProcessEnv, tree: string, kept: string): Promise<Done | undefined> {
    let log = ""
    for (const command of ctx.rules.build) {
      const result = await exec(command, [], { cwd: tree, env, shell: true, timeoutMs: ctx.rules.timeoutMs, ...(ctx.signal ? { signal: ctx.signal } : {}) })
      log += formatRun(command, tree, result)
      await writeFile(path.join(kept, "build.log"), log)
      if (ctx.signal?.aborted) return { screenshot: false, note: "the run was aborted", keep: false }
      if (!result.ok) return { screenshot: false, note: `the base does not build (\`${command}\` ${Proc.describe(result, ctx.rules.timeoutMs)}; see before/build.log)`, keep: true }
    }
    return undefined
  }

  /**
   * The base's build runs as the task's does: in the OS sandbox when the gates use it (the base tree writable in
   * place of the worktree), inside the run's job budget. A caller's own runner (tests) is used as it is.
   */
  function baseExec(ctx: GateContext, tree: string): Exec {
    if (ctx.sandboxed === undefined) return ctx.exec
    const plain: Exec = (command, args, options) => Proc.run(command, args, options)
    const inner = ctx.sandboxed ? SandboxExec.wrap(plain, { root: ctx.root, worktree: tree, network: ctx.rules.network }) : plain
    return BudgetExec.wrap(inner, RunJobs.of(ctx.root), `${ctx.label} (its base)`)
  }

  function hash(text: string): string {
    return createHash("sha256").update(text).digest("hex").slice(0, 20)
  }
}
