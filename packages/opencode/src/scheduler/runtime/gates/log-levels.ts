import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { GateError } from "../errors.ts"
import { BuildLevels } from "../house/build-levels.ts"
import { LoggingLibraries } from "../house/libraries.ts"
import { LibraryUse } from "../house/library-use.ts"
import { HouseRules } from "../house/rules.ts"
import type { Gate, GateContext } from "./gate.ts"
import { indent, lastLines } from "./text.ts"

const LEVELS_LOG = "log-levels.log"
const BUILD_TYPES = ["Debug", "Release"] as const
/** Configure only (no compile): a minute is generous even on a loaded machine. */
const CONFIGURE_TIMEOUT_MS = 180_000

/**
 * The debug/release switch of the house logging rule, checked once, on the task that integrates the library (its
 * base does not use it, its branch does): a Debug and a Release configure must compile in different active levels,
 * read from the build (compile_commands.json), not from what the task says. Other tasks skip it.
 */
export const logLevelsGate = {
  id: "log-levels",
  tree: "build",
  // Bookkeeping for the views (shown when it fails): it runs on one task of a plan, and skips on every other.
  route: "debugger",
  logs: [LEVELS_LOG],
  async run(ctx: GateContext) {
    let rules: HouseRules.Loaded | undefined
    try {
      rules = HouseRules.load(ctx.root)
    } catch (err) {
      if (err instanceof HouseRules.Invalid) throw new GateError("ToolchainInvalid", err.message, { cause: err })
      throw err
    }
    const rule = rules?.logging
    const define = rule ? LoggingLibraries.TABLE[rule.library].levelDefine : undefined
    if (!rule || !define) return { ran: false, summary: "skipped: the logging rule has no build-time level to check" }
    if (ctx.changed.length === 0) return { ran: false, summary: "skipped: no change" }
    const integrates = !(await LibraryUse.uses(ctx.root, ctx.base, rule)) && (await LibraryUse.uses(ctx.worktree, "HEAD", rule))
    if (!integrates) return { ran: false, summary: `skipped: checked once, on the task that integrates ${rule.library}` }
    const found: Record<string, string[]> = {}
    const log: string[] = []
    for (const type of BUILD_TYPES) {
      const dir = join(".air-build-levels", type.toLowerCase())
      const args = ["-S", ".", "-B", dir, `-DCMAKE_BUILD_TYPE=${type}`, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
      const r = await ctx.exec("cmake", args, { cwd: ctx.worktree, env: ctx.env, shell: false, timeoutMs: CONFIGURE_TIMEOUT_MS, ...(ctx.signal ? { signal: ctx.signal } : {}) })
      log.push(`$ cmake ${args.join(" ")}`, r.output.trimEnd())
      if (r.code !== 0) {
        const logPath = await ctx.write(LEVELS_LOG, log.join("\n") + "\n")
        const summary = `the ${type} configure failed`
        return { ran: true, summary, logPath, failure: { summary, message: `${ctx.label}: \`cmake ${args.join(" ")}\` exited with ${r.code}:\n${indent(lastLines(r.output, 12))}\nFull log: ${logPath}\nFix the configure, commit on air/${ctx.taskId}, and report again.` } }
      }
      found[type] = BuildLevels.values(await readFile(join(ctx.worktree, dir, "compile_commands.json"), "utf8"), define)
      log.push(`${type}: ${define} = ${found[type]!.join(", ")}`)
    }
    const logPath = await ctx.write(LEVELS_LOG, log.join("\n") + "\n")
    const debug = found.Debug!.join(", ")
    const release = found.Release!.join(", ")
    if (debug !== release && !found.Debug!.includes("(unset)") && !found.Release!.includes("(unset)"))
      return { ran: true, summary: `${define}: Debug ${debug}, Release ${release}`, logPath }
    const summary = `${define} does not switch with the build type (Debug: ${debug}; Release: ${release})`
    return {
      ran: true,
      summary,
      logPath,
      failure: {
        summary,
        message:
          `${ctx.label}: the house rules want ${rule.library}'s level switched by build type, but a Debug and a Release configure compile in ${define} = ${debug} and ${release}.\n` +
          `Set it per configuration on every target that logs, e.g. target_compile_definitions(<target> PUBLIC $<IF:$<CONFIG:Debug>,${define}=SPDLOG_LEVEL_DEBUG,${define}=SPDLOG_LEVEL_INFO>), ` +
          `commit on air/${ctx.taskId}, and report again. Full log: ${logPath}`,
      },
    }
  },
} as const satisfies Gate
