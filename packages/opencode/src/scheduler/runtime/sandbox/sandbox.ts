import { DeployRules } from "../deploy/rules"
import { type Dirent, existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { isAbsolute, join, resolve } from "node:path"
import { z } from "zod"
import { Proc } from "../process"
import { SandboxEnvironment } from "./environment"
import { GitConfigCopy } from "./git-config"
import { GitLayout } from "../git/git-layout"
import { AirPaths } from "../../core/air-paths"

/**
 * The OS sandbox around every shell command of the executor and the debugger, and around the gates'
 * build, test and analysis commands: bubblewrap (Debian's `bubblewrap`, `bwrap`).
 *
 * Why bwrap directly and not @anthropic-ai/sandbox-runtime: what we need is one argv prefix, and bwrap
 * gives it with ~5 ms per call and no daemon, no proxy and no new npm dependency; the library wraps the
 * same bwrap on Linux (plus a network proxy we do not need: the network is simply off) and would add a
 * dependency tree to audit for the one platform CI runs. macOS (sandbox-exec) is not covered yet.
 *
 * Inside: the whole file system read-only; writable only the task's worktree (its build dir lives there),
 * the worktree's git admin dir and a private object dir (a worker commits; it moves no shared ref), the
 * compiler cache, and a private /tmp; HOME's secrets and the project's `.env` files hidden; no network
 * unless the toolchain allows it; new PID/IPC/UTS namespaces (the engine's process and its environment
 * are invisible); an environment reduced to what builds need.
 */
export namespace Sandbox {
  export const Hidden = z.object({ path: z.string(), kind: z.enum(["dir", "file"]) })
  export type Hidden = z.infer<typeof Hidden>

  export const Policy = z
    .object({
      /** The task's working copy: writable, and where commands run. */
      worktree: z.string().refine(isAbsolute, "an absolute path"),
      /** More writable directories: a build dir outside the worktree, the compiler cache. */
      writable: z.array(z.string().refine(isAbsolute)).default([]),
      /** Directories under /tmp that must stay visible (read-only) although /tmp is private. */
      visible: z.array(z.string().refine(isAbsolute)).default([]),
      /** Inside a writable dir, yet read-only: a checkout's own `.git` when the worker runs in a plain checkout. */
      readOnly: z.array(z.string().refine(isAbsolute)).default([]),
      /** Secrets to hide: an empty tmpfs over a directory, an empty file over a file. */
      hidden: z.array(Hidden).default([]),
      /** Network access (toolchain.json `"network": true`); off by default. */
      network: z.boolean().default(false),
      /** The whole environment of the command (already reduced). */
      env: z.record(z.string(), z.string()).default({}),
      git: z.object({ gitDir: z.string(), commonDir: z.string(), objectDir: z.string() }).optional(),
      /** Files shown as another (read-only): the repository's `.git/config` as its sanitised copy. */
      masks: z.array(z.object({ source: z.string(), path: z.string() }).strict()).default([]),
      /** An empty regular file mounted over hidden files (a bound /dev/null is not readable: nodev). */
      emptyFile: z.string().default("/dev/null"),
    })
    .strict()
  export type Policy = z.infer<typeof Policy>
  export type PolicyInput = z.input<typeof Policy>

  export const BINARY = "bwrap"
  /** The probes (bwrap usable, the git identity) answer in milliseconds; a hung one must not hold a run. */
  const PROBE_TIMEOUT_MS = 15_000
  export const INSTALL_HINT = "sudo apt-get install bubblewrap (Debian/Ubuntu; Fedora: dnf install bubblewrap)"

  /** The bwrap options for a policy (without the program name and without `--`). Mount order matters. */
  export function options(input: PolicyInput): string[] {
    const p = Policy.parse(input)
    const out = ["--unshare-all"]
    if (p.network) out.push("--share-net")
    out.push("--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp")
    // A private /tmp would hide a project that lives there (tests, CI): show those again, read-only.
    for (const dir of p.visible) if (underTmp(dir)) out.push("--ro-bind", dir, dir)
    for (const h of p.hidden) out.push(...(h.kind === "dir" ? ["--tmpfs", h.path] : ["--ro-bind", p.emptyFile, h.path]))
    const writable = [p.worktree, ...p.writable, ...(p.git ? [p.git.gitDir, p.git.objectDir] : [])]
    // The worktree, then what is read-only inside it, then the other writable dirs (the compiler cache may
    // sit inside a read-only one: the final check's `.air/local/ccache` under a read-only `.air`).
    out.push("--bind", p.worktree, p.worktree)
    for (const dir of p.readOnly) out.push("--ro-bind", dir, dir)
    for (const dir of writable.slice(1)) out.push("--bind", dir, dir)
    // After the writable binds: a .env inside the worktree stays hidden.
    for (const h of p.hidden) if (h.kind === "file" && writable.some((w) => h.path.startsWith(w + "/"))) out.push("--ro-bind", p.emptyFile, h.path)
    // Last: over whatever the binds above made of it (a plain checkout's .git is read-only, inside the worktree).
    for (const m of p.masks) out.push("--ro-bind", m.source, m.path)
    out.push("--clearenv")
    const env = { ...p.env, TMPDIR: "/tmp", AIRCODING_SANDBOX: "1", ...(p.git ? GitLayout.env(p.git) : {}) }
    for (const [k, v] of Object.entries(env)) out.push("--setenv", k, v)
    return out
  }

  function underTmp(p: string): boolean {
    return p === "/tmp" || p.startsWith("/tmp/")
  }

  /** `argv` run inside the sandbox: the argv to spawn instead. */
  export function wrap(argv: readonly string[], policy: PolicyInput): string[] {
    return [BINARY, ...options(policy), "--", ...argv]
  }

  /** A shell command run by `bash -c` inside the sandbox, as one shell command line (for the bash tool). */
  export function shellCommand(command: string, policy: PolicyInput, argsFile?: string): string {
    if (argsFile) {
      // The options are long (and would fill the model's context when it reads its own calls back): they
      // are read from a file the sandbox cannot write.
      writeFileSync(argsFile, options(policy).map((a) => a + "\0").join(""))
      // `exec`: bwrap takes the place of the engine's shell, so the engine is its parent and --die-with-parent ends
      // the sandbox with the engine. Behind a shell of its own it outlived a killed AirCoding and finished the
      // worker's command (an edit, a commit) after the resumed run had set the worktree straight (issue 44).
      return `exec ${BINARY} --args 3 -- /bin/bash -c ${quote(command)} 3<${quote(argsFile)}`
    }
    return wrap(["/bin/bash", "-c", command], policy).map(quote).join(" ")
  }

  /**
   * The model's own command inside a command line of `shellCommand` (the engine records the rewritten
   * line as the call's input: views and tests show the original), or the line itself.
   */
  export function originalCommand(line: string): string {
    const m = /^(?:exec )?bwrap --args 3 -- \/bin\/bash -c ((?:'[^']*'|\\'|[\w@%+=:,./-])+) 3</.exec(line)
    if (!m) return line
    return m[1]!.replace(/'([^']*)'|\\(.)|([^'\\]+)/g, (_, quoted: string | undefined, escaped: string | undefined, bare: string | undefined) => quoted ?? escaped ?? bare ?? "")
  }

  /** POSIX single-quoting. */
  export function quote(word: string): string {
    return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
  }

  export type PlanInput = {
    worktree: string
    /** The project root (its `.env` files are hidden, it stays visible under a private /tmp). */
    project?: string
    /** Where the sandbox keeps its private state (object dirs, args files); default `<project>/.air/local/sandbox`. */
    stateDir?: string
    /** The environment to reduce; default `process.env`. */
    env?: Readonly<Record<string, string | undefined>>
    network?: boolean
    /** More writable dirs (a build dir outside the worktree). */
    writable?: readonly string[]
    /** Read-only although inside the worktree (besides a checkout's own `.git`), when they exist. */
    readOnly?: readonly string[]
    /** Give git's private object dir and admin dir (worker shells: yes; gates: no, they do not commit). */
    git?: boolean
  }

  /** The policy for one task's worktree, from what is on disk (secrets that exist, `.env` files, git's layout). */
  export function plan(input: PlanInput): Policy {
    const source = input.env ?? process.env
    const worktree = resolve(input.worktree)
    const project = input.project ? resolve(input.project) : undefined
    const home = source.HOME || homedir()
    const env = { ...identity(worktree, source), ...SandboxEnvironment.reduce(source) }
    const hidden: Hidden[] = []
    const seen = new Set<string>()
    const hide = (path: string) => {
      if (seen.has(path)) return
      try {
        const st = lstatSync(path)
        if (st.isSymbolicLink()) return hideTarget(path)
        hidden.push({ path, kind: st.isDirectory() ? "dir" : "file" })
        seen.add(path)
      } catch {
        // not there: nothing to hide
      }
    }
    // A symlinked secret: hide what it points to (bwrap cannot mount over a symlink).
    const hideTarget = (path: string) => {
      try {
        const real = realpathSync(path)
        if (!seen.has(real)) hide(real)
      } catch {
        // dangling: nothing to read
      }
    }
    for (const rel of SandboxEnvironment.HOME_SECRETS) hide(join(home, rel))
    // The deploy targets' identity files, wherever they are (~/.ssh is hidden above anyway).
    for (const key of DeployRules.secretPaths(project ?? worktree, home)) hide(key)
    for (const abs of SandboxEnvironment.xdgSecrets(source)) hide(abs)
    for (const root of new Set([project, worktree].filter((p): p is string => !!p))) for (const f of envFiles(root)) hide(f)

    const cache = compilerCache(source, home)
    // ccache inside must use the dir bound writable: its default there could differ (XDG_CACHE_HOME is not
    // passed in, so it fell back to the read-only ~/.cache and every compile failed — a Debugger's build too).
    if (cache && !env.CCACHE_DIR) env.CCACHE_DIR = cache
    const stateDir = input.stateDir ?? (project ? AirPaths.sandbox(project) : undefined)
    const git = input.git !== false && stateDir ? GitLayout.of(worktree, stateDir) : undefined
    const writable = [...(input.writable ?? []).map((w) => resolve(w)), ...(cache ? [cache] : []), ...toolCaches(source)]
    const visible = [...new Set([project, home, git?.commonDir].filter((p): p is string => !!p))]
    const readOnly: string[] = (input.readOnly ?? []).map((p) => resolve(p)).filter((p) => existsSync(p))
    try {
      if (statSync(join(worktree, ".git")).isDirectory()) readOnly.push(join(worktree, ".git"))
    } catch {
      // a linked worktree (a .git file) or no git at all
    }
    const emptyFile = emptyFileIn(stateDir ?? tmpdir())
    const masks = gitConfigMask(worktree, project, stateDir ?? join(tmpdir(), `aircoding-sandbox-${process.pid}`))
    return Policy.parse({ worktree, writable, visible, readOnly, hidden, masks, network: input.network ?? false, env, emptyFile, ...(git ? { git } : {}) })
  }

  /** The repository's config (a task worktree's shared one, a checkout's own) shown as its sanitised copy. */
  function gitConfigMask(worktree: string, project: string | undefined, stateDir: string): { source: string; path: string }[] {
    const layout = GitLayout.of(worktree, stateDir)
    const candidates = [layout ? join(layout.commonDir, "config") : undefined, join(worktree, ".git", "config"), project ? join(project, ".git", "config") : undefined]
    const out: { source: string; path: string }[] = []
    for (const path of new Set(candidates.filter((c): c is string => !!c))) {
      const source = GitConfigCopy.copyOf(path, stateDir)
      if (source) out.push({ source, path })
    }
    return out
  }

  /** An empty, read-only regular file to mount over hidden files. */
  function emptyFileIn(dir: string): string {
    const path = join(dir, "empty")
    try {
      if (statSync(path).size === 0) return path
    } catch {
      // made below
    }
    mkdirSync(dir, { recursive: true })
    writeFileSync(path, "", { mode: 0o444 })
    return path
  }

  const identities = new Map<string, Record<string, string>>()

  /**
   * Who commits, as variables: ~/.gitconfig is hidden (it may hold credentials), so a name and e-mail
   * configured only there are read here, once per HOME, outside the sandbox.
   */
  function identity(worktree: string, source: Readonly<Record<string, string | undefined>>): Record<string, string> {
    if (source.GIT_AUTHOR_NAME && source.GIT_AUTHOR_EMAIL) return {}
    const key = `${source.HOME ?? ""}\0${worktree}`
    const known = identities.get(key)
    if (known) return known
    const out: Record<string, string> = {}
    const env = { ...source, GIT_CONFIG_NOSYSTEM: "1" } as NodeJS.ProcessEnv
    for (const [field, names] of [
      ["user.name", ["GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"]],
      ["user.email", ["GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"]],
    ] as const) {
      const r = Proc.runSync("git", ["config", "--global", "--get", field], { cwd: worktree, env, timeoutMs: PROBE_TIMEOUT_MS })
      const value = r.ok ? r.stdout.trim() : ""
      if (value) for (const n of names) out[n] = value
    }
    identities.set(key, out)
    return out
  }

  /** The compiler cache dir (ccache), created so it can be bound. */
  function compilerCache(env: Readonly<Record<string, string | undefined>>, home: string): string | undefined {
    const dir = env.CCACHE_DIR || join(env.XDG_CACHE_HOME || join(home, ".cache"), "ccache")
    try {
      mkdirSync(dir, { recursive: true })
      return resolve(dir)
    } catch {
      return undefined
    }
  }

  /**
   * The analysers' caches AirCoding itself names in a gate's environment (go's build cache, staticcheck's, a
   * crate's target dir: gates/analysers/), bound writable so each run does not start from nothing in the
   * private /tmp. Only AirCoding's own directories under the temp dir: a variable pointing elsewhere is not
   * made writable. Shared by the project's tasks as the compiler cache is.
   */
  function toolCaches(env: Readonly<Record<string, string | undefined>>): string[] {
    const out: string[] = []
    for (const key of SandboxEnvironment.TOOL_CACHES) {
      const dir = env[key]
      if (!dir || !isAbsolute(dir) || !SandboxEnvironment.isOwnCache(dir, tmpdir())) continue
      try {
        mkdirSync(dir, { recursive: true })
        out.push(resolve(dir))
      } catch {
        // not made: the tool fails to write there and says so
      }
    }
    return out
  }

  /** Directories never searched for `.env` files: git's, dependencies, build output, the Scheduler's state. */
  const SKIP = new Set([".git", "node_modules", AirPaths.AIR, ".air-build", "build", ".cache"])

  /** `.env` files under `root` (a bounded walk: depth 6, 5000 directories). */
  export function envFiles(root: string): string[] {
    const out: string[] = []
    let budget = 5000
    const walk = (dir: string, depth: number) => {
      if (depth > 6 || budget-- <= 0) return
      let entries: Dirent[]
      try {
        entries = readdirSync(dir, { withFileTypes: true })
      } catch {
        return
      }
      for (const e of entries) {
        if (e.isDirectory()) {
          if (!SKIP.has(e.name)) walk(join(dir, e.name), depth + 1)
        } else if (SandboxEnvironment.isEnvFile(e.name)) out.push(join(dir, e.name))
      }
    }
    walk(root, 0)
    return out
  }

  export type Check = { ok: true; binary: string; version: string } | { ok: false; message: string }

  let cached: Check | undefined

  /**
   * Whether a sandbox can start here: bwrap is installed and user namespaces work. Remembered for the
   * process (`fresh` asks again).
   */
  export function check(fresh = false): Check {
    if (cached && !fresh) return cached
    if (process.platform !== "linux") {
      cached = { ok: false, message: `the OS sandbox needs Linux with bubblewrap; this is ${process.platform}` }
      return cached
    }
    const version = Proc.runSync(BINARY, ["--version"], { env: process.env, timeoutMs: PROBE_TIMEOUT_MS })
    if (!version.ok) {
      cached = { ok: false, message: `bubblewrap (bwrap) is not installed: ${INSTALL_HINT}` }
      return cached
    }
    const probe = Proc.runSync(BINARY, ["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true"], {
      env: process.env,
      timeoutMs: PROBE_TIMEOUT_MS,
    })
    if (!probe.ok) {
      const why = (probe.stderr || probe.spawnError || Proc.describe(probe, PROBE_TIMEOUT_MS)).trim()
      cached = {
        ok: false,
        message:
          `bubblewrap is installed but cannot start a sandbox (${why}). Unprivileged user namespaces may be off: ` +
          `sysctl kernel.unprivileged_userns_clone=1 (Debian) or kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04)`,
      }
      return cached
    }
    cached = { ok: true, binary: BINARY, version: version.stdout.trim() }
    return cached
  }

  /** Tests only: forget the remembered check, or pretend one. */
  export function setCheck(result: Check | undefined): void {
    cached = result
  }
}
