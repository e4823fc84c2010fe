import { existsSync, readdirSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import { Paths } from "../../../engine/paths"
import { resolveLang, type Lang } from "../../../text/words"
import { AirPaths } from "../../core/air-paths"

/**
 * The UI design skill every ui task's sessions are told (issue 40): put into the first message by code, so no
 * model decides whether to load it. The engine's own skills (SKILL.md, loaded by its skill tool) are on demand:
 * the model would choose. The project replaces the shipped skill with `.air/shared/skills/ui-design.md` (or its
 * `.zh-CN.md`) and adds its own `ui-*.md` beside it. No skill at all is an error: the session does not start.
 */
export namespace UiSkill {
  export const NAME = "ui-design"
  export const PROJECT_DIR = AirPaths.SKILLS

  export class Missing extends Error {
    readonly _tag = "UiSkillMissing"
    constructor(readonly looked: readonly string[]) {
      super(`AirCoding: the UI design skill is missing (looked for ${looked.join(", ")}); a ui task's session does not start without it. Restore skills/${NAME}.md in AirCoding's install or put the project's own in ${PROJECT_DIR}/${NAME}.md`)
      this.name = "UiSkillMissing"
    }
  }

  export interface Skill {
    /** Where it was read from, for the message and people. */
    file: string
    text: string
  }

  /** The candidates in order: the project's, then the shipped one; the user's language before English. */
  function candidates(root: string, lang: Lang, shipped: string): string[] {
    const names = lang === "en" ? [`${NAME}.md`] : [`${NAME}.${lang}.md`, `${NAME}.md`]
    return [...names.map((n) => join(root, PROJECT_DIR, n)), ...names.map((n) => join(shipped, n))]
  }

  /** The skill and the project's additions (`ui-*.md` in .air/shared/skills/). Throws Missing when there is none. */
  export function load(root: string, lang: Lang = resolveLang(root), shipped: string = Paths.skills): Skill[] {
    const looked = candidates(root, lang, shipped)
    const file = looked.find((f) => existsSync(f) && readFileSync(f, "utf8").trim().length > 0)
    if (!file) throw new Missing(looked)
    const skills: Skill[] = [{ file, text: readFileSync(file, "utf8").trim() }]
    const dir = join(root, PROJECT_DIR)
    const extra = existsSync(dir) ? readdirSync(dir).filter((n) => /^ui-.+\.md$/.test(n) && !n.startsWith(`${NAME}.`)).sort() : []
    for (const name of extra) {
      const text = readFileSync(join(dir, name), "utf8").trim()
      if (text) skills.push({ file: join(dir, name), text })
    }
    return skills
  }

  /** The lines a ui task's pack carries: each skill with where it came from. */
  export function lines(root: string, lang?: Lang, shipped?: string): string[] {
    return load(root, lang, shipped).flatMap((s) => ["", `UI design skill (${s.file}); follow it for every window, widget, layout and colour you touch:`, s.text])
  }

  /**
   * The skill's sections (its `## ` headings, then those of the project's additions), in order: a ui task's review
   * answers each with a row (core/review-rules.ts refuses one without). A skill file with no `## ` heading is one
   * section, named by its title (or its file). Throws Missing like `load`.
   */
  export function sections(root: string, lang?: Lang, shipped?: string): string[] {
    return sectionsOf(load(root, lang, shipped))
  }

  export function sectionsOf(skills: readonly Skill[]): string[] {
    return [...new Set(skills.flatMap(sectionsOfOne))]
  }

  function sectionsOfOne(skill: Skill): string[] {
    const headings = (level: string) => [...skill.text.matchAll(new RegExp(`^${level}[ \\t]+(.+?)[ \\t#]*$`, "gm"))].map((m) => m[1]!)
    const own = headings("##")
    return own.length > 0 ? own : [headings("#")[0] ?? basename(skill.file, ".md")]
  }

  /** Whether a requirement asks for ui work, so the Architect plans it with the skill at hand. */
  export function asksForUi(requirement: string): boolean {
    return /\b(ui|gui|window|dialog|widget|button|qml|qt ?widgets|screen|form|layout)s?\b|界面|窗口|对话框|按钮|控件/i.test(requirement)
  }
}
