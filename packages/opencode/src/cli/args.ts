import { existsSync, statSync } from "node:fs"
import { resolve } from "node:path"
import { parseArgs } from "node:util"
import { Strict } from "../scheduler/core/strict"
import { UsageError, Ui } from "./ui"
import { CommandLine } from "./command-line"

/**
 * The one argument parser and the one usage-error policy of every `aircoding` command (issue 23 item 5,
 * issue 24 item 2): strict flags, `-h/--help` everywhere, an unknown flag said in one line with the
 * nearest known flag (never Node's parser text), a mistyped command caught in any position with "did you
 * mean …?", and every usage error printed the same way with the same exit code, USAGE_EXIT.
 */
export namespace Args {
  /**
   * 1, as for any other error: 2 means "the run waits for you" (CI reads it as "answer and resume"), and a
   * typo on the command line must never look like a run waiting for an answer.
   */
  export const USAGE_EXIT = 1

  /** Every subcommand, for "did you mean …?" (kept here so the parser needs no import of the table). */
  export const COMMANDS = ["run", "demo", "init", "doctor", "status", "events", "dashboard", "metrics", "traces", "knowledge"] as const

  type Options = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>["options"]>

  export function parse<O extends Options>(command: string | undefined, argv: string[], options: O, maxPositionals = 1) {
    const all = { help: { type: "boolean", short: "h" }, ...options } as O & { help: { type: "boolean"; short: "h" } }
    const parsed = (() => {
      try {
        return parseArgs({ args: argv, options: all, allowPositionals: true, strict: true })
      } catch (err) {
        // A mistyped command says more than the flag that followed it (`aircoding evnets . --json`).
        const typo = argv.filter((word) => !word.startsWith("-")).map(mistypedCommand).find(Boolean)
        throw typo ? new UsageError(typo, command) : usageOf(err, command, Object.keys(all))
      }
    })()
    if ((parsed.values as { help?: boolean }).help) return parsed
    for (const word of parsed.positionals) {
      const typo = mistypedCommand(word)
      if (typo) throw new UsageError(typo, command)
    }
    if (parsed.positionals.length > maxPositionals)
      throw new UsageError(
        maxPositionals === 0 ? `unexpected argument '${parsed.positionals[0]}': this command takes no directory` : `unexpected argument '${parsed.positionals[maxPositionals]}': expected at most one directory`,
        command,
      )
    return parsed
  }

  /**
   * A word that is no file or directory here but is close to a command is a mistyped command, wherever it
   * stands (`aircoding staus .`, `aircoding run . stauts`): said as such, not as a missing directory.
   */
  export function mistypedCommand(word: string): string | undefined {
    if (existsSync(word) || (COMMANDS as readonly string[]).includes(word)) return undefined
    const near = Strict.nearest(word, COMMANDS)
    return near ? `unknown command '${word}'; did you mean ${near}?` : undefined
  }

  /** node's parseArgs error, said in one line with the nearest flag. */
  function usageOf(err: unknown, command: string | undefined, flags: string[]): UsageError {
    const message = (err as Error).message.split("\n")[0]!
    const unknown = /Unknown option '(--?[^']+)'/.exec(message)?.[1]
    if (unknown) {
      const near = Strict.nearest(unknown.replace(/^-+/, ""), flags)
      return new UsageError(`unknown option ${unknown}${near ? `; did you mean --${near}?` : ""}`, command)
    }
    const missing = /Option '(?:-\w, )?(--[\w-]+)(?: <value>)?' argument missing/.exec(message)?.[1]
    if (missing) return new UsageError(`${missing} needs a value`, command)
    const needless = /Option '(?:-\w, )?(--[\w-]+)' does not take an argument/.exec(message)?.[1]
    if (needless) return new UsageError(`${needless} takes no value`, command)
    // Anything else node says: its first sentence, without quotes that would look unbalanced.
    return new UsageError(message.replace(/\. To specify a positional argument.*$/, "").replace(/'/g, ""), command)
  }

  /** The project directory of a command; a missing path or a file is a usage error. */
  export function projectDir(arg: string | undefined, command?: string): string {
    const dir = resolve(arg ?? ".")
    if (!existsSync(dir)) throw new UsageError(`directory not found: ${dir}`, command)
    if (!statSync(dir).isDirectory()) throw new UsageError(`not a directory: ${dir}`, command)
    return dir
  }

  /** How the help of `command` is asked for, with the command that works in this shell. */
  export function helpHint(command?: string, env: NodeJS.ProcessEnv = process.env): string {
    return `${CommandLine.name(env)}${command ? ` ${command}` : ""} --help`
  }

  /** The one way a usage error reaches the person: one line, the help hint, USAGE_EXIT. */
  export function report(err: UsageError, env: NodeJS.ProcessEnv = process.env): number {
    process.stderr.write(Ui.red("aircoding: ") + err.message + "\n" + `Run \`${helpHint(err.command, env)}\` for usage.\n`)
    return USAGE_EXIT
  }

  /** Runs one command's body; a usage error it throws is reported by the one policy. */
  export async function guard(body: () => Promise<number>): Promise<number> {
    try {
      return await body()
    } catch (err) {
      if (err instanceof UsageError) return report(err)
      throw err
    }
  }

  /** Prints a help text and returns 0. */
  export function print(text: string): number {
    process.stdout.write(text)
    return 0
  }
}
