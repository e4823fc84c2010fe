import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/**
 * A repository's `.git/config` as a sandboxed command sees it: a sanitised copy mounted over it. The file
 * can carry credentials — a token in a remote's URL (`https://user:token@host/…`), `http.extraHeader:
 * Authorization: …`, a credential helper's settings — and a worker needs none of them (the network is off,
 * and the Scheduler's code does every fetch and push). Everything else (core settings, remotes' names,
 * branches, submodules) stays, so git inside the sandbox works as outside.
 */
export namespace GitConfigCopy {
  /** Sections dropped whole: credential helpers, and includes (the included file is not sanitised). */
  const DROP_SECTIONS = new Set(["credential", "include", "includeif"])
  /** Keys dropped in any section (http.extraHeader, http.<url>.cookieFile, anything named like a secret). */
  const DROP_KEY = /^(extraheader|cookiefile|proxyauthmethod|.*(password|passwd|token|secret|credential).*)$/i
  /** `scheme://userinfo@` → `scheme://` (scp-like `git@host:` names a user, no secret: kept). */
  const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/@\s"]+@/gi

  export function sanitise(text: string): string {
    const out: string[] = []
    let dropSection = false
    let continuing = false
    for (const raw of text.split("\n")) {
      if (continuing) {
        continuing = raw.endsWith("\\")
        continue
      }
      const header = /^\s*\[\s*([A-Za-z0-9.-]+)/.exec(raw)
      if (header) {
        dropSection = DROP_SECTIONS.has(header[1]!.toLowerCase())
        if (!dropSection) out.push(raw.replace(USERINFO, "$1"))
        continue
      }
      const key = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(=|$)/.exec(raw)
      if (dropSection || (key && DROP_KEY.test(key[1]!))) {
        continuing = raw.endsWith("\\")
        continue
      }
      out.push(raw.replace(USERINFO, "$1"))
    }
    return out.join("\n")
  }

  /**
   * The sanitised copy of `configPath` under `stateDir` (rewritten only when the original changed), or
   * undefined when there is no such file.
   */
  export function copyOf(configPath: string, stateDir: string): string | undefined {
    let text: string
    try {
      text = readFileSync(configPath, "utf8")
    } catch {
      return undefined
    }
    const clean = sanitise(text)
    const name = createHash("sha256").update(configPath).digest("hex").slice(0, 16)
    const target = join(stateDir, "git-config", `${name}.config`)
    try {
      if (statSync(target).size === Buffer.byteLength(clean) && readFileSync(target, "utf8") === clean) return target
    } catch {
      // written below
    }
    mkdirSync(join(stateDir, "git-config"), { recursive: true })
    const tmp = `${target}.${process.pid}`
    writeFileSync(tmp, clean, { mode: 0o444 })
    renameSync(tmp, target)
    return target
  }
}
