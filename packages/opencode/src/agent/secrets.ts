import { readFileSync } from "node:fs"
import { Sandbox } from "../scheduler/runtime/sandbox/sandbox"
import { SandboxEnvironment } from "../scheduler/runtime/sandbox/environment"

/**
 * Secret files and the engine's file tools. The engine's read, grep, glob and list run in the engine's own
 * process (grep and glob run its bundled ripgrep), outside the OS sandbox that hides `.env` and HOME's
 * secrets from shell commands — so for AirCoding's roles they are fenced here: a call naming a secret path
 * is refused, grep is made to skip secret files, and what grep, glob and list return is cleaned of them.
 *
 * Secret: `.env` files (not `.env.example` & co.) and `.envrc` (direnv's, it exports tokens), private keys
 * and certificates (`*.pem`, `*.key`, `*.p12`, `*.pfx`, `id_rsa`…), credential files (`.netrc`, `.npmrc`,
 * `.pypirc`, `.git-credentials`, `.gitconfig`), a repository's `.git/config` (remote URLs and extra headers
 * may carry tokens), and anything under HOME's secret directories (`.ssh`, `.aws`, the engine's auth…).
 * `environment.cpp`, `env.h` or `.env.example` are ordinary files.
 */
export namespace SecretPaths {
  const KEY_FILES = /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/
  const KEY_SUFFIX = /\.(pem|key|p12|pfx|jks|keystore)$/i
  const CREDENTIAL_FILES = new Set([".netrc", ".npmrc", ".pypirc", ".git-credentials", ".gitconfig", ".htpasswd"])
  /** Directory names whose whole content is secret, wherever they are. */
  const SECRET_DIRS = new Set([".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker"])
  /** Two-segment directories (under HOME or XDG dirs) whose content is secret. */
  const SECRET_PAIRS = [".config/opencode", ".local/share/opencode", ".local/state/opencode", ".config/gh", ".config/gcloud", ".config/git"]

  /** A file name that holds secrets. */
  export function isSecretName(name: string): boolean {
    return SandboxEnvironment.isEnvFile(name) || KEY_FILES.test(name) || KEY_SUFFIX.test(name) || CREDENTIAL_FILES.has(name)
  }

  /** A path (absolute or relative, `/` or `\`) that names a secret file or lies in a secret directory. */
  export function isSecretPath(path: string): boolean {
    const parts = path.split(/[\\/]+/).filter((p) => p !== "" && p !== ".")
    if (parts.length === 0) return false
    if (isSecretName(parts.at(-1)!)) return true
    if (parts.some((p) => SECRET_DIRS.has(p))) return true
    const joined = "/" + parts.join("/") + "/"
    // The engine's own copies of truncated tool outputs (it tells the model to read them there) are not secret.
    if (joined.includes("/opencode/tool-output/")) return false
    if (SECRET_PAIRS.some((pair) => joined.includes(`/${pair}/`))) return true
    return parts.length >= 2 && parts.at(-2) === ".git" && parts.at(-1) === "config"
  }

  /** Names a glob is tried on to see whether it could reach a secret file. */
  const PROBES = [".env", ".env.local", ".env.production", ".envrc", "server.pem", "tls.key", "id_rsa", "id_ed25519", ".netrc", ".npmrc", ".git-credentials", "cert.p12"]

  /**
   * ripgrep's glob for "everything but secret files" (`--glob=!{…}` excludes them; with no positive glob,
   * everything else is searched).
   */
  export const EXCLUDE_GLOB = "!{.env,.env.*,.envrc,*.pem,*.key,*.p12,*.pfx,*.jks,*.keystore,id_rsa,id_dsa,id_ecdsa,id_ed25519,.netrc,.npmrc,.pypirc,.git-credentials,.gitconfig,.htpasswd}"

  /** Globs that mean "every file": replaced by the exclusion, which means the same minus secrets. */
  const EVERYTHING = new Set(["*", "**", "**/*", "*.*", "**/*.*"])

  /** A glob (ripgrep's dialect: `*`, `**`, `?`, `[…]`, `{a,b}`) as a regex over a path's last segments. */
  export function globRegex(glob: string): RegExp {
    let out = ""
    let depth = 0
    for (let i = 0; i < glob.length; i++) {
      const c = glob[i]!
      if (c === "*") {
        if (glob[i + 1] === "*") {
          out += ".*"
          i++
          if (glob[i + 1] === "/") i++
        } else out += "[^/]*"
      } else if (c === "?") out += "[^/]"
      else if (c === "[") {
        const end = glob.indexOf("]", i + 1)
        if (end < 0) out += "\\["
        else {
          out += "[" + glob.slice(i + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\") + "]"
          i = end
        }
      } else if (c === "{") {
        depth++
        out += "(?:"
      } else if (c === "}" && depth > 0) {
        depth--
        out += ")"
      } else if (c === "," && depth > 0) out += "|"
      else if (c === "\\" && i + 1 < glob.length) out += "\\" + glob[++i]
      else out += c.replace(/[.+^$()|\]\\]/g, "\\$&")
    }
    // A glob without a slash matches a file's name anywhere (ripgrep); with one, the end of its path.
    return new RegExp(glob.includes("/") ? `(^|/)${out}$` : `^${out}$`)
  }

  /** Whether a glob could match a secret file (tried on typical secret names, under a directory too). */
  export function globReaches(glob: string): boolean {
    if (glob.startsWith("!")) return false
    let re: RegExp
    try {
      re = globRegex(glob)
    } catch {
      return true
    }
    return PROBES.some((name) => re.test(name) || re.test(`src/${name}`) || re.test(`.ssh/${name}`))
  }

  export type Fenced = { ok: true; args?: Record<string, unknown> } | { ok: false; detail: string }

  /**
   * A file tool's call, made safe or refused: a path naming a secret is refused; grep's include glob that
   * could reach a secret file is refused, one meaning "everything" (or none) becomes the exclusion; glob's
   * pattern that names secret files is refused (an ordinary pattern's listing is cleaned afterwards).
   */
  export function fence(tool: string, args: Record<string, unknown>): Fenced {
    for (const key of ["filePath", "path"]) {
      const v = args[key]
      if (typeof v === "string" && v !== "" && isSecretPath(v)) return { ok: false, detail: v }
    }
    if (tool === "grep") {
      const include = typeof args.include === "string" ? args.include.trim() : ""
      if (include === "" || EVERYTHING.has(include)) return { ok: true, args: { ...args, include: EXCLUDE_GLOB } }
      if (include !== EXCLUDE_GLOB && globReaches(include)) return { ok: false, detail: include }
    }
    if (tool === "glob" && typeof args.pattern === "string" && !EVERYTHING.has(args.pattern.trim()) && (globReaches(args.pattern) || isSecretPath(args.pattern)))
      return { ok: false, detail: args.pattern }
    return { ok: true }
  }

  /** `KEY=value` values of the `.env` files under the roots (long enough to be recognised in a line). */
  export function envValues(roots: readonly string[]): string[] {
    const out = new Set<string>()
    for (const file of new Set(roots.flatMap((r) => Sandbox.envFiles(r)))) {
      let text = ""
      try {
        text = readFileSync(file, "utf8")
      } catch {
        continue
      }
      for (const line of text.split(/\r?\n/)) {
        const m = /^\s*(?:export\s+)?[A-Za-z_][\w.]*\s*=\s*(.*)$/.exec(line)
        const value = m?.[1]?.trim().replace(/^(['"])(.*)\1$/, "$2")
        if (value && value.length >= 6) out.add(value)
      }
    }
    return [...out]
  }

  export type Cleaned = { output: string; removed: number }

  /**
   * What grep, glob or list returned, without secret files: grep's blocks (`path:` then `  Line n: …`)
   * of a secret file, and any line carrying a value of a `.env` under `roots`; glob's and list's lines
   * naming a secret file. The match count is corrected.
   */
  export function clean(tool: string, output: string, roots: readonly string[] = []): Cleaned {
    const lines = output.split("\n")
    let removed = 0
    if (tool === "grep") {
      const values = envValues(roots)
      const kept: string[] = []
      let skipping = false
      for (const line of lines) {
        const header = /^(?! {2}Line \d+:)(.+):$/.exec(line)
        if (header && !line.startsWith(" ")) skipping = isSecretPath(header[1]!)
        const leaks = values.some((v) => line.includes(v))
        if ((skipping && line !== "") || leaks) {
          if (/^ {2}Line \d+:/.test(line)) removed++
          continue
        }
        kept.push(line)
      }
      if (removed === 0) return { output, removed }
      const matches = kept.filter((l) => /^ {2}Line \d+:/.test(l)).length
      const text = kept
        .join("\n")
        .replace(/\n{3,}/g, "\n\n")
        .replace(/^Found \d+ matches/, matches === 0 ? "No files found" : `Found ${matches} matches`)
      return { output: text.trimEnd() + (matches === 0 ? "" : "\n"), removed }
    }
    const kept = lines.filter((line) => {
      const entry = line.trim().replace(/\/$/, "")
      const secret = entry !== "" && (isSecretPath(entry) || isSecretName(entry.split(/\s+/).at(-1) ?? ""))
      if (secret) removed++
      return !secret
    })
    return { output: removed === 0 ? output : kept.join("\n"), removed }
  }
}
