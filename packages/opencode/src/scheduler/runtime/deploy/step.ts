import { Deploy } from "./deploy"
import { DeployRules } from "./rules"
import type { Ports } from "../ports"

/**
 * The interpreter's `deploy` command: one target, in code, outside any worker's reach. deploy.started
 * names the merged commit before anything reaches the target; the outcome is exactly one event,
 * deploy.passed or deploy.failed (a rules file or git that fails counts as `errored`, never as silence).
 */
export namespace DeployStep {
  export async function run(ports: Pick<Ports, "root" | "log" | "git" | "inbox">, cmd: { target: string; n: number }, hooks?: Deploy.Hooks): Promise<void> {
    const { root, log } = ports
    const state = await log.opened()
    const recorded = state.deploy?.targets.find((t) => t.name === cmd.target && t.n === cmd.n)?.commit ?? null
    let commit = recorded ?? ""
    const failed = (message: string) =>
      log.apply({ type: "deploy.failed", target: cmd.target, n: cmd.n, commit: commit || null, cause: "errored", message, evidencePath: "", rolledBack: false, hashMatch: null, service: null, smoke: null })
    try {
      // The final check built the integration branch at the project root: what is there is what is merged.
      if (!commit) commit = (await ports.git(root, ["rev-parse", "HEAD"])).trim()
      if (!recorded) {
        const started = await log.apply({ type: "deploy.started", target: cmd.target, n: cmd.n, commit })
        if (!started.ok) return
      }
      const rules = DeployRules.load(root)
      if (!rules) return void (await failed(`${DeployRules.RULES_PATH} is gone; the run was started with target ${cmd.target}`))
      const target = DeployRules.target(rules, cmd.target)
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
