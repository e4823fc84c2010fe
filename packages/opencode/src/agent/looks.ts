/**
 * A worker's look at its task's program (issue 37, item 4): `air_capture` runs a ui task's window capture and
 * `air_probe` a service task's probe on the worker's worktree, the same check the ui-capture and service-probe
 * gates run. This is the one place that says how a look counts for the Debugger: the gate whose failure it
 * reproduces (`Evidence.failureOf` names the look as that failure's command), how it is written in the record of
 * the session's steps (debug-steps.ts), and its exit code there, the way a bash command has one: 0 for a look that
 * passed, non-zero for one that showed the failure. A look at something else than the task's own program (the
 * tool's optional arguments) is recorded with what it looked at, and reproduces nothing.
 */
export namespace Looks {
  export const TOOLS = {
    air_capture: { gate: "ui-capture", field: "ui" },
    air_probe: { gate: "service-probe", field: "service" },
  } as const
  export type Tool = keyof typeof TOOLS

  /** The exit code of a look that judged: passed, the program failed its checks, the build failed (no look). */
  export const EXIT = { passed: 0, failed: 1, buildFailed: 2 } as const

  export function isTool(tool: string): tool is Tool {
    return Object.hasOwn(TOOLS, tool)
  }

  /** The look that reproduces a failure of `gate`, if it has one. */
  export function ofGate(gate: string | undefined): Tool | undefined {
    return (Object.keys(TOOLS) as Tool[]).find((tool) => TOOLS[tool].gate === gate)
  }

  /** The look of a task kind (`ui` → air_capture, `service` → air_probe), if it has one. */
  export function ofKind(kind: string): Tool | undefined {
    return (Object.keys(TOOLS) as Tool[]).find((tool) => TOOLS[tool].field === kind)
  }

  /** The arguments that point a look at something else than the task's own program. */
  const OVERRIDES = ["command", "args", "input"] as const

  /**
   * A look as a command line of the Debugger's record: the tool's name for the task's own program, else the name
   * followed by what it looked at (`air_capture --command build/demo --args --big`).
   */
  export function command(tool: Tool, args: Record<string, unknown>): string {
    const words: string[] = [tool]
    for (const key of OVERRIDES) {
      const value = args[key]
      if (value === undefined) continue
      // A word with spaces or newlines (an input line) is quoted, so the line stays one command.
      const word = (v: unknown) => (typeof v === "string" && v !== "" && !/\s/.test(v) ? v : JSON.stringify(v))
      words.push(`--${key}`, ...(Array.isArray(value) ? value.map(word) : [word(value)]))
    }
    return words.join(" ")
  }

  /**
   * Whether `words` (a recorded command split into words) is the look of the task's own program named `tool`: the
   * bare name, never a look at something else (its arguments would make any other program "reproduce" the failure).
   */
  export function isOwnLook(tool: string, words: readonly string[]): boolean {
    return isTool(tool) && words.length === 1 && words[0] === tool
  }
}
