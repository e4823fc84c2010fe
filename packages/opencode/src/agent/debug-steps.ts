import type { DebugReport } from "../scheduler/core/report.schema"
import { Evidence } from "./evidence"
import { Looks } from "./looks"
import { Roles } from "./roles"

/**
 * The Debugger's workflow in steps the code knows. The guard records every command a Debugger session runs
 * (with its exit code) and every edit, in order; `check` holds the report against that record:
 * reproduced (a command that ran, failed, before the first edit, and reproduces the gate's failure) or not
 * reproducible (every command tried ran, nothing edited); root cause at a file and line; a fix (an edit
 * was made); verified (the failing command, or one that reproduces the failure, run green after the last
 * edit). A report that misses a step, or has them out of order, is refused with the step named. A look at the
 * program (air_capture, air_probe: looks.ts) is recorded as a command too, with the exit code of its verdict.
 */
export namespace DebugSteps {
  export type Step =
    /** `tool`: the look that ran it (air_capture, air_probe); absent for a bash command. */
    | { kind: "command"; seq: number; command: string; exit: number | null; at: string; tool?: Looks.Tool }
    | { kind: "edit"; seq: number; tool: string; at: string }

  const logs = new Map<string, Step[]>()
  const started = new Map<string, { sessionID: string; tool: string; command?: string }>()
  let seq = 0

  /** Before a Debugger's call runs (`Guard.before`): what it is, before any rewriting (the sandbox's). */
  export function begin(key: string, sessionID: string, tool: string, args: Record<string, unknown>): void {
    const command = Looks.isTool(tool) ? Looks.command(tool, args) : args.command
    started.set(key, { sessionID, tool, ...(typeof command === "string" ? { command } : {}) })
  }

  /** After it ran (`Guard.after`): a command with its exit code, or an edit. */
  export function end(key: string, metadata: Record<string, unknown>): void {
    const call = started.get(key)
    if (!call) return
    started.delete(key)
    const at = new Date().toISOString()
    const exit = typeof metadata.exit === "number" ? metadata.exit : null
    if (Looks.isTool(call.tool) && call.command !== undefined) {
      // A look that could not judge (a missing tool, no display, stopped) has no exit code: it showed nothing.
      if (exit !== null) record(call.sessionID, { kind: "command", seq: ++seq, command: call.command, exit, at, tool: call.tool })
    } else if (call.tool === "bash" && call.command !== undefined) {
      record(call.sessionID, { kind: "command", seq: ++seq, command: call.command, exit, at })
      if (Evidence.writesFiles(call.command)) record(call.sessionID, { kind: "edit", seq: ++seq, tool: "bash", at })
    } else if (Roles.isWriteTool(call.tool)) record(call.sessionID, { kind: "edit", seq: ++seq, tool: call.tool, at })
  }

  export function record(sessionID: string, step: Step): void {
    const log = logs.get(sessionID) ?? []
    log.push(step)
    logs.set(sessionID, log)
  }

  export function of(sessionID: string): readonly Step[] {
    return logs.get(sessionID) ?? []
  }

  export function forget(sessionID: string): void {
    logs.delete(sessionID)
  }

  /** The next sequence number (tests build logs with it). */
  export function next(): number {
    return ++seq
  }

  const norm = (command: string) => command.trim().replace(/\s+/g, " ")

  /**
   * The last run of `command` in the log (the same text, or a command it is one segment of). A look is found only
   * among the looks (a bash command named `air_capture` is not one), a bash command only among bash commands.
   */
  function lastRun(steps: readonly Step[], command: string): Extract<Step, { kind: "command" }> | undefined {
    const want = norm(command)
    const look = want.split(" ")[0] ?? ""
    const runs = steps.filter((s): s is Extract<Step, { kind: "command" }> => s.kind === "command" && (Looks.isTool(look) ? s.tool === look : s.tool === undefined))
    return runs.reverse().find((s) => norm(s.command) === want || norm(s.command).split(/\s*(?:&&|\|\||;)\s*/).includes(want))
  }

  export type Verdict = { ok: true; route: "gates" | "architect" } | { ok: false; step: string; message: string }

  const refuse = (step: string, message: string): Verdict => ({ ok: false, step, message })

  /**
   * The report against the session's record. `failure` is the gates' failure being repaired (when known):
   * the reproduction and the verification must be commands that reproduce it.
   */
  export function check(report: DebugReport | undefined, steps: readonly Step[], failure?: Evidence.Failure, root?: string): Verdict {
    const edits = steps.filter((s) => s.kind === "edit")
    // Every Debugger report that asks for the gates carries its steps, whether or not it edited: a report
    // without them would send the gates a repair nobody reproduced or verified. (`blocked` and `planIssue`
    // are not repairs; they go to the Architect and are not checked here.)
    if (!report)
      return refuse(
        "steps",
        "a Debugger's report carries its steps: `debug` with the symptom, the reproduction (command and output) or `notReproducible` with what you tried, the root cause (file and line), the fix and the verification (the failing command run again after your last edit); or `blocked` with the reason if you cannot go on",
      )
    if (report.reproduction && report.notReproducible) return refuse("reproduction", "say either `reproduction` or `notReproducible`, not both")
    if (report.notReproducible) {
      const missing = report.notReproducible.tried.filter((c) => !lastRun(steps, c))
      if (missing.length > 0) return refuse("notReproducible", `these commands did not run in this session: ${missing.map((c) => `\`${c}\``).join(", ")}; list only what you ran`)
      if (edits.length > 0)
        return refuse("notReproducible", "a failure you could not reproduce gets no fix: undo your edits (git checkout -- <file>) and report again; the Architect or the user decides what happens next")
      return { ok: true, route: "architect" }
    }
    const repro = report.reproduction
    if (!repro) return refuse("reproduction", "the reproduction is missing: run the failing command before any edit and give it with its output, or report `notReproducible` with what you tried")
    const reproRun = lastRunBefore(steps, repro.command, edits[0]?.seq)
    if (!reproRun) {
      const ranLater = lastRun(steps, repro.command)
      return refuse(
        "reproduction",
        ranLater ? `\`${repro.command}\` ran only after your first edit: a reproduction shows the failure before anything changed` : `\`${repro.command}\` did not run in this session: run it yourself, then report`,
      )
    }
    if (reproRun.exit === 0) return refuse("reproduction", `\`${repro.command}\` passed (exit 0) when you ran it: it did not show the failure`)
    if (failure && (failure.commands.length > 0 || failure.names.length > 0) && !Evidence.reproduces(repro.command, failure, root))
      return refuse("reproduction", `\`${repro.command}\` is not the failing command: run the gate's command (${failure.commands[0] ? `\`${failure.commands[0]}\`` : failure.names.join(", ")}) or one on what it names`)
    if (!report.rootCause) return refuse("rootCause", "the root cause is missing: the file and line that make the failure, and why")
    if (!report.fix || edits.length === 0) return refuse("fix", report.fix ? "the report names a fix, but this session changed no file" : "the fix is missing: what you changed and why it removes the cause")
    const verification = report.verification
    if (!verification) return refuse("verification", "the verification is missing: run the failing command again after your last edit and give it")
    const lastEdit = edits.at(-1)!.seq
    const verified = lastRun(steps, verification.command)
    if (!verified) return refuse("verification", `\`${verification.command}\` did not run in this session`)
    if (verified.seq < lastEdit) return refuse("verification", `\`${verification.command}\` last ran before your last edit: run it again now`)
    if (verified.exit !== 0) return refuse("verification", `\`${verification.command}\` still fails (exit ${verified.exit ?? "unknown"}) after your last edit`)
    const sameAsRepro = norm(verification.command) === norm(repro.command)
    const matchesFailure = failure && (failure.commands.length > 0 || failure.names.length > 0) ? Evidence.reproduces(verification.command, failure, root) : false
    if (!sameAsRepro && !matchesFailure)
      return refuse("verification", `\`${verification.command}\` is not the command that failed (\`${repro.command}\`): verify with the failing command`)
    return { ok: true, route: "gates" }
  }

  /** The run of `command` before the first edit that failed (the last such), else its last run there. */
  function lastRunBefore(steps: readonly Step[], command: string, before: number | undefined): Extract<Step, { kind: "command" }> | undefined {
    const earlier = before === undefined ? steps : steps.filter((s) => s.seq < before)
    const failed = earlier.filter((s) => s.kind !== "command" || s.exit !== 0)
    return lastRun(failed, command) ?? lastRun(earlier, command)
  }

  /** The report and the record, for the task's evidence: each step with what it was checked against. */
  export function evidence(sessionID: string, report: DebugReport | undefined, verdict: Verdict): string {
    return JSON.stringify({ sessionID, report: report ?? null, verdict, steps: of(sessionID) }, null, 2) + "\n"
  }
}
