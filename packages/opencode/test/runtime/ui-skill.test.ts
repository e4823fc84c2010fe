import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, test } from "vitest"
import { ContextPack } from "../../src/scheduler/runtime/sessions/context-pack"
import { UiSkill } from "../../src/scheduler/runtime/sessions/ui-skill"
import { WorkerSession } from "../../src/scheduler/runtime/sessions/worker-session"
import { task } from "../scheduler/fixtures"

/** The UI design skill (issue 40 item 4): in every ui task's first messages, from the shipped file or the project's own; none in a code task's. */
const roots: string[] = []
const project = () => {
  const root = mkdtempSync(join(tmpdir(), "air-skill-"))
  roots.push(root)
  return root
}
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })))

const worktree = { path: "/repo/.air/local/worktrees/T-1", branch: "air/T-1" }
const ui = task("T-1", { kind: "ui", writeSet: [{ path: "src/window.cpp", action: "modify" }], ui: { command: "build/app" } })
const code = task("T-1", { writeSet: [{ path: "src/calc.cpp", action: "modify" }] })
const input = (root: string, t = ui) => ({ root, task: t, rt: undefined, worktree, attempt: 1, earlier: [] })

describe("the UI design skill in the context packs", () => {
  test("a ui task's Executor, Debugger and Reviewer are told the shipped skill; the Reviewer's ui rows refer to it", () => {
    const root = project()
    for (const prompt of [ContextPack.WORKER_PACKS.executor(input(root)), ContextPack.WORKER_PACKS.debugger(input(root)), ContextPack.reviewer(root, ui, worktree.path)]) {
      expect(prompt).toContain("# UI design skill")
      expect(prompt).toContain("## Keyboard access")
      expect(prompt).toContain("## QML conventions")
    }
    const review = ContextPack.reviewer(root, ui, worktree.path)
    for (const section of UiSkill.sections(root)) expect(review).toContain(`\n- UI skill: ${section}\n`)
    expect(UiSkill.sections(root)).toEqual(["Layout", "Spacing and alignment", "Colour and contrast", "Typography", "States and feedback", "Keyboard access", "Qt Widgets conventions", "QML conventions"])
  })

  test("a code task's packs carry no skill", () => {
    const root = project()
    for (const prompt of [ContextPack.WORKER_PACKS.executor(input(root, code)), ContextPack.WORKER_PACKS.debugger(input(root, code)), ContextPack.reviewer(root, code, worktree.path)])
      expect(prompt).not.toContain("UI design skill")
  })

  test("the Architect is told the skill when the requirement asks for ui work, not otherwise", () => {
    const root = project()
    expect(ContextPack.architect("Add a settings dialog with a colour picker.", true, root)).toContain("# UI design skill")
    expect(ContextPack.architect("给计算器加一个窗口", true, root)).toContain("# UI design skill")
    expect(ContextPack.architect("Add calc::mul with overflow checks.", true, root)).not.toContain("UI design skill")
  })

  test("the user's language picks the Chinese skill; the project replaces the skill and adds its own ui-*.md", () => {
    const root = project()
    expect(UiSkill.load(root, "zh-CN")[0]!.text).toContain("# 界面设计技能")
    mkdirSync(join(root, UiSkill.PROJECT_DIR), { recursive: true })
    writeFileSync(join(root, UiSkill.PROJECT_DIR, "ui-design.md"), "# House UI\n\nOur own design system.\n")
    writeFileSync(join(root, UiSkill.PROJECT_DIR, "ui-icons.md"), "# Icons\n\nMonochrome, 24 px.\n")
    const prompt = ContextPack.WORKER_PACKS.executor(input(root))
    expect(prompt).toContain("Our own design system.")
    expect(prompt).toContain("Monochrome, 24 px.")
    expect(prompt).not.toContain("## Keyboard access")
    // A skill without sections of its own is one section, named by its title: the review answers each.
    expect(UiSkill.sections(root, "en")).toEqual(["House UI", "Icons"])
    expect(ContextPack.reviewer(root, ui, worktree.path)).toContain("- UI skill: House UI\n- UI skill: Icons")
  })

  test("without any skill file a ui task's session does not start, saying where it looked; a code task's starts", () => {
    const root = project()
    const shipped = join(root, "no-skills-here")
    expect(() => UiSkill.load(root, "en", shipped)).toThrow(UiSkill.Missing)
    expect(() => UiSkill.load(root, "en", shipped)).toThrow(/the UI design skill is missing \(looked for .*ui-design\.md.*\); a ui task's session does not start without it/)
    // The worker session's spec reads the shipped packs; the packs read the shipped skill directory: an empty file there counts as none.
    mkdirSync(join(root, UiSkill.PROJECT_DIR), { recursive: true })
    writeFileSync(join(root, UiSkill.PROJECT_DIR, "ui-design.md"), "  \n")
    expect(() => UiSkill.load(root, "en", shipped)).toThrow(UiSkill.Missing)
    expect(WorkerSession.spec("executor", input(root, code)).prompt).toContain("Task T-1")
  })
})
