import { Worktrees } from "../git/worktree.ts"
import { SecretScan } from "./secret-scan.ts"
import type { Gate, GateContext } from "./gate.ts"

const SECRETS_LOG = "secrets.log"

/**
 * No credential lands: the lines the task added are scanned with secretlint's recommended rules before the
 * change can go to review and merge. Lines that were already on the integration branch are not the task's
 * doing; `.air/shared/rules/secrets-allow.txt` marks fixtures that only look like secrets. A finding goes
 * back to the worker, who removes the secret from the branch (not just from the last commit's tree: the
 * squash merge takes the branch's final tree, so a fix-up commit is enough).
 */
export const secretsGate = {
  id: "secrets",
  route: "executor",
  logs: [SECRETS_LOG],
  async run(ctx: GateContext) {
    if (ctx.changed.length === 0) return { ran: false, summary: "skipped: no change to scan" }
    const patch = await Worktrees.diff(ctx.root, ctx.taskId, ctx.base)
    const findings = await SecretScan.scanPatch(ctx.worktree, patch, await SecretScan.loadAllow(ctx.root))
    const text = findings.length === 0 ? "no secret in the lines the task added\n" : `${SecretScan.describe(findings)}\n`
    const logPath = await ctx.write(SECRETS_LOG, text)
    if (findings.length === 0) return { ran: true, summary: "no secret found", logPath }
    const summary = `${findings.length} secret(s) in the change`
    return {
      ran: true,
      summary,
      logPath,
      failure: {
        summary,
        message:
          `${ctx.label}: the change adds what looks like a credential:\n${SecretScan.describe(findings.slice(0, 10))}\n` +
          `Remove it from the code on air/${ctx.taskId} (read it from the environment or a config file that is not ` +
          `committed), commit, and report again. If it is a harmless test value, a person can allow it in ` +
          `${SecretScan.ALLOW_PATH}.`,
      },
    }
  },
} as const satisfies Gate
