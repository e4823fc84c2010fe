import type { TestRun } from "./schema.ts"

/**
 * One test runner: how a test command is recognised as its, how it is asked for results a program can read,
 * how those are read into the one `TestRun.Result`. Each runner is one file in this folder, listed in
 * `index.ts`; CTest stays the test gate's own (JUnit file, its summary, test selection).
 */
export interface TestRunner {
  readonly framework: TestRun.Framework
  /** The command (after an optional leading `cd <dir> &&`) runs this runner. */
  matches(command: string): boolean
  /**
   * The command asking for machine-readable results in `report` (the runner's own option), or the same command
   * when the runner's output is what is read; undefined when the command already chose its own reporter (it is
   * then run and judged as any other command, its JUnit file read through toolchain.json `junit`).
   */
  instrument(command: string, report: string): string | undefined
  /** Reads one run: the report file's text (undefined when none was written), the output, the exit code. */
  read(run: Run): TestRun.Read
  /**
   * Variables the runner needs in the sandbox, set only where the user's environment leaves them unset (go's
   * build cache in AirCoding's own writable cache dir: HOME is read-only there).
   */
  env?(base: NodeJS.ProcessEnv): Record<string, string>
  /** The exit code the runner gives when it found no test (pytest's 5): with no test read, "ran no test". */
  readonly noTestsCode?: number
}

export interface Run {
  output: string
  code: number | null
  report: string | undefined
  /** The worktree: paths in a report are made relative to it, so names match across worktrees. */
  cwd: string
}

/**
 * A test command split into its `cd <dir> && ` prefix and the command proper (its variable assignments left out); undefined for any other shell
 * list or pipe (the runner is not known, the command is run and judged as it is).
 */
export function splitCommand(command: string): { prefix: string; rest: string } | undefined {
  const m = /^\s*((?:cd\s+[^\s;&|]+\s*&&\s*)?)([\s\S]*?)\s*$/.exec(command)
  if (!m) return undefined
  // Leading variable assignments (GOCACHE=… go test) belong to the command, not to the runner's name.
  if (/[;&|<>`]|\$\(/.test(m[2]!)) return undefined
  const rest = m[2]!.replace(/^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+/, "")
  return { prefix: m[1]!, rest }
}

export function shellQuote(file: string): string {
  return `'${file.replace(/'/g, `'\\''`)}'`
}

/** A runner that printed nothing, wrote no report and exited 0 ran no test: an empty result, never a pass. */
export function silent(run: Run): boolean {
  return run.code === 0 && run.output.trim() === "" && (run.report === undefined || run.report.trim() === "")
}
