import { readFile } from "node:fs/promises"
import path from "node:path"

/**
 * cppcheck's command lines for the changed files. With the build's compile_commands.json, cppcheck reads the
 * project's own includes and defines (`--project`, restricted to the changed translation units with
 * `--file-filter`); changed headers, which are no translation unit, are checked with the includes and
 * defines the database uses. Without a database: `-I include -I src`, as before.
 */
export namespace CppcheckArgs {
  export interface Rules {
    args: string[]
    project?: string
  }

  export interface Where {
    worktree: string
    /** AirCoding's own arguments (enables, template, exit code), first on every line. */
    base: readonly string[]
    /** The changed files are C++ (so headers are read as C++). */
    cxx: boolean
    /** `-I` arguments for the database-less run. */
    includes: string[]
  }

  interface Entry {
    /** Relative to the worktree. */
    file: string
    args: string[]
  }

  export async function build(rules: Rules, files: readonly string[], where: Where): Promise<string[][]> {
    const language = where.cxx && !rules.args.some((a) => a.startsWith("--language")) ? ["--language=c++"] : []
    const asFiles = (list: readonly string[]) => list.map((file) => (file.startsWith("-") ? `./${file}` : file))
    const database = rules.project ? await readDatabase(path.resolve(where.worktree, rules.project), where.worktree) : undefined
    if (!database) return [[...where.base, ...language, ...where.includes, ...rules.args, ...asFiles(files)]]

    const units = new Set(database.map((entry) => entry.file))
    const changedUnits = files.filter((file) => units.has(file))
    const others = files.filter((file) => !units.has(file))
    const lines: string[][] = []
    if (changedUnits.length > 0) {
      lines.push([
        ...where.base,
        `--project=${path.resolve(where.worktree, rules.project!)}`,
        // Every unit (a whole-project baseline): no filter, and no command line as long as the project.
        // cppcheck keeps a unit's path relative to the database's directory when it lies under it, else absolute.
        ...(changedUnits.length === units.size ? [] : changedUnits).flatMap((file) => {
          const absolute = path.resolve(where.worktree, file)
          const fromDatabase = path.relative(path.dirname(path.resolve(where.worktree, rules.project!)), absolute)
          return [...new Set([absolute, fromDatabase.startsWith("..") ? absolute : fromDatabase])].map((f) => `--file-filter=${f}`)
        }),
        ...rules.args,
      ])
    }
    if (others.length > 0) {
      lines.push([...where.base, ...language, ...flagsOf(database, where.worktree), ...rules.args, ...asFiles(others)])
    }
    return lines
  }

  /** The entries of a compile_commands.json, or undefined when there is none (not built yet) or it is unreadable. */
  export async function readDatabase(file: string, worktree: string): Promise<Entry[] | undefined> {
    let json: unknown
    try {
      json = JSON.parse(await readFile(file, "utf8"))
    } catch {
      return undefined
    }
    if (!Array.isArray(json)) return undefined
    const entries: Entry[] = []
    for (const raw of json) {
      if (!raw || typeof raw !== "object") continue
      const item = raw as { directory?: unknown; file?: unknown; command?: unknown; arguments?: unknown }
      if (typeof item.file !== "string" || typeof item.directory !== "string") continue
      const absolute = path.resolve(item.directory, item.file)
      const args = Array.isArray(item.arguments)
        ? item.arguments.filter((a): a is string => typeof a === "string")
        : typeof item.command === "string"
          ? splitCommand(item.command)
          : []
      entries.push({ file: path.relative(worktree, absolute).split(path.sep).join("/"), args: absolutise(args, item.directory) })
    }
    return entries
  }

  /** The union of the include directories and defines the database uses, for files outside it (headers). */
  function flagsOf(database: Entry[], worktree: string): string[] {
    const seen = new Set<string>()
    const flags: string[] = []
    const add = (flag: string) => {
      if (seen.has(flag)) return
      seen.add(flag)
      flags.push(flag)
    }
    for (const entry of database) {
      for (let i = 0; i < entry.args.length; i++) {
        const arg = entry.args[i]!
        const pair = /^(-I|-isystem|-D|-U|-iquote)(.*)$/.exec(arg)
        if (!pair) continue
        const value = pair[2] || entry.args[++i] || ""
        if (value === "") continue
        const flag = pair[1] === "-D" ? "-D" : pair[1] === "-U" ? "-U" : "-I"
        const shown = flag === "-I" ? relativeIfInside(value, worktree) : value
        add(`${flag}${shown}`)
      }
    }
    return flags
  }

  function absolutise(args: string[], directory: string): string[] {
    return args.map((arg, i) => {
      const inline = /^(-I|-isystem|-iquote)(.+)$/.exec(arg)
      if (inline) return `${inline[1]}${path.resolve(directory, inline[2]!)}`
      if (i > 0 && /^(-I|-isystem|-iquote)$/.test(args[i - 1]!)) return path.resolve(directory, arg)
      return arg
    })
  }

  function relativeIfInside(dir: string, worktree: string): string {
    const relative = path.relative(worktree, dir)
    return relative === "" ? "." : relative.startsWith("..") || path.isAbsolute(relative) ? dir : relative
  }

  /** A compile command split into words (double and single quotes, backslash escapes). */
  export function splitCommand(command: string): string[] {
    const words: string[] = []
    let current = ""
    let quote: '"' | "'" | undefined
    let inWord = false
    for (let i = 0; i < command.length; i++) {
      const c = command[i]!
      if (quote) {
        if (c === quote) quote = undefined
        else if (c === "\\" && quote === '"' && i + 1 < command.length) current += command[++i]
        else current += c
      } else if (c === '"' || c === "'") {
        quote = c
        inWord = true
      } else if (c === "\\" && i + 1 < command.length) {
        current += command[++i]
        inWord = true
      } else if (/\s/.test(c)) {
        if (inWord) words.push(current)
        current = ""
        inWord = false
      } else {
        current += c
        inWord = true
      }
    }
    if (inWord) words.push(current)
    return words
  }
}
