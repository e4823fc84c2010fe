import type { DeployRules } from "./rules"
import { DeploySsh } from "./ssh"

/**
 * The commands that restart a target's service, by preset. systemd: daemon-reload, restart, is-active,
 * journalctl; plain commands: the target's own stop, start, status and logs. All run in the live release
 * (`<remoteDir>/current`), so a start script can name its files relatively.
 */
export namespace DeployRestart {
  export type Commands = { reload?: string; restart: string; status: string; journal?: string }

  export function commands(restart: DeployRules.Target["restart"]): Commands {
    if (restart.preset === "systemd") {
      const systemctl = `${restart.sudo ? "sudo -n " : ""}systemctl`
      const unit = DeploySsh.quote(restart.unit)
      return {
        reload: `${systemctl} daemon-reload`,
        restart: `${systemctl} restart ${unit}`,
        status: `${systemctl} is-active ${unit}`,
        journal: `${restart.sudo ? "sudo -n " : ""}journalctl -u ${unit} -n 50 --no-pager`,
      }
    }
    // stop may fail when nothing runs; start must not.
    return { restart: `{ ${restart.stop} ; } ; ${restart.start}`, status: restart.status, ...(restart.logs ? { journal: restart.logs } : {}) }
  }

  /** What must exist on the target for the preset to work (doctor checks it): the program of each command. */
  export function programs(restart: DeployRules.Target["restart"]): string[] {
    if (restart.preset === "systemd") return restart.sudo ? ["systemctl", "journalctl", "sudo"] : ["systemctl", "journalctl"]
    return []
  }
}
