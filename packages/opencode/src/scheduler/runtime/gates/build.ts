import { readFile, rm } from "node:fs/promises"
import { CompilerCache } from "../toolchain/cache.ts"
import type { Gate, GateContext } from "./gate.ts"
import { Farm } from "../toolchain/farm.ts"
import { buildFarmLog, buildStatsLog, commandEvidenceMissing, runCommands } from "./command.ts"
import { indent, lastLines } from "./text.ts"

export const BUILD_LOG = "build.log"
/** What the farm did for this build (Farm.Seen): the interpreter records `farm.degraded` from it. */
export const FARM_FILE = "farm.json"
/** distcc's warnings and errors of this build (a failed host, a compile run locally instead). */
const FARM_LOG = "farm.log"

/** The toolchain's build commands pass in the worktree; a failure quotes the compiler's first error. */
export const buildGate = {
  id: "build",
  tree: "build",
  reportsNotRun: true,
  provides: "build",
  requiredFor: ["code", "fix", "refactor", "ui", "service", "test", "build", "verify"],
  route: "debugger-unless-baseline-build-failed",
  logs: [BUILD_LOG, CompilerCache.STATS_LOG, CompilerCache.STATS_FILE, FARM_FILE, FARM_LOG],
  async run(ctx: GateContext) {
    const { output: _, ...outcome } = await runCommands(ctx, "build", BUILD_LOG, (command, what, output, logPath) => {
      const first = firstError(output)
      return {
        summary: first ? `build failed: ${first.split("\n")[0]}` : `\`${command}\` ${what}`,
        message:
          `${ctx.label}: build failed: \`${command}\` ${what}.\n` +
          (first ? `First error:\n${indent(first)}\n` : `Last lines:\n${indent(lastLines(output, 15))}\n`) +
          `Full log: ${logPath}\nFix the build, commit on air/${ctx.taskId}, and report again.`,
      }
    })
    // What the farm did: compiles per host, hosts that failed and the compiles distcc ran locally instead.
    const farmRaw = outcome.ran && ctx.rules.farm ? await readFile(buildFarmLog(ctx), "utf8").catch(() => undefined) : undefined
    const farm = farmRaw === undefined ? undefined : Farm.readLog(farmRaw)
    if (ctx.rules.farm) await rm(buildFarmLog(ctx), { force: true })
    if (farm) await ctx.write(FARM_FILE, JSON.stringify(farm, null, 2) + "\n")
    // distcc's own lines about hosts and fallbacks, the evidence a person reads when a host misbehaves.
    if (farmRaw !== undefined) await ctx.write(FARM_LOG, Farm.noteworthy(farmRaw))
    return withCache(ctx, farm ? { ...outcome, summary: `${outcome.summary}; ${Farm.describe(farm)}` } : outcome)
  },
  missingEvidence: (ctx, result) => commandEvidenceMissing(ctx, "build", result),
} as const satisfies Gate

/** The build's compiler-cache hit rate, from its own stats log (builds in other worktrees run meanwhile). */
async function withCache<T extends { ran: boolean; summary: string; failure?: unknown }>(ctx: GateContext, outcome: T): Promise<T> {
  const statsLog = buildStatsLog(ctx)
  const cache = outcome.ran ? await CompilerCache.readStats(statsLog) : undefined
  const raw = cache ? await readFile(statsLog, "utf8").catch(() => "") : ""
  await rm(statsLog, { force: true })
  if (!cache) return outcome
  await ctx.write(CompilerCache.STATS_LOG, raw)
  await ctx.write(CompilerCache.STATS_FILE, JSON.stringify(cache, null, 2) + "\n")
  return outcome.failure ? outcome : { ...outcome, summary: `${outcome.summary}; ${CompilerCache.describe(cache)}` }
}

/** The first compiler, linker or CMake error with the lines that follow it. */
export function firstError(output: string): string | undefined {
  const lines = output.split(/\r?\n/)
  const patterns = [
    /:\d+(:\d+)?:\s*(fatal )?error\b/i,
    /^CMake Error/,
    /\berror\s*(C|LNK)\d+/,
    // The linker's own words, not collect2's "ld returned 1 exit status" that follows them.
    /undefined reference to|multiple definition of|undefined symbol|duplicate symbol/,
    /^\S.*:\s*(fatal )?error:/i,
    /\berror\b/i,
  ]
  for (const pattern of patterns) {
    const index = lines.findIndex((line) => pattern.test(line) && !/^\s*--/.test(line) && !/Werror/.test(line))
    if (index >= 0) return lines.slice(index, index + 4).join("\n").trimEnd()
  }
  return undefined
}
