import { readFile } from "node:fs/promises"
import path from "node:path"
import { z } from "zod"
import { Finding } from "./finding.ts"
import { Toolchain } from "../toolchain/index.ts"
import { Results } from "./index.ts"
import { ResultEntry } from "./entry.ts"
import { ResultKey } from "./key.ts"
import { ResultStore } from "./store.ts"
import { ToolVersions } from "./versions.ts"

/**
 * Analysis results keyed by content, as builds and tests are (issue 22): an analyser's pass on a task's
 * changed files is recorded under a key of what can change its verdict, and the same key later reuses it
 * with no analyser started. The key:
 *
 * - the build inputs' key (`ResultKey`: the tree without `.air/` and `notInputs`, the build and test commands,
 *   the tools' versions — cppcheck and clang-tidy among them —, sandbox, network, named environment): the
 *   headers an analysed file includes, the project's `.clang-tidy` and the build's compile_commands.json
 *   all follow from it;
 * - the analysed files and a hash of each one's content (even one `notInputs` would leave out);
 * - the base the findings were judged against (its build inputs' hash): an inherited finding is judged there;
 * - the analyser's own binary and its `--version`, and its rules from toolchain.json (arguments, database,
 *   `failOn`), which live in `.air/` and so are not in the tree's hash.
 *
 * Only passes are recorded (with the findings they recorded, inherited ones marked), so a failure always
 * runs again; a checkout with uncommitted changes, or a caller's own `exec`, neither reuses nor records.
 */
export namespace AnalysisResults {
  export const Body = z
    .object({
      version: z.literal(1),
      kind: z.literal("analysis"),
      key: z.string().regex(/^[0-9a-f]{64}$/),
      /** The commit analysed (any commit with the same key would give the same verdict). */
      commit: z.string().min(1),
      at: z.string(),
      producer: z.object({ by: z.string(), host: z.string(), tools: z.record(z.string(), z.string()) }).strict(),
      /** The analyser (cppcheck, clang-tidy). */
      tool: z.string().min(1),
      files: z.array(z.string()),
      ms: z.number().int().nonnegative(),
      /** The gate's summary of the pass. */
      summary: z.string(),
      /** What the pass recorded: findings that did not fail it (inherited, or below `failOn`). */
      findings: z.array(Finding),
    })
    .strict()
  export type Body = z.infer<typeof Body>
  export const Entry = Body.extend({ checksum: z.string().regex(/^[0-9a-f]{64}$/) }).strict()
  export type Entry = z.infer<typeof Entry>

  export function seal(body: Body): Entry {
    return ResultEntry.sealed(Body.parse(body))
  }

  /** An entry read from a store: its schema, its checksum and the key asked for, as build and test entries. */
  export function open(text: string, key: string): { entry?: Entry; problem?: string } {
    return ResultEntry.openSealed(text, key, Entry, "an analysis entry")
  }

  export interface Spec {
    /** The analyser's name, as in the findings' `tool`. */
    tool: string
    /** The executable the gate runs (its `--version` is in the key). */
    binary: string
    /** How its version is asked when `--version` is not it (`go version`). */
    versionArgs?: readonly string[]
    /** The files it analyses, relative to the worktree. */
    files: readonly string[]
    /** The base commit the findings are judged against (its merge-base), or undefined when there is none. */
    base: string | undefined
    /** Everything else in toolchain.json that changes the verdict (arguments, database, failOn). */
    config: unknown
    /** The gate's log in the evidence: on a hit it says what was reused. */
    log: string
  }

  /**
   * What the reuse reads and writes of a gate's context (a GateContext is one): declared here, so the results
   * store does not import the gates that call it.
   */
  export interface Context {
    readonly root: string
    readonly worktree: string
    readonly rules: Toolchain.Rules
    readonly env: NodeJS.ProcessEnv
    readonly label: string
    /** Absent: the gates run with the caller's own exec, and nothing is reused or recorded. */
    readonly sandboxed?: boolean
    findings: Finding[]
    write(name: string, data: string): Promise<string>
  }

  /** What it reads of the analysis's own outcome (a GateOutcome is one). */
  export interface Ran {
    ran: boolean
    summary: string
    failure?: unknown
  }

  /** The outcome of a reuse: the gate's log says what was reused, nothing ran. */
  export interface Reuse {
    ran: true
    summary: string
    logPath: string
    reused: Results.Reused
  }

  export interface Key {
    key: string
    commit: string
    tools: Record<string, string>
  }

  /** The key of this analysis of the worktree's HEAD; undefined with the reason when there is none. */
  export async function keyOf(ctx: Context, spec: Spec): Promise<{ key?: Key; reason?: string }> {
    if (ctx.sandboxed === undefined) return { reason: "the gates run with the caller's own exec" }
    const made = await Results.keyOf({ root: ctx.root, dir: ctx.worktree, rules: ctx.rules, sandboxed: ctx.sandboxed, env: ctx.env })
    if (!made.key) return made.reason ? { reason: made.reason } : {}
    const notInputs = Toolchain.resultsRules(ctx.rules).notInputs
    const files = [...new Set(spec.files)].sort()
    const contents = await Promise.all(files.map((file) => readFile(path.join(ctx.worktree, file)).then((data) => ResultKey.hash(data.toString("latin1")), () => "absent")))
    const parts = {
      kind: "analysis",
      tool: spec.tool,
      inputs: made.key.key,
      files: files.map((file, i) => [file, contents[i]!]),
      base: spec.base ? await ResultKey.inputsHash(ctx.worktree, spec.base, notInputs).catch(() => `commit ${spec.base}`) : "none",
      binary: spec.binary,
      version: await ToolVersions.of(spec.binary, ctx.env, spec.versionArgs),
      config: spec.config ?? null,
    }
    return { key: { key: ResultKey.hash(ResultKey.canonical(parts)), commit: made.key.commit, tools: made.key.parts.tools } }
  }

  /** "reused: same analysed files, cppcheck and config as <commit> at <time>, key …": the evidence's line. */
  export function describe(tool: string, reuse: Results.Reused): string {
    return (
      `reused: same analysed files, ${tool} and config as ${reuse.commit.slice(0, 12)} at ${reuse.at}, key ${reuse.key.slice(0, 16)}` +
      ` (${reuse.source === "local" ? "" : `from ${reuse.source}; `}saved about ${(reuse.savedMs / 1000).toFixed(1)} s)`
    )
  }

  /**
   * Runs an analysis gate's `run` unless its key has a recorded pass: then nothing runs, the recorded findings
   * join the report, and the gate's log and summary say what was reused. A pass of `run` is recorded.
   * The store never decides a verdict: a key that cannot be made or a store that fails only costs a run.
   */
  export async function reusing<Outcome extends Ran>(ctx: Context, spec: Spec, run: () => Promise<Outcome>): Promise<Outcome | Reuse> {
    const what = `${spec.tool} analysis, ${ctx.label}`
    const made = await keyOf(ctx, spec).catch((error: Error) => ({ reason: error.message }) as { key?: Key; reason?: string })
    const store = made.key ? ResultStore.open(ctx.root, ctx.rules, ctx.env) : undefined
    if (made.key && store) {
      const hit = await store.read(made.key.key, what, open).catch(() => undefined)
      if (hit) {
        const { entry } = hit
        await store.saved(entry.key, what, entry.ms).catch(() => undefined)
        const reused: Results.Reused = { commit: entry.commit, at: entry.at, key: entry.key, savedMs: entry.ms, tests: 0, source: hit.source }
        ctx.findings = [...ctx.findings, ...entry.findings]
        const line = describe(spec.tool, reused)
        const recorded = entry.findings.map((f) => `#   ${f.file}:${f.line}: ${f.severity}: ${f.id}: ${f.message}${f.inherited ? " (inherited)" : ""}`)
        const logPath = await ctx.write(spec.log, `# ${line}\n# no ${spec.tool} ran on ${entry.files.join(", ")}; the recorded pass: ${entry.summary}\n${recorded.join("\n")}${recorded.length ? "\n" : ""}`)
        return { ran: true, summary: `${line}: ${entry.summary}`, logPath, reused }
      }
    }
    const before = ctx.findings.length
    const started = Date.now()
    const outcome = await run()
    if (made.key && store && outcome.ran && !outcome.failure) {
      const body: Body = {
        version: 1,
        kind: "analysis",
        key: made.key.key,
        commit: made.key.commit,
        at: new Date().toISOString(),
        producer: { by: what, host: ResultStore.host(), tools: made.key.tools },
        tool: spec.tool,
        files: [...spec.files],
        ms: Math.max(0, Date.now() - started),
        summary: outcome.summary,
        findings: ctx.findings.slice(before),
      }
      // A full disk or an unreachable remote costs a future re-run, nothing else.
      await store.write(seal(body)).catch(() => undefined)
    }
    return outcome
  }
}
