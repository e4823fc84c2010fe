import { readFileSync } from "node:fs"
import { z } from "zod"
import { Looks } from "../../../agent/looks"
import { ServiceProbe } from "../verify/service-probe.ts"
import type { UiCapture } from "../verify/ui-capture.ts"
import { WindowTree } from "../verify/window-tree.ts"

/**
 * A look's verdict in words for the worker that asked (the tool's output), with the exit code it is recorded with:
 * passed or failed with the reasons, what the window tree or the captured exchange shows, and the evidence files.
 */
export namespace LookText {
  type Said = { text: string; exit?: number }
  type Override = { command?: string; args?: string[]; input?: string }

  /** At most this much of the network summary goes into the answer; the file holds all of it. */
  const SUMMARY_CHARS = 4000
  const TREE_LINES = 12

  const elsewhere = (override: Override) =>
    Object.keys(override).length > 0 ? "\nThis looked at something else than the task's own program: it shows what that does, and reproduces or verifies nothing for the gates." : ""

  export function capture(taskId: string, result: UiCapture.Result, override: Override): Said {
    const program = [result.program.command, ...result.program.args].join(" ")
    const files = [
      result.evidence.screenshot && `screenshot ${result.evidence.screenshot}`,
      result.evidence.screen && `whole display ${result.evidence.screen}`,
      `window tree ${result.evidence.windows}`,
      `program output ${result.evidence.log}`,
    ].filter(Boolean)
    if (result.outcome === "missing-tool" || result.outcome === "failed-to-start" || result.outcome === "aborted") {
      const why = result.outcome === "missing-tool" ? `a tool is missing: ${result.missingTool?.tools.join(", ")}; install: ${result.missingTool?.install}` : result.failures.join("; ") || result.outcome
      return { text: `air_capture of task ${taskId}: no verdict on the program: ${why}.\nEvidence: ${files.join(", ")}` }
    }
    const head = result.ok
      ? `air_capture of task ${taskId}: PASSED: the window was shown and every check passed.`
      : `air_capture of task ${taskId}: FAILED:\n${result.failures.map((f) => `  - ${f}`).join("\n")}`
    const ended = result.program.stoppedByCapture ? "still running when the capture stopped it" : `exited with ${result.program.exitCode ?? "an unknown status"}`
    const lines = [head, `Program: ${program} (${ended}).`, `Windows shown: ${result.windowsShown}${result.window ? `; checked: ${describeWindow(result.window)}` : ""}.`]
    const tree = windowTree(result.evidence.windows)
    if (tree.length) lines.push("Window tree (top-level windows):", ...tree)
    if (result.notes.length) lines.push(`Notes: ${result.notes.join("; ")}`)
    if (result.program.stderr.trim()) lines.push(`Its stderr (last lines): ${result.program.stderr.trim().split("\n").slice(-5).join(" | ")}`)
    lines.push(`Evidence: ${files.join(", ")}`)
    return { text: lines.join("\n") + elsewhere(override), exit: result.ok ? Looks.EXIT.passed : Looks.EXIT.failed }
  }

  export function probe(taskId: string, result: ServiceProbe.Result, override: Override): Said {
    const described = `air_probe of task ${taskId}: ${result.verdict.ok ? "PASSED" : "FAILED"}.\n${ServiceProbe.describe(result)}`
    if (result.verdict.cause === "environment") return { text: `air_probe of task ${taskId}: no verdict on the service: ${result.verdict.reason}.${result.verdict.install ? ` Install: ${result.verdict.install}` : ""}` }
    const summary = readText(result.files.summaryText)
    const network = summary ? `\nNetwork summary (${result.files.summaryText}):\n${summary.length > SUMMARY_CHARS ? `${summary.slice(0, SUMMARY_CHARS)}\n… (cut; the file holds all of it)` : summary.trimEnd()}` : ""
    return { text: described + network + elsewhere(override), exit: result.verdict.ok ? Looks.EXIT.passed : Looks.EXIT.failed }
  }

  function describeWindow(w: WindowTree.Window): string {
    return `${w.id} ${w.title === null ? "(no title)" : JSON.stringify(w.title)} ${w.width}x${w.height} at (${w.x}, ${w.y})`
  }

  const WindowsFile = z.object({ windows: z.array(WindowTree.Window) }).passthrough()

  /** windows.json's top-level windows, one line each (mapped or not, with how many children). */
  function windowTree(file: string): string[] {
    let parsed: z.infer<typeof WindowsFile>
    try {
      const read = WindowsFile.safeParse(JSON.parse(readFileSync(file, "utf8")))
      if (!read.success) return []
      parsed = read.data
    } catch {
      return []
    }
    const lines = parsed.windows.map((w) => `  - ${describeWindow(w)}${w.mapped === false ? ", not mapped" : ""}${w.children.length ? `, ${w.children.length} child window(s)` : ""}`)
    return lines.length > TREE_LINES ? [...lines.slice(0, TREE_LINES), `  … ${lines.length - TREE_LINES} more in the file`] : lines
  }

  function readText(file: string | undefined): string {
    if (!file) return ""
    try {
      return readFileSync(file, "utf8")
    } catch {
      return ""
    }
  }
}
