import { DeployRestart } from "./restart"
import { DeployRules } from "./rules"
import { DeploySsh } from "./ssh"

/**
 * `aircoding doctor` for each deploy target: reachable, authenticated (key accepted, host key known),
 * the remote dir writable, the restart preset's programs and flock (the steps' lock) present. Each failure names its fix.
 */
export namespace DeployDoctor {
  export type Check = { name: string; ok: boolean; detail: string; fix?: string }

  export async function checks(root: string, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
    let rules: DeployRules.Rules | undefined
    try {
      rules = DeployRules.load(root)
    } catch (err) {
      return [{ name: "deploy rules", ok: false, detail: (err as Error).message, fix: `fix ${DeployRules.RULES_PATH} or delete it` }]
    }
    if (!rules || rules.targets.length === 0) return []
    return Promise.all(rules.targets.map((t) => target(root, t, env)))
  }

  export async function target(root: string, t: DeployRules.Target, env: NodeJS.ProcessEnv = process.env): Promise<Check> {
    const name = `deploy ${t.name}`
    const where = `${t.user}@${t.host}:${t.port}`
    const session = DeploySsh.open(root, { ...t, stepTimeoutMs: Math.min(t.stepTimeoutMs, 15_000) }, env, { purpose: "doctor" })
    const steps: DeploySsh.Step[] = []
    const q = DeploySsh.quote
    try {
      const programs = DeployRestart.programs(t.restart)
      const script = [
        `mkdir -p ${q(t.remoteDir)} && test -w ${q(t.remoteDir)} || { echo "AIR:not-writable"; exit 3; }`,
        ...programs.map((p) => `command -v ${q(p)} >/dev/null 2>&1 || { echo "AIR:missing ${p}"; exit 4; }`),
        "command -v sha256sum >/dev/null 2>&1 || { echo \"AIR:missing sha256sum\"; exit 4; }",
        // Every remote step holds the target's lock (DeployLock).
        "command -v flock >/dev/null 2>&1 || { echo \"AIR:missing flock\"; exit 4; }",
        "echo AIR:ok",
      ].join("; ")
      await DeploySsh.connect(session, steps)
      const r = await DeploySsh.run(session, "doctor", script, steps)
      if (r.output.includes("AIR:not-writable"))
        return { name, ok: false, detail: `${where}: ${t.remoteDir} is not writable by ${t.user}`, fix: `on the target: sudo mkdir -p ${t.remoteDir} && sudo chown ${t.user} ${t.remoteDir}` }
      const missing = /AIR:missing (\S+)/.exec(r.output)?.[1]
      if (missing === "flock") return { name, ok: false, detail: `${where}: flock is not installed on the target (each deploy step holds a lock in ${t.remoteDir})`, fix: `install util-linux on the target (it provides flock)` }
      if (missing) return { name, ok: false, detail: `${where}: ${missing} is not installed on the target (the ${t.restart.preset} preset needs it)`, fix: t.restart.preset === "systemd" && missing !== "sha256sum" ? `install systemd on the target, or use the "commands" restart preset in ${DeployRules.RULES_PATH}` : `install coreutils on the target` }
      if (r.code !== 0) return { name, ok: false, detail: `${where}: the check failed (exit ${r.code}): ${r.output.trim().slice(0, 200)}`, fix: `run it by hand: ssh -p ${t.port} ${t.user}@${t.host}` }
      return { name, ok: true, detail: `${where} reachable, key accepted, ${t.remoteDir} writable, restart preset ${t.restart.preset} ready` }
    } catch (err) {
      if (!(err instanceof DeploySsh.ConnectError)) return { name, ok: false, detail: (err as Error).message }
      return { name, ok: false, detail: err.message, fix: fixFor(err.kind, t) }
    } finally {
      await DeploySsh.close(session)
    }
  }

  export function fixFor(cause: DeploySsh.ConnectCause, t: DeployRules.Target): string {
    if (cause === "auth")
      return `authorise the key on the target: ssh-copy-id ${t.identityFile ? `-i ${t.identityFile} ` : ""}-p ${t.port} ${t.user}@${t.host} (or load it into your agent: ssh-add)`
    if (cause === "host-key")
      return `check the target's host key and add it: ssh-keyscan -p ${t.port} ${t.host} >> ${t.knownHostsFile ?? "~/.ssh/known_hosts"} (compare its fingerprint with the machine's own first)`
    return `check that ${t.host} is up and sshd listens on port ${t.port} (ssh -p ${t.port} ${t.user}@${t.host})`
  }
}
