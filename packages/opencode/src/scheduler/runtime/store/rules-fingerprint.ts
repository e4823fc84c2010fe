import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/**
 * Which rules fold the log: the SHA-1 of the core's source files. A snapshot records it, and a replay starts
 * from a snapshot only if the rules that made it are these (a log written by this version); after any
 * change to the core, the whole log is folded again. Undefined when the sources cannot be read (a
 * compiled binary): then every replay folds the whole log.
 */
export namespace RulesFingerprint {
  let cached: string | null | undefined

  export function get(): string | undefined {
    if (cached === undefined) cached = compute()
    return cached ?? undefined
  }

  function compute(): string | null {
    try {
      const dir = fileURLToPath(new URL("../../core/", import.meta.url))
      const hash = createHash("sha1")
      for (const name of readdirSync(dir).filter((f) => f.endsWith(".ts")).sort()) hash.update(`${name}\0`).update(readFileSync(`${dir}${name}`)).update("\0")
      return hash.digest("hex")
    } catch {
      return null
    }
  }
}
