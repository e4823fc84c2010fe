import { existsSync } from "node:fs"
import { Strict } from "../scheduler/core/strict"
import { Args } from "./args"
import { Help } from "./help"
import { LaunchError, UsageError, Ui } from "./ui"

type Command = (argv: string[]) => Promise<number>

const { parse } = Args
const print = (text: string) => Args.print(Help.say(text))

const commands: Record<(typeof Args.COMMANDS)[number], Command> = {
  async status(argv) {
    const { statusCommand } = await import("./status")
    return statusCommand(argv)
  },
  knowledge: async (argv) => (await import("./knowledge")).knowledgeCommand(argv),
  async events(argv) {
    const { eventsCommand } = await import("./events")
    return eventsCommand(argv)
  },
  async dashboard(argv) {
    const { dashboardCommand } = await import("../dashboard/command")
    return dashboardCommand(argv)
  },
  metrics: async (argv) => (await import("./metrics")).metricsCommand(argv),
  traces: async (argv) => (await import("./traces")).tracesCommand(argv),
  async run(argv) {
    const { values, positionals } = parse("run", argv, {
      yes: { type: "boolean" },
      json: { type: "boolean" },
      scripted: { type: "string" },
      resume: { type: "boolean" },
      new: { type: "boolean" },
      "init-git": { type: "boolean" },
      answer: { type: "string" },
      "exit-on-question": { type: "boolean" },
    } as const)
    if (values.help) return print(Help.run)
    const { run } = await import("./run")
    return run(positionals[0], {
      yes: Boolean(values.yes),
      json: Boolean(values.json),
      scripted: values.scripted as string | undefined,
      resume: Boolean(values.resume),
      fresh: Boolean(values.new),
      initGit: Boolean(values["init-git"]),
      answer: values.answer as string | undefined,
      exitOnQuestion: Boolean(values["exit-on-question"]),
    })
  },
  async doctor(argv) {
    const { values, positionals } = parse("doctor", argv, { json: { type: "boolean" } } as const)
    if (values.help) return print(Help.doctor)
    const { doctor } = await import("./doctor")
    return doctor(positionals[0], { json: Boolean(values.json) })
  },
  async init(argv) {
    const { values, positionals } = parse("init", argv, {
      json: { type: "boolean" },
      "from-build": { type: "string" },
      jobs: { type: "string" },
      "no-baseline": { type: "boolean" },
      redetect: { type: "boolean" },
    } as const)
    if (values.help) return print(Help.init)
    const jobs = values.jobs === undefined ? undefined : Number.parseInt(values.jobs as string, 10)
    if (jobs !== undefined && !(jobs > 0)) throw new UsageError(`--jobs must be a positive whole number, got ${values.jobs}`, "init")
    const { initCommand } = await import("./init")
    return initCommand(positionals[0], {
      json: Boolean(values.json),
      noBaseline: Boolean(values["no-baseline"]),
      redetect: Boolean(values.redetect),
      ...(values["from-build"] ? { fromBuild: values["from-build"] as string } : {}),
      ...(jobs ? { jobs } : {}),
    })
  },
  async demo(argv) {
    const { values } = parse("demo", argv, { json: { type: "boolean" }, keep: { type: "boolean" }, dir: { type: "string" } } as const, 0)
    if (values.help) return print(Help.demo)
    const { demo } = await import("./demo")
    return demo({ json: Boolean(values.json), keep: Boolean(values.keep), dir: values.dir as string | undefined })
  },
}

export const COMMANDS: readonly string[] = Args.COMMANDS

/** Tagged errors of the Scheduler (a held lock, bad rules): their message is the whole story, no stack. */
function isTagged(err: unknown): err is Error {
  return err instanceof Error && (typeof (err as { _tag?: unknown })._tag === "string" || typeof (err as { tag?: unknown }).tag === "string")
}

export async function main(argv: string[]): Promise<number> {
  try {
    const [first, ...rest] = argv
    if (first && Object.hasOwn(commands, first)) return await commands[first as keyof typeof commands](rest)
    const { values, positionals } = parse(undefined, argv, { scripted: { type: "string" } } as const)
    if (values.help) return print(Help.main)
    // A word that is no directory here and not close to a command (that was said by parse): not a project.
    const word = positionals[0]
    if (word !== undefined && !existsSync(word) && !/[/\\.]/.test(word) && !Strict.nearest(word, COMMANDS))
      throw new UsageError(`'${word}' is neither a command nor a directory`)
    const { tui } = await import("./tui")
    return await tui(word, { scripted: values.scripted as string | undefined })
  } catch (err) {
    if (err instanceof UsageError) return Args.report(err)
    if (err instanceof LaunchError || isTagged(err)) {
      process.stderr.write(Ui.red("aircoding: ") + (err as Error).message + "\n")
      return 1
    }
    process.stderr.write(Ui.red("aircoding: unexpected error: ") + ((err as Error).stack ?? String(err)) + "\n")
    return 1
  }
}
