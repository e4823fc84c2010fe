import { Toolchain } from "./index.ts"
import { Farm } from "./farm.ts"

/**
 * `aircoding doctor` for each farm host of toolchain.json: a tiny file compiled through the host alone
 * (reachable, speaks distcc's protocol, sends back an object). A host answering garbage is said so.
 */
export namespace FarmDoctor {
  export type Check = { name: string; ok: boolean; detail: string; fix?: string }

  export async function checks(root: string, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
    let rules: Toolchain.Rules
    try {
      const resolved = await Toolchain.load(root)
      if (resolved.source !== "file") return []
      rules = resolved.rules
    } catch {
      // An invalid toolchain.json is the readiness check's to report.
      return []
    }
    if (!rules.farm) return []
    return Promise.all(
      rules.farm.hosts.map(async (host) => {
        const probe = await Farm.probe(host, { env })
        return {
          name: `farm ${probe.host}`,
          ok: probe.ok,
          detail: probe.detail,
          ...(probe.ok ? {} : { fix: `start distccd on ${probe.host} (--allow this machine), or remove the host from ${Toolchain.RULES_PATH} farm.hosts` }),
        }
      }),
    )
  }
}
