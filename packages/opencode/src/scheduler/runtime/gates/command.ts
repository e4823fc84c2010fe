import { mkdir, rm } from "node:fs/promises"
import path from "node:path"
import { Toolchain } from "../toolchain/index.ts"
import { CompilerCache } from "../toolchain/cache.ts"
import { Proc } from "../process.ts"
import { SetupSteps } from "../../../knowledge/setup-steps.ts"
import type { Failure, GateContext, GateOutcome } from "./gate.ts"
import type { GateResult } from "./schema.ts"
import { TOOL_MISSING } from "./schema.ts"
import { formatRun, INSTALL_HINTS, stripPrefix } from "./text.ts"
import { ProgressWriter } from "./progress.ts"

/**
 * Where ccache logs this build's calls: inside the cache dir, the one place outside the worktree a
 * sandboxed build may write (the evidence dir stays out of its reach); build.ts copies it into the evidence.
 */
export function buildStatsLog(ctx: GateContext): string {
  return path.join(path.resolve(ctx.root, ctx.rules.cache.dir), "stats", `${ctx.taskId.replace(/[^\w.+-]/g, "_")}.log`)
}

/** Where distcc logs this build's compiles (beside ccache's stats log); build.ts reads the farm's record from it. */
export function buildFarmLog(ctx: GateContext): string {
  return path.join(path.resolve(ctx.root, ctx.rules.cache.dir), "stats", `${ctx.taskId.replace(/[^\w.+-]/g, "_")}.distcc.log`)
}

/**
 * What the build and test gates share: run the toolchain's shell commands in order in the worktree, log
 * each, stop at the first that fails; `explain` turns a failed command's output into the gate's message.
 */
export async function runCommands(
  ctx: GateContext,
  which: "build" | "test",
  log: string,
  explain: (command: string, what: string, output: string, logPath: string) => Failure,
): Promise<GateOutcome & { output?: string }> {
  const commands = ctx.rules[which]
  if (commands.length === 0) return { ran: false, summary: `no ${which} command configured (${ctx.toolchainNote})` }
  let text = ""
  let logPath = path.join(ctx.evidenceDir, log)
  let outputs = ""
  // The compiler cache every worktree shares; the build's own stats log gives its hit rate (see build.ts).
  const statsLog = which === "build" ? buildStatsLog(ctx) : undefined
  if (statsLog) {
    await mkdir(path.dirname(statsLog), { recursive: true })
    await rm(statsLog, { force: true })
  }
  const farmLog = which === "build" && ctx.rules.farm ? buildFarmLog(ctx) : undefined
  if (farmLog) await rm(farmLog, { force: true })
  const env = await Toolchain.commandEnv(ctx.rules, { root: ctx.root, worktree: ctx.worktree, ...(statsLog ? { statsLog } : {}), ...(farmLog ? { farmLog } : {}) }, ctx.env)
  for (const command of commands) {
    // The views see a long build or test move (steps done, elapsed time) through a small file, not the log.
    const progress = new ProgressWriter(ctx.root, ctx.taskId, which, command)
    const result = await ctx
      .exec(command, [], {
        cwd: ctx.worktree,
        env,
        shell: true,
        timeoutMs: ctx.rules.timeoutMs,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        onOutput: progress.onOutput,
      })
      .finally(() => progress.end())
    text += formatRun(command, ctx.worktree, result)
    logPath = await ctx.write(log, text)
    outputs += result.output
    if (result.ok) continue
    const output = stripPrefix(result.output, ctx.worktree)
    const tool = command.trim().split(/\s+/)[0] ?? command
    if (result.code === 127 && /not found|not recognized/i.test(output)) {
      const hint = INSTALL_HINTS[path.basename(tool)]
      const failure: Failure = {
        gate: TOOL_MISSING,
        missingTool: tool,
        summary: `${tool} is not installed`,
        message:
          `${ctx.label}: the ${which} command \`${command}\` could not start: ${tool} is not installed or not on PATH. ` +
          `Install it${hint ? `: ${hint}` : ""}, or change the ${which} commands in ${Toolchain.RULES_PATH}. Log: ${logPath}\n${SetupSteps.offer(path.basename(tool))}`,
      }
      return { ran: true, summary: failure.summary, logPath, failure }
    }
    const failure = explain(command, Proc.describe(result, ctx.rules.timeoutMs), output, logPath)
    return { ran: true, summary: failure.summary, logPath, failure }
  }
  return { ran: true, summary: `${commands.length} command(s) passed`, logPath, output: outputs }
}

/** The evidence rule of a command gate: it ran, and passed. */
export function commandEvidenceMissing(ctx: GateContext, which: "build" | "test", result: GateResult | undefined): string | undefined {
  if (result?.passed && !result.ran && ctx.rules[which].length > 0) return result.summary
  if (!result?.ran) return `no ${which} command configured (${ctx.toolchainNote})`
  if (!result.passed) return "did not pass"
  return undefined
}
