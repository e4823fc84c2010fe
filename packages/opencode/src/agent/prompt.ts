import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Language } from "./language"
import { Roles } from "./roles"
import { Vocabulary } from "./vocabulary"

/**
 * Role prompts are content: `prompts/<role>.md` at the repository root, with `{{language_rule}}` and the code's
 * vocabulary (`{{gates}}`, `{{task_kinds}}`, … : vocabulary.ts) filled in by code. The directory is found from this module's own location (src/agent/ → ../../../../prompts),
 * so it works wherever the checkout is, under Node and Bun alike.
 */
export namespace Prompt {
  /** The seven parts every prompt has, as headings, in this order. */
  export const PARTS = [
    "## Who I am",
    "## Who dispatched me and where my result goes",
    "## Whom I may dispatch",
    "## Shared files and formats",
    "## Result format",
    "## Language",
    "## When blocked",
  ] as const

  export const PLACEHOLDER = "{{language_rule}}"

  /** A model-facing text (a prompt, a tool's description) with the code's vocabulary filled in (vocabulary.ts). */
  export function withVocabulary(text: string): string {
    return Vocabulary.fill(text)
  }

  /** The first line of every prompt: the scripted test model recognises agents by it. */
  export function roleLine(role: string): string {
    return `AirCoding role: ${role}`
  }

  export const dir: string = fileURLToPath(new URL("../../../../prompts/", import.meta.url))

  /** The prompt file of a role: its row's `prompt` under `from` (`<role>.md` for a name with no row). */
  export function file(role: string, from: string = dir, roles: Roles.Table = Roles.table): string {
    return join(from, Roles.rowOf(role, roles)?.prompt ?? `${role}.md`)
  }

  /** What is wrong with a prompt's text (missing role line, parts, placeholder), or [] when nothing. */
  export function problems(role: string, text: string, opts: { filled?: boolean } = {}): string[] {
    const out: string[] = []
    const first = text.split(/\r?\n/, 1)[0]?.trim()
    if (first !== roleLine(role)) out.push(`the first line must be "${roleLine(role)}", not "${first ?? ""}"`)
    let at = -1
    for (const part of PARTS) {
      const i = text.search(new RegExp(`^${part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*$`, "m"))
      if (i < 0) out.push(`the heading "${part}" is missing`)
      else if (i < at) out.push(`the heading "${part}" is out of order`)
      else at = i
    }
    if (opts.filled) {
      if (text.includes("{{")) out.push(`a placeholder is left unfilled: ${text.match(/\{\{[^}]*\}\}/)?.[0]}`)
    } else {
      if (!text.includes(PLACEHOLDER)) out.push(`the placeholder ${PLACEHOLDER} is missing (under "## Language")`)
      for (const placeholder of Vocabulary.unknown(text, [PLACEHOLDER])) out.push(`the placeholder ${placeholder} is unknown (vocabulary.ts lists them)`)
      for (const list of Vocabulary.handWrittenGateLists(text)) out.push(`the gates are listed by hand ("${list}"): say {{gates}} or {{debugger_gates}}`)
      for (const list of Vocabulary.handWrittenKindLists(text)) out.push(`the task kinds are listed by hand ("${list}"): say {{task_kinds}}`)
      for (const list of Vocabulary.handWrittenChecklistLists(text)) out.push(`the checklist's rows are listed by hand ("${list}"): say {{checklist_rows}}`)
    }
    return out
  }

  /** The raw prompt file. Throws a clear error when it is missing. */
  export function raw(role: string, from: string = dir, roles: Roles.Table = Roles.table): string {
    const path = file(role, from, roles)
    if (!existsSync(path)) throw new Error(`AirCoding: the prompt of the ${role} agent is missing: ${path}`)
    return readFileSync(path, "utf8")
  }

  /** The prompt for a role with the language rule filled in. */
  export function load(role: string, language: Language.Setting = "auto", from: string = dir, roles: Roles.Table = Roles.table): string {
    return withVocabulary(raw(role, from, roles)).replaceAll(PLACEHOLDER, Language.rule(Language.parse(language)))
  }
}

/** `loadPrompt(role, language)`: the prompt of a role, language rule filled in. */
export const loadPrompt = Prompt.load
