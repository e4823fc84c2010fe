import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadScenario, ScenarioError, startScriptedModel } from "../src/index.ts"

const dir = mkdtempSync(join(tmpdir(), "scripted-scenario-"))
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

function problems(input: unknown): string {
  try {
    loadScenario(input)
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError)
    return (e as Error).message
  }
  throw new Error("scenario was accepted")
}

const withStep = (step: object, extra: object = {}) => ({ name: "s", scripts: [{ agent: "a", steps: [step], ...extra }] })

describe("loadScenario", () => {
  it("loads a valid scenario from a file", () => {
    const path = file("ok.json", JSON.stringify(withStep({ tool: "read", args: { filePath: "x" } })))
    expect(loadScenario(path).scripts[0]!.steps[0]).toEqual({ tool: "read", args: { filePath: "x" } })
  })

  it("names the file when it is missing or not JSON", () => {
    expect(problems(join(dir, "missing.json"))).toMatch(/cannot read scenario file .*missing\.json/)
    const bad = file("bad.json", '{ "name": "x", }')
    expect(problems(bad)).toContain(`scenario file ${bad} is not valid JSON`)
  })

  it("names the JSON path and the fix for each problem", () => {
    const message = problems({
      name: "s",
      scripts: [
        { agent: "a", steps: [{ tool: "read" }, {}, { tool: "read", text: "x" }] },
        { agent: "b", steps: [{ tool: "listen", untill: "done" }] },
      ],
    })
    expect(message).toContain("$.scripts[0].steps[1]: a step needs exactly one of")
    expect(message).toContain('$.scripts[0].steps[2]: a step has exactly one of "tool", "tools", "text" or "httpError", this one has "tool" and "text"')
    expect(message).toContain('$.scripts[1].steps[0]: unknown key(s) "untill"')
  })

  it("rejects a missing name, a missing agent and empty steps", () => {
    const message = problems({ scripts: [{ steps: [] }] })
    expect(message).toContain("$.name")
    expect(message).toContain("$.scripts[0].agent")
    expect(message).toContain("$.scripts[0].steps")
  })

  it("rejects invalid regexes with a hint about JSON escaping", () => {
    expect(problems(withStep({ text: "x" }, { match: "Task (T-" }))).toMatch(/\$\.scripts\[0\]\.match: not a valid JavaScript regular expression.*double backslashes/)
    expect(problems(withStep({ tool: "l", untilRegex: "[" }))).toContain("$.scripts[0].steps[0].untilRegex: not a valid")
    expect(problems({ name: "s", agents: { x: { systemMatch: ["ok", "("] } }, scripts: [] })).toContain("$.agents.x.systemMatch[1]")
  })

  it("rejects placeholders without a matching named group", () => {
    const message = problems(withStep({ tool: "write", args: { path: "src/{{idd}}.cpp" } }, { match: "Task (?<id>T-\\d+)" }))
    expect(message).toContain("$.scripts[0].steps[0].args.path: placeholder {{idd}} has no named group (?<idd>...)")
    expect(message).toContain("its groups: id")
  })

  it("rejects misplaced keys: args without tool, until on a text step, wrong types", () => {
    expect(problems(withStep({ text: "x", args: {} }))).toContain("$.scripts[0].steps[0].args")
    expect(problems(withStep({ text: "x", until: "y" }))).toContain("$.scripts[0].steps[0].until")
    expect(problems(withStep({ tool: "x", delayMs: -1 }))).toContain("$.scripts[0].steps[0].delayMs")
    expect(problems(withStep({ tool: "x", expect: { offered: "bash" } }))).toContain("$.scripts[0].steps[0].expect.offered")
  })

  it("makes startScriptedModel refuse a bad scenario before listening", async () => {
    await expect(startScriptedModel({ scenario: { name: "x" } as never })).rejects.toThrow(/\$\.scripts/)
  })
})

describe("loadScenario on badly shaped input", () => {
  it.each([
    ["a scenario that is not an object", 42, "$"],
    ["scripts that are not a list", { name: "s", scripts: "x" }, "$.scripts"],
    ["steps that are not a list", { name: "s", scripts: [{ agent: "a", steps: "x" }] }, "$.scripts[0].steps"],
    ["a recognition that is not an object", { name: "s", agents: { x: 5 }, scripts: [] }, "$.agents.x"],
    ["tools that are not calls", { name: "s", scripts: [{ agent: "a", steps: [{ tools: ["read"] }] }] }, "$.scripts[0].steps[0].tools[0]"],
  ])("reports %s without crashing", (_, input, path) => {
    expect(() => loadScenario(input)).toThrow(`at ${path}:`)
  })
})
