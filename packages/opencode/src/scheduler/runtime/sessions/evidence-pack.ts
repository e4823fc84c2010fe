import { relative } from "node:path"
import type { TaskNode } from "../../core/task.schema"
import { ProgramEvidence } from "../verify/program-evidence"
import { RunData } from "../store/run-data"
import { UiSpec } from "../verify/ui-spec"
import type { ModelInput } from "./model-input"

/**
 * What the Reviewer and the Architect's final review are told of a program's evidence (issue 37 item 4): for a ui
 * task the window tree, the checks and their verdict, the changed share and the files, always as text, and the
 * screenshots as pictures when the model takes them; for a service task the probe's verdict, the network summary
 * and the probe's output. A task of another kind gets none of it. Read from the gate run that passed (the state's
 * `gateRuns`), through runtime/verify/program-evidence.ts, which the views read too.
 */
export namespace EvidencePack {
  /** The final review sees at most this many pictures (each ui task's after picture, then their before ones). */
  export const FINAL_IMAGES = 4

  export type Pack = { lines: string[]; images: ModelInput.Image[] }

  const isProgram = (task: TaskNode) => task.kind === "ui" || task.kind === "service"

  /** The Reviewer's section on `task`'s program evidence; `attach`: its model takes images, so they go with the prompt. */
  export function forReview(root: string, task: TaskNode, gateRun: number, attach: boolean): Pack {
    if (!isProgram(task)) return { lines: [], images: [] }
    const evidence = ProgramEvidence.read(root, task.id, gateRun)
    const gates = RunData.lastGateReport(root, task.id, gateRun)?.gates ?? []
    const lines = ["", `Program evidence (${task.kind} task; gathered by the gates in code, gate run ${gateRun}):`]
    if (!evidence) return { lines: [...lines, `- none on disk under ${rel(root, ProgramEvidence.attemptDir(root, task.id, gateRun))}: say so in the review.`], images: [] }
    const images = task.kind === "ui" ? pictures(root, task.id, evidence) : []
    if (evidence.ui) lines.push(...uiLines(root, task, evidence.ui, gates.find((g) => g.gate === "ui-capture")))
    if (evidence.service) lines.push(...serviceLines(root, evidence.service, gates.find((g) => g.gate === "service-probe")))
    if (images.length === 0) {
      if (task.kind === "ui") lines.push("- No screenshot was taken: judge from the window tree and the gate's verdict above.")
    } else if (attach) lines.push(`- The screenshots are attached to this message as images, in this order: ${images.map((i, n) => `${n + 1}. ${i.label}`).join("; ")}. Compare them with what a person should see (Done when).`)
    else lines.push("- Your model does not take images: the screenshots are the files named above; judge from the window tree, the checks and the changed share.")
    return { lines, images: attach ? images : [] }
  }

  /**
   * The final review's section: every merged ui and service task's evidence, a few lines each, and up to
   * FINAL_IMAGES pictures when `attach`. `gateRunOf` gives each task's gate run that passed.
   */
  export function forFinalReview(root: string, tasks: readonly TaskNode[], gateRunOf: (taskId: string) => number, attach: boolean): Pack {
    const programs = tasks.filter(isProgram)
    if (programs.length === 0) return { lines: [], images: [] }
    const lines = ["", "Captures of the run (every ui and service task's evidence, gathered by the gates in code):"]
    const after: ModelInput.Image[] = []
    const before: ModelInput.Image[] = []
    for (const task of programs) {
      const run = gateRunOf(task.id)
      const evidence = ProgramEvidence.read(root, task.id, run)
      const gates = RunData.lastGateReport(root, task.id, run)?.gates ?? []
      lines.push(`- ${task.id} (${task.kind}): ${task.title}`)
      if (!evidence) {
        lines.push(`  no evidence on disk under ${rel(root, ProgramEvidence.attemptDir(root, task.id, run))}`)
        continue
      }
      if (evidence.ui) {
        const gate = gates.find((g) => g.gate === "ui-capture")
        if (gate?.summary) lines.push(`  verdict: ${gate.summary}`)
        lines.push(`  windows: ${windowsText(evidence.ui.windows)}; ${changedText(evidence.ui)}`)
        lines.push(`  files: ${filesText(root, evidence.ui.files)}`)
        const [a, b] = pictures(root, task.id, evidence)
        if (a) after.push(a)
        if (b) before.push(b)
      }
      if (evidence.service) {
        const gate = gates.find((g) => g.gate === "service-probe")
        lines.push(`  verdict: ${gate?.summary ?? evidence.service.verdict?.reason ?? "unknown"}`)
        const network = connections(evidence.service.summary)
        if (network.length) lines.push("  network:", ...network.map((l) => `    ${l}`))
        lines.push(`  files: ${filesText(root, evidence.service.files)}`)
      }
    }
    const images = attach ? [...after, ...before].slice(0, FINAL_IMAGES) : []
    const shots = after.length + before.length
    if (images.length) lines.push(`The screenshots attached as images, in this order: ${images.map((i, n) => `${n + 1}. ${i.label}`).join("; ")}${shots > images.length ? ` (${shots - images.length} more are the files named above)` : ""}.`)
    else if (shots) lines.push("The screenshots are the files named above (not attached: your model does not take images).")
    return { lines, images }
  }

  /** After, then before: the pictures of a ui task's capture that exist. */
  function pictures(root: string, taskId: string, e: ProgramEvidence.Evidence): ModelInput.Image[] {
    const file = (kind: ProgramEvidence.FileKind) => e.ui?.files.find((f) => f.kind === kind)
    const out: ModelInput.Image[] = []
    const after = file("screenshot")
    const before = file("before")
    if (after) out.push({ path: after.path, label: `${taskId} after: the task's build (${rel(root, after.path)})` })
    if (before) out.push({ path: before.path, label: `${taskId} before: the base${e.ui?.base ? ` ${e.ui.base.slice(0, 12)}` : ""} (${rel(root, before.path)})` })
    return out
  }

  function uiLines(root: string, task: TaskNode, ui: ProgramEvidence.Ui, gate: RunData.GateLine | undefined): string[] {
    return [
      `- Checks judged in code: ${checksText(task)}`,
      `- The ui-capture gate's verdict: ${gate ? `${gate.passed ? "passed" : "failed"}: ${gate.summary ?? ""}` : "not in the gate report"}`,
      `- Window tree (mapped top-level windows): ${windowsText(ui.windows)}`,
      `- ${changedText(ui)}`,
      `- Files: ${filesText(root, ui.files)}`,
    ]
  }

  function serviceLines(root: string, service: ProgramEvidence.Service, gate: RunData.GateLine | undefined): string[] {
    const lines = [`- The service-probe gate's verdict: ${gate ? `${gate.passed ? "passed" : "failed"}: ${gate.summary ?? ""}` : (service.verdict?.reason ?? "not in the gate report")}`]
    if (service.summary.length) lines.push("- Network summary (what went over the service's loopback):", ...service.summary.map((l) => `    ${l}`))
    if (service.probeLog) lines.push("- The probe's run (probe/probe.log):", ...service.probeLog.trimEnd().split("\n").map((l) => `    ${l}`))
    lines.push(`- Files: ${filesText(root, service.files)}`)
    return lines
  }

  /** The task's own checks, as the gate judged them (its spec's defaults included). */
  function checksText(task: TaskNode): string {
    const parsed = UiSpec.Checks.safeParse((task.ui as { checks?: unknown } | undefined)?.checks ?? {})
    if (!parsed.success) return "(the task's checks could not be read)"
    const c = parsed.data
    const out: string[] = []
    if (c.title !== undefined) out.push(typeof c.title === "string" ? `the title is "${c.title}"` : `the title matches /${c.title.regex}/`)
    if (c.minSize) out.push(`the window is at least ${c.minSize.width}x${c.minSize.height}`)
    if (c.notBlank) out.push(c.blankShare < 1 ? `no one colour covers ${Math.round(c.blankShare * 100)}% of the window` : "the window is not one colour")
    for (const p of c.pixels) out.push(`the pixel at (${p.x}, ${p.y}) is ${p.rgb} (±${p.tolerance})`)
    return out.length ? out.join("; ") : "none beyond a window being shown"
  }

  function windowsText(windows: readonly ProgramEvidence.Window[]): string {
    if (windows.length === 0) return "no window was shown"
    return windows.map((w) => `${w.title === null ? "(untitled)" : JSON.stringify(w.title)} ${w.width}x${w.height} at (${w.x}, ${w.y})`).join(", ")
  }

  function changedText(ui: ProgramEvidence.Ui): string {
    if (ui.changedShare !== null) return `changed from the base${ui.base ? ` ${ui.base.slice(0, 12)}` : ""}: ${(ui.changedShare * 100).toFixed(1)}% of the pixels`
    return ui.note ?? "no before picture"
  }

  function filesText(root: string, files: readonly ProgramEvidence.File[]): string {
    return files.map((f) => `${f.kind} ${rel(root, f.path)}`).join(", ")
  }

  /** The summary's connections and bytes each way (not its header lines), for the final review's few lines. */
  function connections(summary: readonly string[]): string[] {
    const from = summary.findIndex((l) => l.startsWith("connections:"))
    return from < 0 ? summary.slice(0, 12) : summary.slice(from, from + 12)
  }

  function rel(root: string, path: string): string {
    return relative(root, path)
  }
}
