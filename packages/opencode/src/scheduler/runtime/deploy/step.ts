import { relative } from "node:path"
import { Deploy } from "./deploy"
import { DeployRules } from "./rules"
import type { Ports } from "../ports"

/**
 * The interpreter's `deploy` command: one target, in code, outside any worker's reach. deploy.started
 * names the merged commit before anything reaches the target; the outcome is exactly one event,
 * deploy.passed or deploy.failed (a rules file or git that fails counts as `errored`, never as silence).
 */
export namespace DeployStep {
  /** Builds the merged tree at the project root before its artefacts are staged (shared by the targets of one commit). */
  export type Build = (commit: string) => Promise<{ passed: boolean; summary: string; evidenceDir: string }>

  export async function run(ports: Pick<Ports, "root" | "log" | "git" | "inbox">, cmd: { target: string; n: number; phase?: number }, hooks?: Deploy.Hooks, build?: Build): Promise<void> {
    const { root, log } = ports
    const state = await log.opened()
    const recorded = state.deploy?.targets.find((t) => t.name === cmd.target && t.n === cmd.n)?.commit ?? null
    let commit = recorded ?? ""
    const failed = (message: string) =>
      log.apply({ type: "deploy.failed", target: cmd.target, n: cmd.n, commit: commit || null, cause: "errored", message, evidencePath: "", rolledBack: false, hashMatch: null, service: null, smoke: null })
    try {
      // The integration branch is checked out at the project root (merges move it along): what is there is what is merged.
      if (!commit) commit = (await ports.git(root, ["rev-parse", "HEAD"])).trim()
      if (!recorded) {
        const started = await log.apply({ type: "deploy.started", target: cmd.target, n: cmd.n, commit })
        if (!started.ok) return
      }
      const rules = DeployRules.load(root)
      if (!rules) return void (await failed(`${DeployRules.RULES_PATH} is gone; the run was started with target ${cmd.target}`))
      const target = DeployRules.target(rules, cmd.target)
      // A deploy resumed after a crash built before it left progress: it completes or rolls back, never stops at a build.
      const resumed = Deploy.resuming({ root, target: cmd.target, n: cmd.n, commit, ...(state.runId ? { runId: state.runId } : {}) })
      if (build && !resumed) {
        const b = await build(commit)
        if (!b.passed) {
          await log.apply({ type: "deploy.failed", target: cmd.target, n: cmd.n, commit, cause: "build", message: `${cmd.phase !== undefined ? `phase ${cmd.phase}: ` : ""}${b.summary}`, evidencePath: relative(root, b.evidenceDir), rolledBack: false, hashMatch: null, service: null, smoke: null })
          return
        }
      }
      ports.inbox.push(`DEPLOY ${cmd.target}: ${commit.slice(0, 12)} to ${target.user}@${target.host}:${target.remoteDir}`)
      const o = await Deploy.run({ root, target, n: cmd.n, commit, ...(state.runId ? { runId: state.runId } : {}), ...(hooks ? { hooks } : {}) })
      if (o.status === "passed")
        await log.apply({ type: "deploy.passed", target: cmd.target, n: cmd.n, commit, message: o.message, evidencePath: o.evidencePath, service: o.service })
      else
        await log.apply({ type: "deploy.failed", target: cmd.target, n: cmd.n, commit, cause: o.cause ?? "errored", message: o.message, evidencePath: o.evidencePath, rolledBack: o.rolledBack, hashMatch: o.hashMatch, service: o.service, smoke: o.smoke })
    } catch (err) {
      await failed((err as Error).message)
    }
  }
}
