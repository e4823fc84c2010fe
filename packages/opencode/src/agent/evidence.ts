import { readdirSync, readFileSync } from "node:fs"
import { basename, isAbsolute, join, resolve, sep } from "node:path"
import { Looks } from "./looks"
import { Paths } from "./paths"
import { Roles } from "./roles"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * The debugger's evidence-first rule, in code: no edit before it has looked at the failure — ran the
 * failing build, test or analysis, read a gate's output or a log. What counts is decided here; the guard
 * records an item when it allows such a call (a worker's words are never evidence: there is no tool to
 * "declare" evidence).
 */
export namespace Evidence {
  export type Kind = "build" | "test" | "analysis" | "log"
  export type Item = { kind: Kind; tool: string; detail: string; at?: string }

  /** Tools that change files: refused for the debugger until it has evidence. */
  export const EDIT_TOOLS: ReadonlySet<string> = new Set(Roles.WRITE_TOOLS)

  /** Programs whose run is evidence, by what they show. */
  export const PROGRAMS: Readonly<Record<string, Kind>> = {
    cmake: "build",
    make: "build",
    gmake: "build",
    ninja: "build",
    meson: "build",
    "g++": "build",
    gcc: "build",
    "c++": "build",
    cc: "build",
    clang: "build",
    "clang++": "build",
    ctest: "test",
    valgrind: "test",
    cppcheck: "analysis",
    "clang-tidy": "analysis",
    "scan-build": "analysis",
  }

  /** Words that may precede the program in a segment (`VAR=1 time make`, `timeout 60 ctest`). */
  const PREFIXES = new Set(["time", "env", "nice", "nohup", "command", "exec", "stdbuf", "timeout", "xargs"])
  const READERS = new Set(["cat", "tail", "head", "less", "more", "grep", "egrep", "rg", "sed", "awk", "tac", "wc"])

  function segments(command: string): string[] {
    return command
      .split(/&&|\|\||[;|\n]/)
      .map((s) => s.trim())
      .filter(Boolean)
  }

  function words(segment: string): string[] {
    return segment
      .split(/\s+/)
      .map((w) => w.replace(/^['"(]+|['")]+$/g, ""))
      .filter(Boolean)
  }

  /** The program a segment runs, past environment assignments and wrappers. */
  function program(ws: string[]): { name: string; invoked: string; rest: string[] } | undefined {
    let i = 0
    while (i < ws.length) {
      const w = ws[i]!
      if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++
      else if (PREFIXES.has(w)) {
        i++
        // `timeout 60 make`, `nice -n 5 make`, `env -i make`
        while (i < ws.length && (/^-/.test(ws[i]!) || /^\d+[smhd]?$/.test(ws[i]!))) i++
      } else break
    }
    const name = ws[i]
    return name ? { name: basename(name), invoked: name, rest: ws.slice(i + 1) } : undefined
  }

  function normalize(command: string): string {
    return command.trim().replace(/\s+/g, " ")
  }

  /**
   * The failure being repaired, from the gates' last failed report of the task: the commands of the failed
   * gate's log (`$ …` lines, the failing one first) and the files and tests it names.
   */
  export type Failure = { commands: string[]; names: string[] }

  /** The newest failed report under a task's evidence dir (`attempt-N/report.json`), as a Failure. */
  export function failureOf(taskEvidenceDir: string): Failure | undefined {
    let attempts: string[]
    try {
      attempts = readdirSync(taskEvidenceDir).filter((d) => /^attempt-\d+$/.test(d))
    } catch {
      return undefined
    }
    attempts.sort((a, b) => Number(b.slice(8)) - Number(a.slice(8)))
    for (const attempt of attempts) {
      let report: { passed?: boolean; failedGate?: string; message?: string; gates?: { gate: string; logPath?: string }[]; findings?: { file: string }[] }
      try {
        report = JSON.parse(readFileSync(join(taskEvidenceDir, attempt, "report.json"), "utf8"))
      } catch {
        continue
      }
      if (report.passed !== false) return undefined
      const logPath = report.gates?.find((g) => g.gate === report.failedGate)?.logPath
      let log = ""
      try {
        if (logPath) log = readFileSync(logPath, "utf8")
      } catch {
        // a report without its log: the names still count
      }
      // A gate a worker can look with (air_capture, air_probe) names that look first: it reproduces the failure.
      const look = Looks.ofGate(report.failedGate)
      const commands = [...(look ? [look] : []), ...[...log.matchAll(/^\$ (.+)$/gm)].map((m) => m[1]!.trim()).reverse()]
      return { commands, names: namesIn(`${report.message ?? ""}\n${log}\n${(report.findings ?? []).map((f) => f.file).join("\n")}`) }
    }
    return undefined
  }

  /** Source files and failed tests a failure's text names (`src/calc.cpp:12`, `1 - calc_test (Failed)`). */
  export function namesIn(text: string): string[] {
    const out = new Set<string>()
    for (const m of text.matchAll(/[\w./+-]+\.(?:c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx|inl|ipp|tpp|cmake|txt)\b/g)) if (!/^CMakeCache|^\.+$/.test(m[0])) out.add(m[0])
    for (const m of text.matchAll(/^\s*\d+ - ([\w.:/-]+) \((?:Failed|SEGFAULT|Timeout|Subprocess aborted|Exception|Not Run|Child aborted)/gm)) out.add(m[1]!)
    for (const m of text.matchAll(/\[\s*FAILED\s*\]\s+([\w.:/]+)/g)) out.add(m[1]!)
    return [...out]
  }

  /** Words of a command for comparison: absolute paths under `root` made relative, parallelism and report files dropped. */
  function comparable(segment: string, root?: string, gateSide = false): string[] {
    const ws = words(segment).map((w) => (root && w.startsWith(root + "/") ? w.slice(root.length + 1) : w)).map((w) => w.replace(/^\.\//, ""))
    const out: string[] = []
    for (let i = 0; i < ws.length; i++) {
      const w = ws[i]!
      if (/^(-j|--parallel|-l)$/.test(w)) {
        if (/^\d+$/.test(ws[i + 1] ?? "")) i++
        continue
      }
      if (/^(-j\d+|--parallel=\d+|-l\d+)$/.test(w)) continue
      // A report file the test gate asks CTest for (its JUnit results), and on the gate's side the tests it
      // selected by their changed binaries (`-R '^(a|b)$'`, runtime/results/selection.ts): the wider suite reproduces them too.
      if (w === "--output-junit" || w === "--output-log" || (gateSide && (w === "-R" || w === "--tests-regex"))) {
        i++
        continue
      }
      out.push(w)
    }
    return out
  }

  /**
   * Whether a command reproduces the failure: one of its segments runs a command of the failed gate (the
   * same program with every word of the gate's command, give or take parallelism and extra options such
   * as `-R test` or `--output-on-failure`), or runs a build/test/analysis program on a file or test the
   * failure names.
   */
  export function reproduces(command: string, failure: Failure, root?: string): boolean {
    const gate = failure.commands.flatMap((c) => segments(c)).map((s) => comparable(s, root, true))
    for (const segment of segments(command)) {
      const ws = comparable(segment, root)
      const p = program(ws)
      if (!p) continue
      const rest = new Set(p.rest)
      for (const g of gate) {
        const gp = program(g)
        if (!gp || basename(gp.name) !== p.name) continue
        if (Looks.isTool(gp.name) ? Looks.isOwnLook(gp.name, ws) : gp.rest.every((w) => rest.has(w))) return true
      }
      const runs = PROGRAMS[p.name] !== undefined || (p.invoked.includes("/") && /test/i.test(p.name) && !["test", "["].includes(p.name))
      if (runs && !trivial(p.name, p.rest)) {
        const named = failure.names.some((n) => {
          const base = basename(n)
          return p.rest.some((w) => w === n || w.endsWith("/" + n) || basename(w) === base || w === base) || basename(p.invoked) === base
        })
        if (named) return true
      }
    }
    return false
  }

  /**
   * A bash command as evidence: a build, test or analysis program, one of the project's configured
   * commands (`commands`: the toolchain's build/test/analysis lines), or a reader of a `*.log` file.
   * When the failure being repaired is known, only a command that reproduces it counts (`reproduces`).
   */
  export function fromBash(command: string, commands: readonly string[] = [], root?: string, failure?: Failure): Item | undefined {
    const whole = normalize(command)
    // A command that also changes files is an edit, not a look at the failure (`cmake --version; echo fixed > f`).
    if (writesFiles(command)) return undefined
    if (failure && (failure.commands.length > 0 || failure.names.length > 0)) {
      if (!reproduces(command, failure, root)) return undefined
      const p = segments(command).map((s) => program(words(s))).find((x) => x !== undefined)
      const kind: Kind = (p && PROGRAMS[p.name]) || (/test/i.test(whole) ? "test" : "build")
      return { kind, tool: "bash", detail: whole.slice(0, 300) }
    }
    for (const configured of commands) {
      const c = normalize(configured)
      if (c && (whole === c || whole.startsWith(c + " ") || segments(whole).some((s) => s === c || s.startsWith(c + " "))))
        return { kind: /test/i.test(c) ? "test" : /cppcheck|tidy|analy/i.test(c) ? "analysis" : "build", tool: "bash", detail: whole.slice(0, 300) }
    }
    for (const segment of segments(command)) {
      const p = program(words(segment))
      if (!p) continue
      const kind = PROGRAMS[p.name]
      if (kind && !trivial(p.name, p.rest)) return { kind, tool: "bash", detail: whole.slice(0, 300) }
      // A test binary the build produced, run by its path: ./build/tests/foo_test, build/bin/unit_tests —
      // not /usr/bin/test, `[`, or any program outside the worktree.
      if (p.invoked.includes("/") && /test/i.test(p.name) && !["test", "["].includes(p.name) && builtHere(p.invoked, root))
        return { kind: "test", tool: "bash", detail: whole.slice(0, 300) }
      if (READERS.has(p.name) && p.rest.some((w) => /\.log$/.test(w) || /(^|\/)Testing\/Temporary\//.test(w)))
        return { kind: "log", tool: "bash", detail: whole.slice(0, 300) }
    }
    return undefined
  }

  /** `cmake --version`, `g++ --help`, `cmake -E …`, a bare `cmake`: runs nothing of the project. */
  function trivial(name: string, rest: string[]): boolean {
    if (rest.some((w) => /^--?(version|help|h|V|usage)$/.test(w))) return true
    if (name === "cmake" && (rest.length === 0 || rest[0] === "-E" || rest[0] === "-P")) return true
    if (name === "ctest" && rest.some((w) => w === "-N" || w === "--show-only")) return true
    return false
  }

  /** A program run by a relative path, or by an absolute one inside the worktree: something the build made. */
  function builtHere(invoked: string, root: string | undefined): boolean {
    if (!isAbsolute(invoked)) return !invoked.startsWith("~")
    return root !== undefined && Paths.isInside(root, invoked)
  }

  /**
   * Whether a call that looked like evidence actually ran: a bash command that started (not "command
   * not found", not killed at its timeout) — a build or test may fail, that is the point, but a reader of a
   * log must succeed (a missing file shows nothing) — or a file tool that returned content.
   */
  export function ran(item: Item, result: { exit?: unknown; output?: unknown }): boolean {
    // A look that reached a verdict has an exit code (Looks.EXIT); one that could not judge (a missing tool) has none.
    if (Looks.isTool(item.tool)) return typeof result.exit === "number"
    if (item.tool !== "bash") return typeof result.output === "string" && !/^(Error|File not found)/.test(result.output)
    const exit = result.exit
    if (typeof exit !== "number") return false
    if (exit === 126 || exit === 127) return false
    if (item.kind === "log") return exit === 0
    return true
  }

  const EVIDENCE_PATH = new RegExp(`(^|/)${AirPaths.pattern(AirPaths.EVIDENCE)}(/|$)`)

  /** A path as a gate output or log: under an evidence directory, under `.air/local/evidence/`, or `*.log`. */
  export function isLogPath(path: string, evidenceDirs: readonly string[] = []): boolean {
    const p = path.split(sep).join("/")
    if (EVIDENCE_PATH.test(p)) return true
    if (/\.log$/i.test(p) || /(^|\/)Testing\/Temporary\/LastTest/.test(p)) return true
    return isAbsolute(path) && evidenceDirs.some((dir) => Paths.isInside(dir, path))
  }

  export type Context = {
    /** The task's gate evidence directories (for relative paths: the worktree is the base). */
    evidenceDirs?: readonly string[]
    /** The project's configured build/test/analysis commands. */
    commands?: readonly string[]
    /** Where relative paths are resolved from. */
    root?: string
    /** The failure being repaired: only a command that reproduces it is evidence. */
    failure?: Failure
  }

  /** What a call proves about the failure, or undefined when it proves nothing. */
  export function classify(tool: string, args: Record<string, unknown>, ctx: Context = {}): Item | undefined {
    if (tool === "bash") return typeof args.command === "string" ? fromBash(args.command, ctx.commands, ctx.root, ctx.failure) : undefined
    if (Looks.isTool(tool)) return fromLook(tool, args, ctx)
    const target = tool === "read" ? args.filePath : tool === "grep" || tool === "glob" || tool === "list" ? args.path : undefined
    if (typeof target !== "string" || target === "") return undefined
    const abs = ctx.root && !isAbsolute(target) ? resolve(ctx.root, target) : target
    if (isLogPath(abs, ctx.evidenceDirs)) return { kind: "log", tool, detail: target }
    return undefined
  }

  /**
   * A look at the program (air_capture, air_probe) as evidence: it ran the program and judged it, like a test. When
   * the failure being repaired is known, only a look that reproduces it counts (a capture says nothing of a failed build).
   */
  function fromLook(tool: Looks.Tool, args: Record<string, unknown>, ctx: Context): Item | undefined {
    const command = Looks.command(tool, args)
    if (ctx.failure && (ctx.failure.commands.length > 0 || ctx.failure.names.length > 0) && !reproduces(command, ctx.failure, ctx.root)) return undefined
    return { kind: "test", tool, detail: command }
  }

  /** The detail text of `classify` (the shape the first plugin draft records). */
  export function collected(tool: string, args: Record<string, unknown>, ctx: Context = {}): string | undefined {
    const item = classify(tool, args, ctx)
    return item ? `${item.kind}: ${item.detail}` : undefined
  }

  /**
   * A shell command that obviously changes files (redirect into a file, `sed -i`, `cp`, `mv`, `rm`,
   * `tee`, `patch`, `git apply|checkout|restore|reset`, …): for the debugger, an edit like any other.
   */
  export function writesFiles(command: string): boolean {
    const noDevices = command.replace(/\d*>>?\s*\/dev\/(null|stdout|stderr)\b/g, " ").replace(/\d*>&\d/g, " ")
    if (/(^|[^<>&0-9-])\d*>>?\s*[^\s&>]/.test(noDevices) || /&>>?\s*\S/.test(noDevices)) return true
    for (const segment of segments(command)) {
      const ws = words(segment)
      const p = program(ws)
      if (!p) continue
      if (WRITERS.includes(p.name)) return true
      if ((p.name === "sed" || p.name === "perl") && p.rest.some((w) => /^-[a-zA-Z]*i/.test(w))) return true
      if (p.name === "sort" && p.rest.some((w) => /^(-o|--output)/.test(w) || /^-[a-zA-Z]*o/.test(w))) return true
      if (p.name === "find" && p.rest.some((w, i) => ["-delete", "-fprint", "-fprintf", "-fls"].includes(w) || (/^-(exec|execdir|ok)$/.test(w) && WRITERS.includes(basename(p.rest[i + 1] ?? "")))))
        return true
      if ((p.name === "awk" || p.name === "gawk") && p.rest.some((w) => w === "inplace" || w === "-i")) return true
      if (p.name === "cmake" && p.rest[0] === "-E" && /^(copy|copy_if_different|copy_directory|rename|remove|rm|remove_directory|make_directory|touch|touch_nocreate|create_symlink|tar)/.test(p.rest[1] ?? ""))
        return true
      if (p.name === "git" && p.rest.some((w) => ["apply", "am", "checkout", "restore", "reset", "stash", "mv", "rm", "cherry-pick", "revert", "merge", "rebase"].includes(w)))
        return true
    }
    return false
  }

  /** Programs whose every run changes files. */
  const WRITERS = ["cp", "mv", "rm", "rmdir", "tee", "touch", "patch", "truncate", "dd", "install", "ln", "rsync", "unzip", "tar", "shred", "unlink"]

  /** The example build/test command for a refusal text. */
  export function example(commands: readonly string[] = []): string {
    return commands.find((c) => /test/i.test(c)) ?? commands[0] ?? "ctest --test-dir build --output-on-failure"
  }
}
