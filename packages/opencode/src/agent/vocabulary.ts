import { REGISTRY, requiredEvidence } from "../scheduler/runtime/gates/registry"
import type { Gate } from "../scheduler/runtime/gates/gate"
import { TASK_KINDS } from "../scheduler/core/task.schema"
import { CHECKLIST_ASKS, CHECKLIST_LABELS, CHECKLIST_ROWS } from "../scheduler/core/report.schema"

/**
 * The code's vocabulary as the models read it: every model-facing text (prompts/<role>.md, the tools' descriptions,
 * the messages the runtime writes to sessions) that names the gates, the task kinds or the evidence gets the list
 * from here, so it is rendered from the registries (gates/registry.ts, core/task.schema.ts) and cannot drift from
 * them. A prompt says `{{gates}}` where it would list them; a placeholder that is not in `PLACEHOLDERS` is a
 * problem of the prompt (`unknown`), never left for the model to read.
 */
export namespace Vocabulary {
  /** The gates by id, in the order they run. */
  export function gates(registry: readonly Gate[] = REGISTRY): string {
    return registry.map((gate) => gate.id).join(", ")
  }

  /** The gates whose failure the Debugger is sent to repair (their route), in the order they run. */
  export function debuggerGates(registry: readonly Gate[] = REGISTRY): string {
    return registry.filter((gate) => gate.route.startsWith("debugger")).map((gate) => gate.id).join(", ")
  }

  /** The files the gates write in a task's evidence directory (each gate's `logs`), then report.json. */
  export function gateLogs(registry: readonly Gate[] = REGISTRY): string {
    return [...new Set([...registry.flatMap((gate) => gate.logs ?? []), "report.json"])].join(", ")
  }

  /** What evidence each task kind must have before review (`requiredEvidence`): "code: diff, build, …; docs: diff". */
  export function evidenceByKind(registry: readonly Gate[] = REGISTRY): string {
    return TASK_KINDS.map((kind) => `${kind}: ${requiredEvidence(kind, registry).join(", ") || "none"}`).join("; ")
  }

  export function taskKinds(): string {
    return TASK_KINDS.join(", ")
  }

  /** The review checklist's rows, keys and what each asks, in the order the schema has them: "`lifetimes` (ownership, …); …". */
  export function checklistRows(): string {
    return CHECKLIST_ROWS.map((row) => `\`${row}\` (${CHECKLIST_ASKS[row]})`).join("; ")
  }

  /** The checklist's rows as people read them: "lifetimes and ownership; raw pointers; …". */
  export function checklistLabels(): string {
    return CHECKLIST_ROWS.map((row) => CHECKLIST_LABELS[row]).join("; ")
  }

  /** Every placeholder a model-facing text may hold, and what fills it. `{{language_rule}}` is the prompt's (prompt.ts). */
  export const PLACEHOLDERS = {
    "{{task_kinds}}": taskKinds,
    "{{gates}}": gates,
    "{{debugger_gates}}": debuggerGates,
    "{{gate_logs}}": gateLogs,
    "{{evidence_by_kind}}": evidenceByKind,
    "{{checklist_rows}}": checklistRows,
  } as const satisfies Record<string, (registry?: readonly Gate[]) => string>

  /** `text` with every placeholder of `PLACEHOLDERS` filled from `registry` (default: the shipped gates). */
  export function fill(text: string, registry: readonly Gate[] = REGISTRY): string {
    let out = text
    for (const [placeholder, render] of Object.entries(PLACEHOLDERS)) if (out.includes(placeholder)) out = out.replaceAll(placeholder, render(registry))
    return out
  }

  /** The placeholders in `text` that nothing fills (`known`: also filled elsewhere, like the language rule). */
  export function unknown(text: string, known: readonly string[] = []): string[] {
    return [...new Set(text.match(/\{\{[^}]*\}\}/g) ?? [])].filter((p) => !Object.hasOwn(PLACEHOLDERS, p) && !known.includes(p))
  }

  /**
   * Where a text lists gates by hand instead of by placeholder: a run of at least three gate ids, or of words the
   * models read for them ("tests", "cppcheck"), separated by commas, "and" or "or". Such a list drifts the day a gate
   * is added; a text that must name one gate (the ui-capture gate's capture) still may.
   */
  export function handWrittenGateLists(text: string, registry: readonly Gate[] = REGISTRY): string[] {
    const names = [...registry.map((gate) => gate.id), "tests", "cppcheck", "non-empty diff"].sort((a, b) => b.length - a.length)
    const name = `(?:${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`
    // "build, test and analysis commands" names toolchain.json's command lines, not gates.
    const list = new RegExp(`\\b${name}(?:\\s*(?:,|/|\\band\\b|\\bor\\b|,\\s*and|,\\s*or)\\s*(?:the\\s+)?${name}\\b){2,}(?!\\s+(?:commands?|lines)\\b)`, "gi")
    return text.match(list) ?? []
  }

  /** Where a text lists task kinds by hand: a run of at least three kinds ("code, test or docs"); say {{task_kinds}}. */
  export function handWrittenKindLists(text: string): string[] {
    const name = `(?:${TASK_KINDS.join("|")})`
    return text.match(new RegExp(`\\b${name}(?:\\s*(?:,|\\||/|\\band\\b|\\bor\\b|,\\s*and|,\\s*or)\\s*${name}\\b){2,}`, "g")) ?? []
  }

  /**
   * Where a text lists the review checklist's rows by hand: three or more of its keys (rawPointers, loggingFormat)
   * in one paragraph. Such a list misses the row added next; say {{checklist_rows}}.
   */
  export function handWrittenChecklistLists(text: string): string[] {
    const key = new RegExp(`(?<![A-Za-z])(?:${CHECKLIST_ROWS.join("|")})(?![A-Za-z])`, "g")
    const keys = (paragraph: string) => [...new Set(paragraph.match(key) ?? [])]
    return text
      .split(/\n\s*\n/)
      .map(keys)
      .filter((found) => found.length >= 3)
      .map((found) => found.join(", "))
  }
}
