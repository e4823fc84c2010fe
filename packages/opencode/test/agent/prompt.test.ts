import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { Language, loadPrompt, Permission, Prompt, Roles } from "../../src/agent"
import { Vocabulary } from "../../src/agent/vocabulary"
import type { Gate } from "../../src/scheduler/runtime/gates/gate"
import { GATE_IDS, REGISTRY, requiredEvidence } from "../../src/scheduler/runtime/gates/registry"
import { TASK_KINDS } from "../../src/scheduler/core/task.schema"

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

  it("name the gates, their logs and the evidence by kind from the registry: every shipped gate id is in the loaded texts", () => {
    const executor = loadPrompt("executor", "en")
    expect(executor).toContain(`the gates, in this order: ${GATE_IDS.join(", ")} (`)
    const debuggerPrompt = loadPrompt("debugger", "en")
    const toDebugger = REGISTRY.filter((gate) => gate.route.startsWith("debugger")).map((gate) => gate.id)
    expect(toDebugger).toEqual(expect.arrayContaining(["build", "test", "analysis", "ui-capture", "service-probe"]))
    expect(debuggerPrompt).toContain(`comes to me: ${toDebugger.join(", ")})`)
    for (const log of (REGISTRY as readonly Gate[]).flatMap((gate) => gate.logs ?? [])) for (const text of [executor, debuggerPrompt, loadPrompt("reviewer", "en"), loadPrompt("main", "en")]) expect([log, text.includes(log)]).toEqual([log, true])
    const architect = loadPrompt("architect", "en")
    for (const kind of TASK_KINDS) expect(architect).toContain(`${kind}: ${requiredEvidence(kind).join(", ") || "none"}`)
    expect(architect).toMatch(/ui: [^;]*screenshot/)
    expect(architect).toMatch(/service: [^;]*probe/)
  })

  it("reach the engine filled: the agents the plugin's config hook writes carry the registry's lists", () => {
    const cfg: { agent?: Record<string, unknown>; permission?: unknown; default_agent?: string } = {}
    Permission.apply(cfg, (role) => Prompt.load(role, "en")) // as src/plugin.ts's config hook
    const prompt = (role: string) => (cfg.agent![role] as Permission.AgentConfig).prompt
    expect(prompt("executor")).toContain(GATE_IDS.join(", "))
    expect(prompt("debugger")).toContain(Vocabulary.debuggerGates())
    expect(prompt("architect")).toContain(Vocabulary.evidenceByKind())
    for (const role of Roles.names) expect([role, prompt(role).includes("{{")]).toEqual([role, false])
  })

  it("a gate added to the registry is in the texts the day it is added (a planted gate)", () => {
    const coverage = { id: "coverage", route: "debugger", provides: "coverage", requiredFor: ["code"], logs: ["coverage.log"], run: async () => ({ ran: false, summary: "" }) } as const satisfies Gate
    const registry: readonly Gate[] = [...REGISTRY, coverage]
    const raw = Prompt.raw("executor")
    expect(Vocabulary.fill(raw)).not.toContain("coverage")
    const filled = Vocabulary.fill(raw, registry)
    expect(filled).toContain(`${GATE_IDS.join(", ")}, coverage (`)
    expect(filled).toContain("coverage.log")
    expect(Vocabulary.debuggerGates(registry).split(", ").at(-1)).toBe("coverage")
    expect(Vocabulary.evidenceByKind(registry)).toContain("code: diff, build, test, analysis, coverage;")
  })

  it("refuse a prompt that lists the gates by hand or holds a placeholder nothing fills (a planted drift)", () => {
    const good = Prompt.raw("executor")
    expect(Prompt.problems("executor", good)).toEqual([])
    for (const list of ["commit, non-empty diff, build, tests, cppcheck", "build, test or cppcheck", "build/test/cppcheck", "the diff, the build, the tests and cppcheck"]) {
      const drifted = good.replace("{{gates}}", list)
      expect([list, Prompt.problems("executor", drifted).join("\n")]).toEqual([list, expect.stringMatching(/the gates are listed by hand/)])
    }
    // A text naming one gate, or toolchain.json's command lines, is no list of gates.
    expect(Vocabulary.handWrittenGateLists("runs the ui-capture gate's capture; toolchain.json (build, test and analysis commands)")).toEqual([])
    expect(Prompt.problems("executor", good.replace("{{gates}}", "code, test or docs"))).toEqual(['the task kinds are listed by hand ("code, test or docs"): say {{task_kinds}}'])
    const typo = good.replace("{{gates}}", "{{gate}}")
    expect(Prompt.problems("executor", typo)).toEqual(["the placeholder {{gate}} is unknown (vocabulary.ts lists them)"])
    expect(() => Vocabulary.fill(typo)).not.toThrow()
    expect(Prompt.problems("executor", Vocabulary.fill(typo), { filled: true })).toEqual(["a placeholder is left unfilled: {{gate}}"])
  })

  it("the tools' descriptions and the skills: known placeholders only, no gate listed by hand, nothing left unfilled", () => {
    const descriptions = fileURLToPath(new URL("../../src/tool/descriptions/", import.meta.url))
    const skills = join(Prompt.dir, "..", "skills")
    const files = [...readdirSync(descriptions).map((f) => join(descriptions, f)), ...readdirSync(skills).map((f) => join(skills, f))]
    expect(files.length).toBeGreaterThan(20)
    for (const file of files) {
      const text = readFileSync(file, "utf8")
      expect([file, Vocabulary.unknown(text), Vocabulary.handWrittenGateLists(text), Vocabulary.handWrittenKindLists(text), Vocabulary.handWrittenChecklistLists(text)]).toEqual([file, [], [], [], []])
      expect([file, Prompt.withVocabulary(text).includes("{{")]).toEqual([file, false])
    }
    const report = Prompt.withVocabulary(readFileSync(join(descriptions, "air_report.txt"), "utf8"))
    expect(report).toContain(`(${GATE_IDS.join(", ")})`)
  })

  it("the runtime's messages to sessions (orchestrator, sessions/, coordinator) list no gate and no task kind by hand", () => {
    const src = fileURLToPath(new URL("../../src/", import.meta.url))
    const sessions = join(src, "scheduler/runtime/sessions")
    const files = [join(src, "scheduler/runtime/orchestrator.ts"), join(src, "tool/coordinator.ts"), ...readdirSync(sessions).filter((f) => f.endsWith(".ts")).map((f) => join(sessions, f))]
    for (const file of files) {
      const text = readFileSync(file, "utf8")
      expect([file, Vocabulary.handWrittenGateLists(text), Vocabulary.handWrittenKindLists(text), Vocabulary.handWrittenChecklistLists(text)]).toEqual([file, [], [], []])
    }
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
