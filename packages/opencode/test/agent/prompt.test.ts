import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { Language, loadPrompt, Prompt, Roles } from "../../src/agent"

const scratch = mkdtempSync(join(tmpdir(), "air-prompts-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("the role prompts", () => {
  it("name the task kinds from the schema: the Architect's prompt and air_plan's description list every kind the plan accepts", async () => {
    const { TASK_KINDS } = await import("../../src/scheduler/core/task.schema")
    const { readFileSync: read } = await import("node:fs")
    const plan = Prompt.withVocabulary(read(new URL("../../src/tool/descriptions/air_plan.txt", import.meta.url), "utf8"))
    for (const text of [loadPrompt("architect", "en"), plan]) expect(text).toContain(`(${TASK_KINDS.join(", ")})`)
    expect(TASK_KINDS).toEqual(expect.arrayContaining(["ui", "service"]))
  })

  it("live in prompts/ at the repository root, found from the module", () => {
    expect(Prompt.dir.replace(/\\/g, "/")).toMatch(/\/prompts\/?$/)
    expect(Prompt.file("main")).toBe(join(Prompt.dir, "main.md"))
  })

  for (const role of Roles.names) {
    it(`${role}: role line first, seven parts in order, the placeholder under Language`, () => {
      const raw = Prompt.raw(role)
      expect(raw.split("\n")[0]).toBe(`AirCoding role: ${role}`)
      expect(Prompt.problems(role, raw)).toEqual([])
      const language = raw.slice(raw.indexOf("## Language"), raw.indexOf("## When blocked"))
      expect(language).toContain("{{language_rule}}")
      for (const part of Prompt.PARTS) expect(raw).toContain(`\n${part}\n`)
    })

    it(`${role}: loads with the language rule filled in`, () => {
      for (const setting of ["auto", "zh-CN", "en"]) {
        const text = loadPrompt(role, setting)
        expect(text).not.toContain("{{")
        expect(text).toContain(Language.rule(setting))
        expect(Prompt.problems(role, text, { filled: true })).toEqual([])
      }
      expect(loadPrompt(role, "zh-CN")).toContain("Simplified Chinese")
    })

    it(`${role}: names every tool of its row that is its own, and no other role's`, () => {
      const raw = Prompt.raw(role)
      for (const tool of Roles.COORDINATOR[role]) expect([role, tool, raw.includes(tool)]).toEqual([role, tool, true])
      const others = Roles.AIR_TOOLS.filter((t) => !Roles.table[role].tools.includes(t))
      for (const tool of others) expect([role, tool, new RegExp(`\\b${tool}\\b`).test(raw)]).toEqual([role, tool, false])
      for (const dir of [".air/shared/plan/", ".air/local/evidence/"]) expect(raw).toContain(dir)
    })
  }

  it("say what each role must", () => {
    const main = Prompt.raw("main")
    expect(main).toMatch(/only contact/)
    expect(main).toMatch(/never do technical work/i)
    expect(main).toMatch(/air_listen` again/)
    expect(main).toMatch(/ambiguous/)
    expect(main).toMatch(/budget/)
    const architect = Prompt.raw("architect")
    expect(architect).toMatch(/discuss → propose → wait for confirmation → plan/)
    for (const verb of ["清理", "优化", "整理", "更新", "clean up", "optimise", "tidy", "update"]) expect(architect).toContain(verb)
    expect(architect).toMatch(/keep-constraints/)
    const executor = Prompt.raw("executor")
    expect(executor).toMatch(/git commit/)
    expect(executor).toMatch(/"temporary"/)
    expect(executor).toMatch(/"fallback"/)
    expect(executor).toMatch(/blocked/)
    const reviewer = Prompt.raw("reviewer")
    expect(reviewer).toMatch(/Code to design[\s\S]*Static analysis[\s\S]*Tests/)
    expect(reviewer).toMatch(/"Tests pass" alone is never a pass/)
    const debuggerPrompt = Prompt.raw("debugger")
    expect(debuggerPrompt).toMatch(/Evidence first/)
    expect(debuggerPrompt).toMatch(/one hypothesis at a time/i)
    expect(Prompt.raw("scheduler")).toMatch(/air_decide/)
  })

  it("reports a broken prompt clearly", () => {
    writeFileSync(join(scratch, "main.md"), "You are main.\n## Who I am\n")
    const problems = Prompt.problems("main", readFileSync(join(scratch, "main.md"), "utf8"))
    expect(problems[0]).toMatch(/first line must be "AirCoding role: main"/)
    expect(problems.join("\n")).toMatch(/"## When blocked" is missing/)
    expect(problems.join("\n")).toMatch(/placeholder/)
    expect(() => Prompt.load("executor", "auto", scratch)).toThrow(/prompt of the executor agent is missing/)
    expect(() => Prompt.load("main", "klingon!!", scratch)).toThrow(/language must be "auto" or a language tag/)
  })
})
