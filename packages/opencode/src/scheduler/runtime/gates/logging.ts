import { GateError } from "../errors.ts"
import { Worktrees } from "../git/worktree.ts"
import { ForbiddenCalls } from "../house/forbidden-calls.ts"
import { HouseRules } from "../house/rules.ts"
import type { Gate, GateContext } from "./gate.ts"

const LOGGING_LOG = "logging.log"

/**
 * The house logging rule in code: the lines a task added (judged against its base, so inherited output is not its
 * doing) must not write through a channel the rules forbid (std::cout, printf, … as the project's library's rule
 * says). Tests and the rules' exempt paths are skipped. It goes back to the worker with file:line, the call and
 * the project's own logging calls to use instead.
 */
export const loggingGate = {
  id: "logging",
  route: "executor",
  logs: [LOGGING_LOG],
  async run(ctx: GateContext) {
    let rules: HouseRules.Loaded | undefined
    try {
      rules = HouseRules.load(ctx.root)
    } catch (err) {
      if (err instanceof HouseRules.Invalid) throw new GateError("ToolchainInvalid", err.message, { cause: err })
      throw err
    }
    const rule = rules?.logging
    if (!rule) return { ran: false, summary: `skipped: no logging rule in ${HouseRules.RULES_PATH}` }
    if (ctx.changed.length === 0) return { ran: false, summary: "skipped: no change to check" }
    const patch = await Worktrees.diff(ctx.root, ctx.taskId, ctx.base)
    const findings = ForbiddenCalls.scan(patch, rule)
    const logPath = await ctx.write(
      LOGGING_LOG,
      (findings.length === 0 ? `no forbidden output channel in the lines the task added (${rule.library} rule)\n` : `${ForbiddenCalls.describe(findings)}\n`) +
        rules!.warnings.map((w) => `warning: ${w}\n`).join(""),
    )
    if (findings.length === 0) return { ran: true, summary: `no ${rule.forbidden.map((c) => c.call).join("/")} added`, logPath }
    const summary = `${findings.length} line(s) write through a forbidden channel`
    const use = rule.calls.length > 0 ? `${rule.calls.join(", ")}${rule.include ? ` (#include ${rule.include})` : ""}` : `the project's ${rule.library} logging`
    return {
      ran: true,
      summary,
      logPath,
      failure: {
        summary,
        message:
          `${ctx.label}: the house rules (${HouseRules.RULES_PATH}) say new code logs through ${rule.library}, but the change adds:\n` +
          `${ForbiddenCalls.describe(findings.slice(0, 10))}${findings.length > 10 ? `\n… and ${findings.length - 10} more (${LOGGING_LOG})` : ""}\n` +
          `Replace each with ${use} on air/${ctx.taskId}, commit, and report again. If a line is the program's real output ` +
          `(a command-line tool's result), a person can exempt its path in logging.exempt.`,
      },
    }
  },
} as const satisfies Gate
