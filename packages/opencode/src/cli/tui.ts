import { LaunchConfig, Paths } from "../engine"
import { Args } from "./args"
import { Proc } from "../scheduler/runtime/process"
import { Launch } from "./launch"
import { LaunchError, Ui } from "./ui"
import { Notifier } from "../scheduler/runtime/notify/notifier"
import { TraceExport } from "../scheduler/runtime/trace/exporter"
import { resolveLang, t } from "../text/words"
import { CommandLine } from "./command-line"

/**
 * What follows the engine's exit screen. The pinned engine prints its own block when the TUI closes on a
 * session ("Session <title>" / "Continue  opencode -s <id>", written by its binary after the renderer
 * stops; no flag or config turns it off). That `opencode -s` would start without AirCoding, so the line
 * right under it says how to reopen AirCoding as it was opened, --scripted included.
 */
function exitLine(dir: string, scripted: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return `  ${Ui.dim("AirCoding".padEnd(10))}${Ui.bold(CommandLine.reopen(dir, scripted, env))}   ${t(resolveLang(dir, undefined, env), "tui.exit.reopen")}\n`
}

/** Opens the OpenCode TUI with AirCoding loaded; returns the engine's exit code. */
export async function tui(dirArg: string | undefined, opts: { scripted?: string }): Promise<number> {
  const dir = Args.projectDir(dirArg)
  const prepared = await Launch.prepare(dir, { scripted: opts.scripted })
  const notifier = Notifier.start(dir, { interactive: true, resumeCommand: CommandLine.reopen(dir, opts.scripted) })
  try {
    const engine = await Proc.run(Paths.opencodeBinary(), [dir], {
      cwd: dir,
      env: { ...prepared.env, ...LaunchConfig.tuiEnvironment(prepared.env), PWD: dir, AIRCODING_RESUME_ON_START: "1", AIRCODING_INTERACTIVE: "1", AIRCODING_RESUME_COMMAND: CommandLine.reopen(dir, opts.scripted) },
      terminal: true,
    })
    if (engine.spawnError) throw new LaunchError(`the OpenCode engine ${Paths.opencodeBinary()} could not start (${engine.spawnError}); \`aircoding doctor\` checks the install`)
    process.stdout.write(exitLine(dir, opts.scripted))
    return engine.code ?? 1
  } finally {
    await prepared.close()
    await notifier?.close()
    const traceNote = await TraceExport.afterRun(dir)
    if (traceNote) process.stderr.write(`aircoding: ${traceNote}\n`)
  }
}
