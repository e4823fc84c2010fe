import { spawn } from "node:child_process"
import { LaunchConfig, Paths } from "../engine"
import { Launch } from "./launch"

/** Opens the OpenCode TUI with AirCoding loaded; returns the engine's exit code. */
export async function tui(dirArg: string | undefined, opts: { scripted?: string }): Promise<number> {
  const dir = Launch.projectDir(dirArg)
  const prepared = await Launch.prepare(dir, { scripted: opts.scripted })
  try {
    const child = spawn(Paths.opencodeBinary(), [dir], {
      cwd: dir,
      env: { ...prepared.env, ...LaunchConfig.tuiEnvironment(prepared.env), PWD: dir, AIRCODING_RESUME_ON_START: "1", AIRCODING_INTERACTIVE: "1" },
      stdio: "inherit",
    })
    const code = await new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? 1)))
    // OpenCode's own exit lines ("Continue opencode -s …") are printed by its binary and cannot be
    // changed; this line names the command that reopens AirCoding (a run in progress resumes).
    process.stdout.write(`  AirCoding ${Launch.command()} ${dir}   (reopens AirCoding; a run in progress resumes)
`)
    return code
  } finally {
    await prepared.close()
  }
}
