import { existsSync, lstatSync, readlinkSync, realpathSync } from "node:fs"
import { basename, dirname, isAbsolute, join, normalize, relative, resolve, sep } from "node:path"
import { Roles } from "./roles"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * Path confinement for the roles that change files (executor, debugger): every path they touch must
 * resolve inside their task's worktree — no `..` escape, no absolute path elsewhere, no symbolic link
 * that leads out (the deepest existing ancestor is resolved with realpath, dangling links are followed
 * by hand) — and nobody but the Scheduler's code writes `.air/local`.
 *
 * File tools are checked exactly. `bash` is confined on a best-effort basis: its working directory is
 * forced to the worktree (the tool's `workdir` argument is rewritten), and commands that obviously reach
 * outside — `cd /`, `cd ..` above the root, `~` or `$HOME`, `..` climbing above the root, absolute paths
 * other than system tool paths (/usr, /bin, /lib, /opt, /dev/null, …), anything naming `.air/local` —
 * are refused. A determined shell script can still compute a path at run time; the fences behind this
 * one are the worktree as working directory, the engine's own `external_directory` check (denied for
 * workers), and the Scheduler's gates, which look at the task branch's diff only.
 */
export namespace Paths {
  export type Why = "dotdot" | "absolute" | "symlink" | "home" | "air-local" | "cd" | "variable"
  export type Verdict = { ok: true; path: string } | { ok: false; why: Why; path: string }

  /** The real path of `p`: symlinks resolved through its deepest existing ancestor, dangling ones too. */
  export function real(p: string, depth = 0): string {
    const abs = resolve(p)
    try {
      return realpathSync.native(abs)
    } catch {
      // Missing, or a dangling symlink somewhere: resolve the parent, then this component.
    }
    const parent = dirname(abs)
    if (parent === abs) return abs
    const base = join(real(parent, depth), basename(abs))
    let link: string | undefined
    try {
      if (lstatSync(base).isSymbolicLink()) link = readlinkSync(base)
    } catch {
      link = undefined
    }
    if (link !== undefined && depth < 40) return real(resolve(dirname(base), link), depth + 1)
    return base
  }

  function within(root: string, p: string): boolean {
    const rel = relative(root, p)
    return rel === "" || (!rel.startsWith(".." + sep) && rel !== ".." && !isAbsolute(rel))
  }

  /** `p` is `root` or below it, after resolving symlinks of both. */
  export function isInside(root: string, p: string): boolean {
    return within(real(root), real(p))
  }

  /** `.air/local` named in a command or an argument, with either slash, doubled or not. */
  const LOCAL_STATE = new RegExp(`(^|[\\s/'"=:])${AirPaths.pattern(AirPaths.LOCAL, "[\\\\/]+")}([\\\\/\\s'"]|$)`)

  /** The path names `.air/local` (the Scheduler's state, evidence and worktrees). */
  export function touchesLocalState(text: string): boolean {
    return LOCAL_STATE.test(text)
  }

  export type CheckOptions = {
    /** What a relative path is resolved from (default: the root). */
    base?: string
    /** Directories that may be read, not written, besides the root (the task's gate evidence, …). */
    readRoots?: readonly string[]
    /** The call changes the path: `.air/local` is refused and `readRoots` do not count. */
    write?: boolean
  }

  /** Checks one path argument against the root; on success `path` is the absolute path to use. */
  export function check(root: string, raw: string, opts: CheckOptions = {}): Verdict {
    if (/^~([\\/]|$)|^~[A-Za-z_]/.test(raw) || /\$\{?HOME\b/.test(raw)) return { ok: false, why: "home", path: raw }
    const base = opts.base ?? root
    const abs = isAbsolute(raw) ? normalize(raw) : resolve(base, raw)
    const realRoot = real(root)
    const realPath = real(abs)
    if (within(realRoot, realPath)) {
      if (opts.write && touchesLocalState(relative(realRoot, realPath).split(sep).join("/"))) return { ok: false, why: "air-local", path: raw }
      return { ok: true, path: abs }
    }
    if (!opts.write)
      for (const extra of opts.readRoots ?? []) if (within(real(extra), realPath)) return { ok: true, path: abs }
    if (opts.write && touchesLocalState(realPath.split(sep).join("/"))) return { ok: false, why: "air-local", path: raw }
    const lexical = within(resolve(root), abs) || within(realRoot, abs)
    if (lexical) return { ok: false, why: "symlink", path: raw }
    return { ok: false, why: isAbsolute(raw) ? "absolute" : "dotdot", path: raw }
  }

  /** Tools' path arguments, by tool id (OpenCode's built-in argument names). */
  export const PATH_ARGS: Record<string, readonly string[]> = {
    read: ["filePath"],
    write: ["filePath"],
    edit: ["filePath"],
    multiedit: ["filePath"],
    lsp: ["filePath"],
    list: ["path"],
    glob: ["path"],
    grep: ["path"],
  }
  /** Search tools: a missing `path` means "the session's directory": it is set to the root instead. */
  const SEARCH_TOOLS = ["glob", "grep", "list"]
  /** Glob-valued arguments that can name directories too. */
  const PATTERN_ARGS: Record<string, string> = { glob: "pattern", grep: "include" }

  /**
   * apply_patch's file headers, in the engine's grammar (1.18.33: a line that starts with `*** Add File:`,
   * `*** Delete File:`, `*** Update File:` or `*** Move to:`, the rest trimmed is the path — no space
   * needed after the colon). Leading blanks are accepted too: checking more lines than the engine reads
   * costs nothing, missing one would let a path through.
   */
  const PATCH_HEADER = /^([ \t]*\*\*\* (?:Add File|Update File|Delete File|Move to):[ \t]*)([^\r\n]*?)([ \t\r]*)$/gm

  /** The file paths an apply_patch / patch text names. */
  export function patchPaths(text: string): string[] {
    return [...text.matchAll(PATCH_HEADER)].map((m) => m[2]!.trim()).filter((p) => p !== "")
  }

  /** The directory part of a glob before its first wildcard ("../x/**" → "../x"). */
  function staticPrefix(pattern: string): { prefix: string; rest: string[] } {
    const parts = pattern.split(/[\\/]/)
    const i = parts.findIndex((p) => /[*?[\]{}]/.test(p))
    const fixed = i < 0 ? parts.slice(0, -1) : parts.slice(0, i)
    const rest = i < 0 ? parts.slice(-1) : parts.slice(i)
    return { prefix: (pattern.startsWith("/") ? "/" : "") + fixed.filter(Boolean).join("/"), rest }
  }

  export type ConfineResult =
    | { ok: true; args: Record<string, unknown>; changed: boolean }
    | { ok: false; why: Why; path: string }

  /**
   * Confines one file-tool call. Relative paths are made absolute from the root (the engine would
   * resolve them from the session's directory, which may not be the worktree), a missing search path
   * becomes the root. Returns the arguments to use; tools without path arguments pass unchanged.
   */
  export function confine(tool: string, args: Record<string, unknown>, ctx: { root: string; readRoots?: readonly string[] }): ConfineResult {
    const write = Roles.isWriteTool(tool)
    const next: Record<string, unknown> = { ...args }
    let changed = false
    for (const key of PATH_ARGS[tool] ?? []) {
      const value = args[key]
      if (value === undefined || value === null || value === "") {
        if (SEARCH_TOOLS.includes(tool)) {
          next[key] = resolve(ctx.root)
          changed = true
        }
        continue
      }
      if (typeof value !== "string") continue
      const v = check(ctx.root, value, { readRoots: ctx.readRoots, write })
      if (!v.ok) return v
      if (v.path !== value) {
        next[key] = v.path
        changed = true
      }
    }
    const patternKey = PATTERN_ARGS[tool]
    const pattern = patternKey ? args[patternKey] : undefined
    if (typeof pattern === "string" && pattern !== "") {
      const { prefix, rest } = staticPrefix(pattern)
      if (rest.includes("..")) return { ok: false, why: "dotdot", path: pattern }
      if (prefix !== "") {
        const from = typeof next.path === "string" ? (next.path as string) : ctx.root
        const v = check(ctx.root, prefix, { base: from, readRoots: ctx.readRoots })
        if (!v.ok) return { ...v, path: pattern }
      }
    }
    if ((tool === "apply_patch" || tool === "patch") && typeof args.patchText === "string") {
      for (const p of patchPaths(args.patchText)) {
        const v = check(ctx.root, p, { write: true })
        if (!v.ok) return v
      }
      const text = args.patchText.replace(PATCH_HEADER, (whole, head: string, p: string, tail: string) =>
        p.trim() === "" ? whole : head + resolve(ctx.root, p.trim()) + tail,
      )
      if (text !== args.patchText) {
        next.patchText = text
        changed = true
      }
    }
    return { ok: true, args: next, changed }
  }

  /** Absolute paths a command may name although they are outside the worktree: system tools and devices. */
  export const SYSTEM_PREFIXES = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/opt/", "/proc/self/", "/dev/fd/"]
  export const SYSTEM_FILES = [
    "/dev/null",
    "/dev/zero",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/proc/cpuinfo",
    "/proc/meminfo",
  ]

  function isSystemPath(p: string): boolean {
    const n = normalize(p)
    // /proc/self/root (and cwd, and any process's) is the whole file system again, not a system path.
    if (/^\/proc\/[^/]+\/(root|cwd|map_files)(\/|$)/.test(n)) return false
    return SYSTEM_FILES.includes(n) || SYSTEM_PREFIXES.some((prefix) => n.startsWith(prefix) || n + "/" === prefix)
  }

  /** The command without the bodies of its heredocs (`<<EOF … EOF`, `<<-'EOF' … EOF`). */
  export function stripHeredocs(command: string): string {
    const out: string[] = []
    const pending: { word: string; dash: boolean }[] = []
    for (const line of command.split("\n")) {
      const current = pending[0]
      if (current) {
        if ((current.dash ? line.replace(/^\t+/, "") : line).trimEnd() === current.word) pending.shift()
        continue
      }
      out.push(line)
      for (const m of line.matchAll(/(?<!<)<<(?!<)(-?)\s*(['"]?)([A-Za-z_][\w-]*)\2/g)) pending.push({ word: m[3]!, dash: m[1] === "-" })
    }
    return out.join("\n")
  }

  /** The text of a quoted string is data, not a path: a sentence, a `//` comment, a URL, a regex. */
  function isData(content: string, single: boolean): boolean {
    return /\s/.test(content) || content.startsWith("//") || content.includes("://") || /[\^\\*[\]|]/.test(content) || (single && content.includes("$"))
  }

  function ansiC(body: string): string {
    return body.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_, e: string) => {
      if (e[0] === "x") return String.fromCharCode(parseInt(e.slice(1), 16))
      if (/^[0-7]+$/.test(e)) return String.fromCharCode(parseInt(e, 8))
      return ({ n: "\n", t: "\t", r: "\r", a: "", b: "", e: "", f: "", v: "" } as Record<string, string>)[e] ?? e
    })
  }

  /**
   * A shell command with its data taken out, as the path checks should read it: quotes removed (their
   * content kept when it could be a path, `_` when it is data — see isData), backslash escapes undone,
   * `$'…'` decoded, `# comments` dropped. Not a shell parser: an early, friendly check; the sandbox is the fence.
   */
  export function shellData(command: string): string {
    let out = ""
    let i = 0
    const n = command.length
    while (i < n) {
      const c = command[i]!
      if (c === "\\" && i + 1 < n) {
        out += command[i + 1] === "\n" ? " " : command[i + 1]
        i += 2
        continue
      }
      if (c === "$" && command[i + 1] === "'") {
        const end = command.indexOf("'", i + 2)
        let j = i + 2
        while (j < n && command[j] !== "'") j += command[j] === "\\" ? 2 : 1
        const body = ansiC(command.slice(i + 2, end < 0 ? n : j))
        out += isData(body, true) ? "_" : body
        i = j + 1
        continue
      }
      if (c === "'") {
        const end = command.indexOf("'", i + 1)
        const body = command.slice(i + 1, end < 0 ? n : end)
        out += isData(body, true) ? "_" : body
        i = end < 0 ? n : end + 1
        continue
      }
      if (c === '"') {
        let j = i + 1
        let body = ""
        while (j < n && command[j] !== '"') {
          if (command[j] === "\\" && j + 1 < n) {
            body += command[j + 1]
            j += 2
          } else body += command[j++]
        }
        out += isData(body, false) ? "_" : body
        i = j + 1
        continue
      }
      if (c === "#" && (i === 0 || /[\s;&|(]/.test(command[i - 1]!))) {
        while (i < n && command[i] !== "\n") i++
        continue
      }
      out += c
      i++
    }
    return out
  }

  /** Every word of a segment, and every `=`/`:`/`,`-separated piece of it, that looks like a path. */
  function scanWords(segment: string, root: string, cwd: string, readRoots?: readonly string[]): { ok: false; why: Why; path: string } | undefined {
    for (const word of segment.split(/[\s'"`;|&<>(){}]+/)) {
      for (let piece of word.split(/[=:,]/)) {
        piece = piece.replace(/^-{1,2}[A-Za-z][A-Za-z-]*(?=[./~])/, "").replace(/^-[A-Za-z]{1,2}(?=[./])/, "")
        if (piece === "" || piece.startsWith("$")) continue
        if (piece.startsWith("/") && isSystemPath(piece)) continue
        if (piece.includes("/") || piece === "..") {
          const v = check(root, piece, { base: cwd, readRoots })
          if (!v.ok) return v
          continue
        }
        // A bare word: only a symlink in the working directory can lead out.
        if (!/^[\w.+@-]+$/.test(piece)) continue
        try {
          if (lstatSync(join(cwd, piece)).isSymbolicLink()) {
            const v = check(root, piece, { base: cwd, readRoots })
            if (!v.ok) return v
          }
        } catch {
          // not a file: not a path
        }
      }
    }
    return undefined
  }

  export type BashResult = { ok: true; workdir: string } | { ok: false; why: Why; path: string }

  /**
   * Best-effort confinement of a shell command (see the namespace comment). `workdir` is the tool's
   * argument, if the model gave one: it must be inside the root; the result is the one to run in.
   */
  export function bash(command: string, ctx: { root: string; workdir?: unknown; readRoots?: readonly string[] }): BashResult {
    const root = resolve(ctx.root)
    let workdir = root
    if (typeof ctx.workdir === "string" && ctx.workdir !== "") {
      const v = check(root, ctx.workdir)
      if (!v.ok) return v
      workdir = v.path
    }
    // Heredoc bodies, comments, and quoted text that is not a path are data (a C++ `// comment` in printf
    // or sed is no path); escapes are undone and $'…' decoded so `\.\./` reads as `../`.
    const text = shellData(stripHeredocs(command))
    // Naming the worktree itself (it lives under .air/local/worktrees) is not touching the Scheduler's state.
    let unrooted = text
    for (const r of new Set([real(root), root])) unrooted = unrooted.split(r).join(".")
    if (touchesLocalState(unrooted)) return { ok: false, why: "air-local", path: AirPaths.LOCAL }
    const home = unrooted.match(/\$\{?(HOME|OLDPWD)\b\}?|(?:^|[\s=:'"(])(~[A-Za-z_]*)(?=[\\/\s'"):;]|$)/)
    if (home) return { ok: false, why: "home", path: (home[0] ?? "~").trim() }

    // Segment by segment, following `cd` (a subshell's `cd` ends with its parenthesis).
    const withoutUrls = text.replace(/[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s'"`]*/g, " ")
    const stack: string[] = []
    let cwd = workdir
    for (const token of withoutUrls.split(/(&&|\|\||[;|\n()])/)) {
      if (token === "(") {
        stack.push(cwd)
        continue
      }
      if (token === ")") {
        cwd = stack.pop() ?? workdir
        continue
      }
      const segment = token.trim()
      if (segment === "" || /^(&&|\|\||[;|])$/.test(segment)) continue
      const cd = segment.match(/^(?:(?:then|do|else|if|while|until|\{)\s+)*(cd|pushd)\b(?:\s+(?:-[LPe@]\s+)*([^\s]+))?/)
      if (cd) {
        const target = (cd[2] ?? "").replace(/^['"]|['"]$/g, "")
        if (target === "" && cd[1] === "cd") return { ok: false, why: "home", path: "cd" }
        if (target === "-") return { ok: false, why: "cd", path: "cd -" }
        if (target === "") continue
        if (target.startsWith("$")) return { ok: false, why: "variable", path: target }
        const v = check(root, target, { base: cwd })
        if (!v.ok) return { ok: false, why: v.why === "absolute" || v.why === "dotdot" ? "cd" : v.why, path: target }
        cwd = v.path
        continue
      }
      const problem = scanWords(segment, root, cwd, ctx.readRoots)
      if (problem) return problem
    }
    return { ok: true, workdir }
  }

  /** The project root of a worktree at `<root>/.air/local/worktrees/<task>`, if it is one. */
  export function projectOfWorktree(worktree: string): { root: string; task: string } | undefined {
    const parts = resolve(worktree).split(sep)
    const marker = AirPaths.partsOf(AirPaths.WORKTREES)
    for (let i = parts.length - marker.length - 1; i >= 0; i--) {
      if (marker.every((part, k) => parts[i + k] === part) && parts[i + marker.length])
        return { root: parts.slice(0, i).join(sep) || sep, task: parts[i + marker.length]! }
    }
    return undefined
  }

  export const exists = existsSync
}
