import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { TaskGraph } from "../scheduler/core/task.schema"
import { TerminalText } from "./terminal-text"
import { list, t, type Key, type Lang } from "./words"
import { AirPaths } from "../scheduler/core/air-paths"

/**
 * The plan a person confirms, as lines: each task with its kind, phase, dependencies and the files it
 * creates, modifies or deletes, then the decisions (ADRs) by title. The TUI's plan dialog, plan.md and
 * the headless question read the same.
 */
export namespace PlanView {
  export type Line = { text: string; tone: "normal" | "muted" | "accent" }

  /** An ADR as the plan shows it: its id, its title (the file's first heading) and its file, relative to the project. */
  export type Adr = { id: string; title: string; file: string }

  /** The ADRs under .air/shared/plan/adr, in id order. */
  export function adrs(root: string): Adr[] {
    const dir = AirPaths.adrs(root)
    if (!existsSync(dir)) return []
    const names = readdirSync(dir).filter((f) => /^ADR-\d+\.md$/.test(f))
    names.sort((a, b) => Number(a.slice(4, -3)) - Number(b.slice(4, -3)))
    return names.map((name) => {
      const id = name.slice(0, -3)
      let title = ""
      try {
        title = /^# (.+)$/m.exec(readFileSync(join(dir, name), "utf8"))?.[1]?.trim() ?? ""
      } catch {}
      // The heading may already carry the id ("# ADR-1: title").
      return { id, title: title.replace(new RegExp(`^${id}\\b:?\\s*`), ""), file: `${AirPaths.ADRS}/${name}` }
    })
  }

  /** The ADR titles ("ADR-1 Integer arithmetic stays in namespace calc"), in id order. */
  export function adrTitles(root: string): string[] {
    return adrs(root).map(adrTitle)
  }

  export function adrTitle(adr: Pick<Adr, "id" | "title">): string {
    return `${adr.id} ${adr.title}`.trim()
  }

  /** The tasks and decisions in `width` columns; long file lists wrap under their task. */
  export function lines(graph: TaskGraph | null | undefined, adrs: readonly string[], lang: Lang, width = 76): Line[] {
    const out: Line[] = []
    const tasks = graph?.tasks ?? []
    if (tasks.length) out.push({ text: t(lang, "plan.tasks", { count: tasks.length }), tone: "accent" })
    const idWidth = Math.max(0, ...tasks.map((n) => TerminalText.displayWidth(n.id)))
    const indent = " ".repeat(idWidth + 2)
    for (const n of tasks) {
      const facts = [t(lang, `kind.${n.kind}`), t(lang, "plan.phase", { phase: n.phase }), n.deps.length ? t(lang, "plan.after", { ids: list(lang, n.deps) }) : t(lang, "plan.noDeps")].join(" · ")
      out.push({ text: TerminalText.truncate(`${TerminalText.pad(n.id, idWidth)}  ${n.title}`, width), tone: "normal" })
      out.push({ text: TerminalText.truncate(`${indent}${facts}`, width), tone: "muted" })
      for (const action of ["create", "modify", "delete"] as const) {
        const files = n.writeSet.filter((w) => w.action === action).map((w) => (w.region ? `${w.path} (${w.region})` : w.path))
        if (!files.length) continue
        for (const line of TerminalText.wrap(`${t(lang, `plan.write.${action}` as Key)} ${list(lang, files)}`, width - indent.length, "  ")) out.push({ text: indent + line, tone: "muted" })
      }
    }
    if (adrs.length) {
      out.push({ text: t(lang, "plan.adrs"), tone: "accent" })
      for (const adr of adrs) out.push({ text: TerminalText.truncate(`  ${adr}`, width), tone: "normal" })
    }
    return out
  }

  /**
   * plan.md: the summary, then the tasks with their files (when there are any) and the decisions (ADRs),
   * as the dialog shows them; each section under its own heading.
   */
  export function markdown(summary: string, graph: TaskGraph | null | undefined, adrs: readonly string[] = []): string {
    const head = `# Plan\n\n${summary}\n`
    const body = lines(graph, adrs, "en", 100)
    if (!body.length) return head
    return head + "\n" + body.map((l) => (l.tone === "accent" ? `\n## ${l.text}\n` : l.text)).join("\n").trimStart() + "\n"
  }
}
