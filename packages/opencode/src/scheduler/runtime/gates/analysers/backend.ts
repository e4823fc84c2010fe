import type { Finding } from "../schema.ts"

/**
 * An analyser of a language beyond C++ (Python, TypeScript…): the one shape each backend file implements, so
 * the gate around it (`backend-gate.ts`) runs it on the changed files, judges its findings against the task's
 * base exactly as cppcheck and clang-tidy are (BaseFindings, Fingerprint), records a pass in the results store
 * under its own key, and says so by its tool's name. A backend does no I/O itself: it says which files are its
 * own, where its project root is, what to run, and how to read what the tool printed.
 */
export interface AnalyserBackend<Tool extends string = string> {
  /** The tool's name: the gate's id, the findings' `tool`, its key in toolchain.json `analysis.backends`. */
  readonly tool: Tool
  /** The language it reads, for people ("Python", "TypeScript"). */
  readonly language: string
  /** The executable run when toolchain.json names none. */
  readonly binary: string
  /** Other names of it, tried in order when `binary` is not on PATH (Debian's go-staticcheck). */
  readonly aliases?: readonly string[]
  /** How to install it, for the evidence and doctor (Debian's package, npm). */
  readonly install: string
  /** Whether a changed file (relative to the worktree) is one this tool reads. */
  owns(file: string): boolean
  /**
   * The files whose presence makes a directory the tool's project root (pyproject.toml, tsconfig.json): the tool
   * runs there, on the changed files below it, so it reads the project's own configuration. None found up to the
   * worktree: the worktree's root, unless `needsRoot` (tsc without a tsconfig has no project to check).
   */
  readonly rootMarkers: readonly string[]
  readonly needsRoot?: boolean
  /** The tool checks its whole project whatever files it is given (tsc): the gate keeps the findings in the changed files. */
  readonly checksProject?: boolean
  /** The project's own copy, looked for in the root and the directories above it (node_modules/.bin/tsc). */
  readonly localBinary?: string
  /** The arguments for `files` (relative to `root`); `extra` from toolchain.json come last. */
  args(files: readonly string[], extra: readonly string[]): string[]
  /**
   * What the tool printed, read: findings with paths relative to the root it ran in. `root` is that directory,
   * absolute, for a tool that names files absolutely (go vet -json).
   */
  parse(output: string, exit: number | null, root: string): Parsed
  /** How to ask its version when `--version` is not it (`go version`, `cargo clippy --version`): the results key, doctor. */
  readonly versionArgs?: readonly string[]
  /**
   * Environment the tool needs beyond the gate's, for a run in `root` (absolute): caches outside the worktree,
   * offline switches. Only variables `env` does not already set, so a person's own settings win.
   */
  env?(root: string, env: NodeJS.ProcessEnv): Record<string, string>
  /** Files the tool writes in its root (Cargo.lock): removed after the run when the run made them, so the task's diff stays its own. */
  readonly scratch?: readonly string[]
}

export interface Parsed {
  findings: Finding[]
  /**
   * Lines the parser did not understand. With findings and a failing exit, they are noise around them (a
   * summary); with a failing exit and no finding they are the whole verdict: said, never read as "no findings".
   */
  unread: string[]
  /**
   * The tool prints nothing but what the parser reads (go vet -json, cargo's JSON): an unread line, with no
   * finding, is no verdict whatever the exit code (a clean exit with output nobody read is never a pass).
   */
  unreadFails?: boolean
  /** The project's configuration is wrong (a tsconfig or pyproject that does not parse): no verdict on the code. */
  configProblem?: string
  /** The tool says it crashed or was used wrong (its own exit code for that): no verdict. */
  crashed?: string
}

/** The lines of `output` that are not empty. */
/** A tool's JSON record, or `undefined` for a line (or block) that is not JSON: the caller counts it unread. */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export function lines(output: string): string[] {
  return output.split(/\r?\n/).filter((line) => line.trim().length > 0)
}

/** The variables of `wanted` that `env` does not set: a backend's defaults never override a person's own. */
export function unsetIn(env: NodeJS.ProcessEnv, wanted: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(wanted).filter(([key]) => env[key] === undefined || env[key] === ""))
}
