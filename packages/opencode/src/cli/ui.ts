/** Terminal output helpers: plain text when not a TTY, so logs and CI stay readable. */
export namespace Ui {
  const tty = process.stdout.isTTY && !process.env.NO_COLOR
  const paint = (code: number) => (s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s)
  export const green = paint(32)
  export const red = paint(31)
  export const yellow = paint(33)
  export const dim = paint(2)
  export const bold = paint(1)

  export function step(text: string) {
    process.stderr.write(dim(`· ${text}`) + "\n")
  }
  export function fail(text: string): never {
    process.stderr.write(red("aircoding: ") + text + "\n")
    process.exit(1)
  }
}

/** A user mistake on the command line: printed with the usage hint (of `command` when given), exit code 1. */
export class UsageError extends Error {
  override readonly name = "UsageError"
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message)
  }
}

/** A command could not start what it needs (the engine, its config, a model): said in one line, exit 1. */
export class LaunchError extends Error {
  override readonly name = "LaunchError"
}
