import { parseArgs } from "node:util"
import { Help } from "./help"
import { LaunchError } from "./launch"
import { UsageError, Ui } from "./ui"

type Command = (argv: string[]) => Promise<number>

type Options = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>["options"]>

/** parseArgs with --help on every command and usage errors that name the problem. */
function parse<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options: { help: { type: "boolean", short: "h" }, ...options } as O & { help: { type: "boolean"; short: "h" } }, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

const commands: Record<string, Command> = {
  async status(argv) {
    const { statusCommand } = await import("./status")
    return statusCommand(argv)
  },
  async events(argv) {
    const { eventsCommand } = await import("./events")
    return eventsCommand(argv)
  },
  async dashboard(argv) {
    const { dashboardCommand } = await import("../dashboard/command")
    return dashboardCommand(argv)
  },
  async run(argv) {
    const { values, positionals } = parse(argv, {
      yes: { type: "boolean" },
      json: { type: "boolean" },
      scripted: { type: "string" },
      resume: { type: "boolean" },
      answer: { type: "string" },
    } as const)
    if (values.help) return print(Help.run)
    const { run } = await import("./run")
    return run(positionals[0], {
      yes: Boolean(values.yes),
      json: Boolean(values.json),
      scripted: values.scripted as string | undefined,
      resume: Boolean(values.resume),
      answer: values.answer as string | undefined,
    })
  },
  async doctor(argv) {
    const { values, positionals } = parse(argv, { json: { type: "boolean" } } as const)
    if (values.help) return print(Help.doctor)
    const { doctor } = await import("./doctor")
    return doctor(positionals[0], { json: Boolean(values.json) })
  },
  async demo(argv) {
    const { values } = parse(argv, { json: { type: "boolean" }, keep: { type: "boolean" }, dir: { type: "string" } } as const)
    if (values.help) return print(Help.demo)
    const { demo } = await import("./demo")
    return demo({ json: Boolean(values.json), keep: Boolean(values.keep), dir: values.dir as string | undefined })
  },
}

function print(text: string): number {
  process.stdout.write(text)
  return 0
}

export async function main(argv: string[]): Promise<number> {
  try {
    const [first, ...rest] = argv
    if (first && commands[first]) return await commands[first](rest)
    const { values, positionals } = parse(argv, { scripted: { type: "string" } } as const)
    if (values.help) return print(Help.main)
    if (positionals.length > 1) throw new UsageError(`unknown command "${positionals[0]}"`)
    const { tui } = await import("./tui")
    return await tui(positionals[0], { scripted: values.scripted as string | undefined })
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(Ui.red("aircoding: ") + err.message + "\n" + "Run `aircoding --help` for usage.\n")
      return 2
    }
    if (err instanceof LaunchError) {
      process.stderr.write(Ui.red("aircoding: ") + err.message + "\n")
      return 1
    }
    process.stderr.write(Ui.red("aircoding: unexpected error: ") + ((err as Error).stack ?? String(err)) + "\n")
    return 1
  }
}
