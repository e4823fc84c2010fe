import { resolve } from "node:path"

/**
 * The command lines AirCoding prints for the user to type: its own name as the user started it, and the commands
 * that reopen or resume a run. Apart from the launcher on purpose: usage errors and --help name the command, and
 * must answer before the engine's, the roles' and the scripted model's modules are loaded (a second and more).
 */
export namespace CommandLine {
  /**
   * How the user starts AirCoding, so every hint names a command that works as typed: `./start.sh` (or the
   * path it was run by) sets AIRCODING_COMMAND; the `aircoding` shim on PATH (`eval "$(./start.sh env)"`)
   * sets it to `aircoding`; run by bun directly, `aircoding`.
   */
  export function name(env: NodeJS.ProcessEnv = process.env): string {
    return env.AIRCODING_COMMAND || "aircoding"
  }

  /** A word as the shell reads it back: quoted only when it must be. */
  export function shellWord(word: string): string {
    return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
  }

  /** The command that reopens AirCoding on `dir` as it was opened (with its --scripted scenario). */
  export function reopen(dir: string, scripted: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
    return [name(env), dir, ...(scripted ? ["--scripted", resolve(scripted)] : [])].map(shellWord).join(" ")
  }

  /**
   * The command that resumes a headless run in `dir` as it was started (its --scripted scenario, its --yes):
   * the engine records it with the run (AIRCODING_RESUME_COMMAND → the store's lock), and `aircoding status`
   * prints it for a run whose process is gone.
   */
  export function resume(dir: string, opts: { scripted?: string; yes?: boolean; exitOnQuestion?: boolean } = {}, env: NodeJS.ProcessEnv = process.env): string {
    const flags = [...(opts.yes ? ["--yes"] : []), ...(opts.exitOnQuestion ? ["--exit-on-question"] : []), ...(opts.scripted ? ["--scripted", resolve(opts.scripted)] : [])]
    return [name(env), "run", dir, "--resume", ...flags].map(shellWord).join(" ")
  }
}
