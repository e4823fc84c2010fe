import { z } from "zod"

/** The deploy's vocabulary: its causes, its settings and its state per target (the rules are in deploy.ts). */

/** Why a deploy failed. The first three are the connection's (the user fixes them); the rest the build's. */
export const DEPLOY_CAUSES = ["unreachable", "auth", "host-key", "build", "transfer", "hash", "restart", "smoke", "errored"] as const
export type DeployCause = (typeof DEPLOY_CAUSES)[number]
export const DEPLOY_ASK_CAUSES: readonly DeployCause[] = ["unreachable", "auth", "host-key"]

export const DEPLOY_TARGET_STATUSES = ["running", "passed", "failed", "asked"] as const

/** The run's deploy settings, fixed at its start from `.air/shared/rules/deploy.json`. */
export const DeployConfig = z.object({ targets: z.array(z.string().min(1)), everyRun: z.boolean() })
export type DeployConfig = z.infer<typeof DeployConfig>

export const DeployTarget = z.object({
  name: z.string(),
  /** Deploys of this target so far in the run; the evidence of the current one is under _deploy/<name>/<n>. */
  n: z.number().int(),
  status: z.enum(DEPLOY_TARGET_STATUSES),
  commandId: z.string(),
  /** The merged commit this deploy carries (deploy.started). */
  commit: z.string().nullable(),
  cause: z.enum(DEPLOY_CAUSES).nullable(),
  message: z.string(),
  evidencePath: z.string().nullable(),
  hashMatch: z.boolean().nullable(),
  service: z.string().nullable(),
  smoke: z.enum(["passed", "failed", "not-run"]).nullable(),
  rolledBack: z.boolean(),
})
export type DeployTarget = z.infer<typeof DeployTarget>

/** `phase`: the deploy of a phase the plan marks deployable (absent: the run's own deploy after its final check). */
export const DeployState = z.object({ targets: z.array(DeployTarget), phase: z.number().int().optional() })
export type DeployState = z.infer<typeof DeployState>
