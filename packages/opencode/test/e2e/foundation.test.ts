import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import type { ScriptedModel } from "@aircoding/scripted-model"
import { Roles } from "../../src/agent"
import { Paths, runProcess } from "../../src/engine"
import { aircoding, engineEnv, opencodeRun, scriptedModel, texts, toolUses, writeScenario } from "../support/engine"
import { makeSandbox, type Sandbox } from "../support/sandbox"

/**
 * The foundation, against the real engine: AirCoding loads into opencode, Main answers through an
 * AirCoding tool headless, a plugin-spawned child session runs and returns, and a broken plugin is a
 * loud failure, never a silent plain OpenCode.
 */
let sandbox: Sandbox
let model: ScriptedModel

// The engine of the pin has no `list` or `lsp` tool (lsp is experimental): the rest of the row is offered.
const mainTools = Roles.offered("main", [...Roles.ENGINE_BUILTIN.filter((t) => t !== "lsp"), ...Roles.AIR_TOOLS])

beforeAll(async () => {
  sandbox = makeSandbox()
  model = await scriptedModel(sandbox, {
    name: "foundation",
    scripts: [
      {
        agent: "main",
        match: "^What is the state",
        steps: [
          { tool: "air_status", args: {}, expect: { offeredExactly: mainTools } },
          { text: "AirCoding is ready; no run yet.", expect: { lastToolResultIncludes: ["Waiting for: a requirement"] } },
        ],
      },
      {
        agent: "main",
        match: "^Add a square function",
        steps: [
          { tool: "air_submit", args: { requirement: "Add calc::square." } },
          { tool: "air_listen", args: {}, until: "PLAN PROPOSED" },
          { text: "The Architect proposes a plan; please confirm it." },
        ],
      },
      {
        agent: "main",
        match: "Call air_pause",
        steps: [
          { tool: "air_pause", args: {} },
          { text: "There is no run to pause.", expect: { lastToolResultIncludes: ["Cannot pause"] } },
        ],
      },
      {
        agent: "architect",
        steps: [
          { tool: "air_propose", args: { summary: "One task: T-1 adds calc::square in src/calc.cpp." } },
          { text: "Proposal sent; waiting for the user's confirmation." },
        ],
      },
    ],
  })
})

afterAll(async () => {
  await model?.close()
  sandbox?.cleanup()
})

describe("AirCoding on the pinned engine", () => {
  test("headless `opencode run --agent main` calls an AirCoding tool and ends with the scripted text", async () => {
    const project = sandbox.project("status")
    const out = await opencodeRun(project, engineEnv(sandbox, model), "What is the state of AirCoding here?")
    expect(out.code, out.stderr).toBe(0)
    const uses = toolUses(out.stdout)
    expect(uses.map((u) => u.tool)).toEqual(["air_status"])
    expect(uses[0]!.status).toBe("completed")
    expect(texts(out.stdout)).toContain("AirCoding is ready; no run yet.")
    expect(model.failures()).toEqual([])
  })

  test("a plugin-spawned child session runs as a subagent and its result comes back to Main", async () => {
    const project = sandbox.project("child")
    const out = await opencodeRun(project, engineEnv(sandbox, model), "Add a square function to calc.")
    expect(out.code, out.stderr).toBe(0)
    expect(model.failures()).toEqual([])
    const listen = toolUses(out.stdout).find((u) => u.tool === "air_listen")
    expect(listen?.output).toContain("One task: T-1 adds calc::square")
    const architect = model.requests().filter((r) => r.agent === "architect")
    expect(architect.length).toBe(2)
    // The architect is offered only its row of the whitelist: never bash, edit, write or task.
    for (const tool of ["bash", "edit", "write", "task"]) expect(architect[0]!.offered).not.toContain(tool)
    expect(texts(out.stdout)).toContain("please confirm it")
  })

  test("the TUI command /air-pause reaches Main with its template and runs through the Scheduler", async () => {
    const project = sandbox.project("command")
    const out = await runProcess(Paths.opencodeBinary(), ["run", "--agent", "main", "--format", "json", "--command", "air-pause"], {
      cwd: project,
      env: engineEnv(sandbox, model),
      input: "",
      timeoutMs: 240_000,
    })
    expect(out.code, out.stderr).toBe(0)
    expect(toolUses(out.stdout).map((u) => u.tool)).toEqual(["air_pause"])
    expect(texts(out.stdout)).toContain("There is no run to pause.")
    expect(model.failures()).toEqual([])
  })

  test("a plugin that fails to import stops the launcher with a clear message", async () => {
    const broken = join(sandbox.root, "broken-plugin.ts")
    writeFileSync(broken, 'import "aircoding-no-such-package"\nexport default { id: "broken", server: async () => ({}) }\n')
    const project = sandbox.project("broken")
    const out = await aircoding(["run", project, "--scripted", writeScenario(sandbox, { name: "unused", scripts: [] }, "unused.json")], {
      cwd: project,
      env: { ...sandbox.env, AIRCODING_PLUGIN_ENTRY: broken },
      input: "anything",
    })
    expect(out.code).toBe(1)
    expect(out.stderr).toContain("AirCoding did not load into OpenCode")
    expect(out.stderr).toContain('agent "main" is missing')
    expect(out.stderr).toContain("aircoding-no-such-package")
  })

  test("aircoding doctor reports every check, with the engine, the plugin and a configured model", async () => {
    const project = sandbox.project("doctor")
    const env = { ...sandbox.env, OPENCODE_CONFIG_CONTENT: JSON.stringify({ ...providerBlock(model.url) }) }
    const out = await aircoding(["doctor", project, "--json"], { cwd: project, env })
    const report = JSON.parse(out.stdout)
    const names = report.checks.map((c: { name: string }) => c.name)
    expect(names).toEqual(["engine pin", "engine", "config dirs", "plugin", "model", "bun", "git", "git identity", "cmake", "ctest", "cppcheck", "ccache", "mypy", "pylint", "tsc", "go-vet", "staticcheck", "clippy", "sandbox", "ui capture", "service probe"])
    for (const check of report.checks) expect(check.ok, `${check.name}: ${check.detail}`).toBe(true)
    expect(out.code).toBe(0)
  })

  test("--help explains every command", async () => {
    const project = sandbox.project("help")
    for (const args of [["--help"], ["run", "--help"], ["doctor", "--help"], ["demo", "--help"]]) {
      const out = await aircoding(args, { cwd: project, env: sandbox.env })
      expect(out.code, args.join(" ")).toBe(0)
      expect(out.stdout).toMatch(/Usage:/)
    }
    const bad = await aircoding(["run", "--no-such-flag"], { cwd: project, env: sandbox.env })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/no-such-flag/)
  })
})

function providerBlock(url: string) {
  return {
    provider: { scripted: { npm: "@ai-sdk/openai-compatible", options: { baseURL: url, apiKey: "x" }, models: { scripted: { tool_call: true } } } },
    model: "scripted/scripted",
  }
}
