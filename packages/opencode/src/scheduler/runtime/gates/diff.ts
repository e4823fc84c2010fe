import { Worktrees } from "../git/worktree.ts"
import type { Gate, GateContext } from "./gate.ts"
import { listSome } from "./text.ts"

const DIFF_LOG = "diff.patch"

/**
 * The task's diff against the integration branch is not empty, and is kept as evidence. The changed files
 * are read here for every task whose branch exists (the analysis needs them even when no diff is required).
 */
export const diffGate = {
  id: "diff",
  provides: "diff",
  requiredFor: ["code", "fix", "refactor", "ui", "service", "test", "build", "docs"],
  route: "executor",
  logs: [DIFF_LOG],
  async run(ctx: GateContext) {
    const required = ctx.requires.includes("diff")
    if (required || (await Worktrees.branchExists(ctx.root, ctx.taskId))) {
      ctx.changed = await Worktrees.changes(ctx.root, ctx.taskId, ctx.base)
    }
    if (!required) return { ran: false, summary: `skipped: not required for a ${ctx.kind} task` }
    const patch = await Worktrees.diff(ctx.root, ctx.taskId, ctx.base)
    const logPath = await ctx.write(DIFF_LOG, patch)
    if (ctx.changed.length === 0 || patch.trim() === "") {
      const summary = "the diff against the integration branch is empty"
      return {
        ran: true,
        summary,
        logPath,
        failure: {
          summary,
          message:
            `${ctx.label}: air/${ctx.taskId} has commits but no change against ${ctx.base}: the diff is empty. ` +
            `A task is done only when its diff shows the work. Make the change in ${ctx.worktree}, commit it on ` +
            `air/${ctx.taskId}, and report again.`,
        },
      }
    }
    const files = ctx.changed.map((c) => c.path)
    return { ran: true, summary: `${files.length} file(s) changed: ${listSome(files, 8)}`, logPath }
  },
  missingEvidence(ctx, result) {
    return !result?.passed || ctx.changed.length === 0 ? "the task has no diff" : undefined
  },
} as const satisfies Gate
